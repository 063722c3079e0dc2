// The stages the benchmarks and the tour compare, and the workloads they
// run. A new stage joins every table by being added to Stages.
#pragma once

#include <cstdlib>
#include <tuple>

#include "benchmarks/workloads.h"
#include "stage1_threadpool/api.h"
#include "stage2_global_queue/api.h"
#include "stage3_gmp/api.h"
#include "stage4_syscalls/api.h"
#include "stage5_preemption/api.h"

namespace gmp::bench {

/// GMP_BENCH_QUICK=1 (./course bench --quick): the big workloads shrink so
/// that the whole suite runs in a couple of minutes (a smoke test).
inline bool quick() {
  static const bool q = std::getenv("GMP_BENCH_QUICK") != nullptr;
  return q;
}

/// Every stage present, in course order.
using Stages =
    std::tuple<stage1::Api, stage2::Api, stage3::Api, stage4::Api,
               stage5::Api>;

/// Every workload of workloads.h.
using Workloads =
    std::tuple<SpawnJoin, YieldPing, ChanPingPong, ChanPingPongBuffered,
               FanOutIn, Imbalanced, SpawnStorm, Skynet, Parked, SelectFanIn,
               SelectPingPong, TimerLoops, TimerChurn, ContextCancelChildren,
               ContextDeepChain>;

/// Calls f.template operator()<T>() for every type T of the tuple Types.
template <class Types, class F>
void for_each_type(F&& f) {
  [&]<class... T>(std::tuple<T...>*) {
    (f.template operator()<T>(), ...);
  }(static_cast<Types*>(nullptr));
}

}  // namespace gmp::bench
