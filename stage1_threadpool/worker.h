/// \file
/// A stage 1 worker: one OS thread of the pool (an M with no P, if you like).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <thread>

#include "common/note.h"
#include "common/sudog.h"
#include "common/wait_reason.h"

namespace gmp::stage1 {

class Runtime;

/// One worker thread and the goroutine it runs. Internal to the runtime.
struct Worker {
  /// Worker number `index` of `runtime`; its thread is started later.
  Worker(Runtime* runtime, int index) : rt(runtime), id(index) {}

  Runtime* const rt;  ///< immutable
  const int id;       ///< immutable; 0..procs-1, for reports

  /// Started and joined by Runtime::run's thread only.
  std::thread thread;

  /// The worker thread's stack [stack_lo, stack_hi) and the guard below
  /// it, for fault reports (faults.h). Written by the worker's thread when
  /// it starts, read by its signal handler.
  std::uintptr_t stack_lo = 0;
  std::uintptr_t stack_hi = 0;  ///< see stack_lo
  std::size_t guard_size = 0;   ///< see stack_lo

  /// The park/ready handshake: cleared and slept on by this worker's
  /// goroutine, woken by whoever claimed its sudog (Note is thread-safe).
  Note note;
  /// The sudog of the goroutine running here, for a wait on one object
  /// (common/scheduler.h's OwnSudog). Owned by that goroutine, which makes
  /// it for a wait and ends it after; its waker touches it as any sudog.
  std::optional<Sudog<Worker*>> sudog;

  // Protected by rt->mu_. The worker itself writes them (with mu_ held) and
  // may read them without mu_; other threads read them with mu_ held.
  std::uint64_t goid = 0;               ///< goroutine running here; 0: idle
  Sudog<Worker*>* parked = nullptr;     ///< its sudog while it is parked
  WaitReason wait_reason = WaitReason::kNone;  ///< why it is parked
  std::chrono::steady_clock::time_point wait_since;  ///< since when
};

}  // namespace gmp::stage1
