/// \file
/// Stage 2's park and ready (the Scheduler interface of common/scheduler.h).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>

#include "common/runtime_lock.h"
#include "common/park_unlock.h"
#include "common/sudog.h"
#include "common/timer.h"
#include "common/wait_reason.h"
#include "stage2_global_queue/g.h"

namespace gmp::stage2 {


/// How a stage 2 goroutine waits: it parks, and its M runs other goroutines.
struct Sched {
  /// The goroutine handle.
  using G = stage2::G*;

  /// The calling goroutine; throws gmp::UsageError naming `op` when the
  /// calling thread is not running a goroutine of a stage 2 runtime.
  static G current_g(const char* op);

  /// The goroutine's id; only that goroutine may ask.
  static std::uint64_t goid(G g) noexcept;

  /// The runtime the goroutine belongs to (an identity, for
  /// common/scheduler.h's check_same_runtime). Any thread.
  static const void* runtime_of(G g) noexcept { return g->runtime; }

  /// Go's gopark: switches to g0, which marks the goroutine waiting and
  /// then calls `unlock`; returns true once ready(s) made it run again, or
  /// false if the runtime cancelled the wait at exit.
  static bool park(Sudog<G>& s, ParkUnlock unlock, WaitReason why);

  /// Go's goready: makes the goroutine of `s` (claimed by the caller)
  /// runnable again, at the back of the global run queue.
  static void ready(Sudog<G>& s) noexcept;

  /// Where `g` keeps its sudog for a wait on one object (OwnSudog).
  static std::optional<Sudog<G>>& sudog_slot(G g) noexcept {
    return g->sudog;
  }

  /// Go's addtimer: `t` into the calling goroutine's runtime's timer heap
  /// (common/time.h's TimerScheduler).
  static void add_timer(RuntimeTimer& t);
  /// Go's deltimer: `t` out of its runtime's heap; whether it was there.
  static bool del_timer(RuntimeTimer& t);
  /// A goroutine running fn, made from a timer's function on an M's g0.
  static void go_from_timer(std::function<void()> fn);
};

}  // namespace gmp::stage2
