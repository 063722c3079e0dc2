// M: an OS thread that runs goroutines (Go's m, runtime2.go).
#pragma once

#include <chrono>
#include <thread>

#include "common/note.h"
#include "common/runtime_lock.h"
#include "common/sudog.h"
#include "common/wait_reason.h"
#include "stage2_global_queue/g.h"
#include "stage2_global_queue/mcore.h"
#include "stage2_global_queue/tls.h"

namespace gmp::stage2 {

class Runtime;

/// What a goroutine asks its M's g0 to do once it has switched to it (Go
/// passes a function to mcall: park_m, gosched_m, goexit0).
enum class MCall : unsigned char { kNone, kPark, kGosched, kGoexit };

/// One OS thread of the runtime. Its own stack is g0, the scheduler
/// context: schedule() runs there, and goroutines switch to it and back
/// (that part, shared with the later stages, is MCore).
struct M : MCore {
  M(Runtime* runtime, int index) : rt(runtime), id(index) {}

  Runtime* const rt;  ///< immutable
  const int id;       ///< immutable; 0..procs-1
  std::thread thread;  ///< started and joined by Runtime::run's thread

  // Owner thread only (this M's thread, on g0 or on the goroutine it runs).
  MCall call = MCall::kNone;  ///< the request of the last switch to g0
  // Arguments of a kPark request (Go's m.waitunlockf and friends):
  Sudog<G*>* park_sudog = nullptr;     ///< the sudog to park with
  RuntimeLock* park_unlock = nullptr;  ///< object lock park_m releases
  WaitReason park_reason = WaitReason::kNone;
  std::chrono::steady_clock::time_point park_until;  ///< kSleep: wake time
  bool exit_finished = false;  ///< kGoexit: returned (true) or Goexit

  /// Idle M's sleep: cleared and slept on by this M, woken by whoever takes
  /// it off the idle list (thread-safe).
  Note park;

  // Protected by the runtime's sched lock.
  M* schedlink = nullptr;  ///< next idle M
  bool idle = false;       ///< on the idle list
};

/// The M whose thread is running the caller; null on other threads. Read
/// through the opaque getm_core() (tls.h): never cached across a switch.
inline M* getm() noexcept { return static_cast<M*>(getm_core()); }

}  // namespace gmp::stage2
