/// \file
/// Stage 1's park and ready (the Scheduler interface of common/scheduler.h).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>

#include "common/park_unlock.h"
#include "common/sudog.h"
#include "common/timer.h"
#include "common/wait_reason.h"

namespace gmp::stage1 {

class Runtime;
struct Worker;

/// How a stage 1 goroutine waits: it blocks its worker thread on the
/// worker's Note. A goroutine is identified by the worker running it.
struct Sched {
  /// The goroutine handle: the worker thread that runs it.
  using G = Worker*;

  /// The calling goroutine's worker; throws gmp::UsageError naming `op`
  /// when the calling thread is not a worker running a goroutine.
  static G current_g(const char* op);

  /// The id of the goroutine running on `g`; only that goroutine may ask.
  static std::uint64_t goid(G g) noexcept;

  /// The runtime the goroutine belongs to (an identity, for
  /// common/scheduler.h's check_same_runtime). Any thread.
  static const void* runtime_of(G g) noexcept;

  /// Go's gopark: records the goroutine as waiting, calls `unlock`, and
  /// blocks the worker thread until ready(s) (returns true) or until the
  /// runtime cancels the wait at exit (returns false).
  static bool park(Sudog<G>& s, ParkUnlock unlock, WaitReason why);

  /// Go's goready: wakes the worker thread of `s`, which the caller claimed.
  static void ready(Sudog<G>& s) noexcept;

  /// Where the goroutine running on `g` keeps its sudog (OwnSudog).
  static std::optional<Sudog<G>>& sudog_slot(G g) noexcept;

  /// Go's addtimer: `t` into the calling goroutine's runtime's timer heap
  /// (common/time.h's TimerScheduler); the timer thread fires it.
  static void add_timer(RuntimeTimer& t);
  /// Go's deltimer: `t` out of its runtime's heap; whether it was there.
  static bool del_timer(RuntimeTimer& t);
  /// A goroutine running fn, queued from a timer's function (on the timer
  /// thread).
  static void go_from_timer(std::function<void()> fn);
};

}  // namespace gmp::stage1
