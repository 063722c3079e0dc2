/// \file
/// Stage 5's preemption latency workload, shared by the demo and the
/// benchmarks: how long a 1 ms sleep_for waits behind a 100 ms loop on 1 P.
/// Compiled with -finstrument-functions (BUILD): its loop is user code,
/// which asynchronous preemption may stop, and with calls it has safe points
/// for cooperative preemption.
#pragma once

#include <chrono>

#include "stage5_preemption/runtime.h"

namespace gmp::stage5 {

/// Runs the workload on a 1-P stage 5 runtime; returns the milliseconds
/// the sleeper waited (1 ms when nothing delays it). `with_calls`: the loop
/// calls a function (a cooperative safe point) at every step.
double sleeper_behind_loop_ms(Preempt mode, bool with_calls,
                              std::chrono::nanoseconds time_slice);

/// A loop of about `d` on the calling goroutine: with calls, or without
/// (only a clock check every million subtractions).
void busy_loop(std::chrono::nanoseconds d, bool with_calls);

}  // namespace gmp::stage5
