/// \file
/// Stage 4 as one type, for code written once for every stage (see
/// common/stage_api.h). The goroutine API is stage 3's, unchanged; only the
/// runtime (and its configuration and counters) is new.
#pragma once

#include <string_view>

#include "common/stage_api.h"
#include "stage3_gmp/api.h"
#include "stage4_syscalls/runtime.h"

namespace gmp::stage4 {

/// Stage 4's runtime with stage 3's objects and free functions.
struct Api : stage3::Api {
  /// The stage's name, for tables and test names.
  static constexpr std::string_view kName = "stage4_syscalls";

  using Config = stage4::Config;    ///< see stage4::Config
  using Runtime = stage4::Runtime;  ///< see stage4::Runtime
  using Stats = stage4::Stats;      ///< see stage4::Stats
};

static_assert(StageApi<Api>);

}  // namespace gmp::stage4
