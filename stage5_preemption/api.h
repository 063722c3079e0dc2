/// \file
/// Stage 5 as one type, for code written once for every stage (see
/// common/stage_api.h). The goroutine API is stage 3's, unchanged.
#pragma once

#include <string_view>

#include "common/stage_api.h"
#include "stage4_syscalls/api.h"
#include "stage5_preemption/runtime.h"

namespace gmp::stage5 {

/// Stage 5's runtime with stage 3's objects and free functions.
struct Api : stage4::Api {
  /// The stage's name, for tables and test names.
  static constexpr std::string_view kName = "stage5_preemption";

  using Config = stage5::Config;    ///< see stage5::Config
  using Runtime = stage5::Runtime;  ///< see stage5::Runtime
  using Stats = stage5::Stats;      ///< see stage5::Stats
};

static_assert(StageApi<Api>);

}  // namespace gmp::stage5
