// The stages the benchmarks and the tour compare, and the workloads they
// run. A new stage joins every table by being added to Stages.
#pragma once

#include <tuple>

#include "benchmarks/workloads.h"
#include "stage1_threadpool/api.h"
#include "stage2_global_queue/api.h"
#include "stage3_gmp/api.h"
#include "stage4_syscalls/api.h"
#include "stage5_preemption/api.h"

namespace gmp::bench {

/// Every stage present, in course order.
using Stages =
    std::tuple<stage1::Api, stage2::Api, stage3::Api, stage4::Api,
               stage5::Api>;

/// Every workload of workloads.h.
using Workloads =
    std::tuple<SpawnJoin, YieldPing, ChanPingPong, ChanPingPongBuffered,
               FanOutIn, Imbalanced, SpawnStorm, Skynet, Parked, SelectFanIn,
               SelectPingPong, TimerLoops, TimerChurn>;

/// Calls f.template operator()<T>() for every type T of the tuple Types.
template <class Types, class F>
void for_each_type(F&& f) {
  [&]<class... T>(std::tuple<T...>*) {
    (f.template operator()<T>(), ...);
  }(static_cast<Types*>(nullptr));
}

}  // namespace gmp::bench
