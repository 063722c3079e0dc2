/// \file
/// M: an OS thread that runs goroutines (Go's m, runtime2.go).
#pragma once

#include <chrono>
#include <thread>

#include "common/note.h"
#include "common/timer.h"
#include "common/runtime_lock.h"
#include "common/sudog.h"
#include "common/wait_reason.h"
#include "stage2_global_queue/g.h"
#include "stage2_global_queue/mcore.h"
#include "stage2_global_queue/tls.h"

namespace gmp::stage2 {

class Runtime;

/// One OS thread of the runtime. Its own stack is g0, the scheduler
/// context: schedule() runs there, and goroutines switch to it and back
/// (that part, shared with the later stages, is MCore).
struct M : MCore {
  /// M number `index` of `runtime`; its thread is started by the runtime.
  M(Runtime* runtime, int index) : rt(runtime), id(index) {}

  Runtime* const rt;  ///< immutable
  const int id;       ///< immutable; in creation order (0..procs-1 first)
  std::thread thread;  ///< started and joined by Runtime::run's thread

  /// Idle M's sleep: cleared and slept on by this M, woken by whoever takes
  /// it off the idle list (thread-safe).
  Note park;

  // Protected by the runtime's sched lock.
  M* schedlink = nullptr;  ///< next idle M
  bool idle = false;       ///< on the idle list
  /// Asleep in stoplockedm, waiting for its locked goroutine.
  bool lockedwait = false;
  /// Its locked goroutine was handed to it (startlockedm).
  bool lockedready = false;
  /// Function timers find_runnable took off the heap, to call once it has
  /// unlocked (kept here so that the vector's memory is reused). Owner M.
  std::vector<TimerFiring> fire;
};

/// The M whose thread is running the caller; null on other threads. Read
/// through the opaque getm_core() (tls.h): never cached across a switch.
inline M* getm() noexcept { return static_cast<M*>(getm_core()); }

}  // namespace gmp::stage2
