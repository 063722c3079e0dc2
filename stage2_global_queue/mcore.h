/// \file
/// MCore: what the goroutine machinery needs of an M, whatever the
/// scheduler around it. Stage 2's M and the later stages' Ms extend it; the
/// switch (switch.h), the overflow handler (signals.h) and the current-M
/// lookup (tls.h) only know this part.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "common/errors.h"
#include "common/fault.h"
#include "common/runtime_lock.h"
#include "common/park_unlock.h"
#include "common/sudog.h"
#include "common/wait_reason.h"
#include "stage2_global_queue/context.h"
#include "stage2_global_queue/g.h"
#include "trace/tracer.h"

namespace gmp::stage2 {

/// What a goroutine asks its M's g0 to do once it has switched to it (Go
/// passes a function to mcall: park_m, gosched_m, goexit0). A scheduler
/// built on this machinery may have requests of its own (Go's have
/// gopreempt_m and exitsyscall0): it numbers them from kFirstOwn up, and
/// its M's loop handles them; this stage's loop knows only these.
enum class MCall : unsigned char {
  kNone,
  kPark,
  kGosched,
  kGoexit,
  kFirstOwn,  ///< the first value a later scheduler may give a meaning
};

/// The core of an M (an OS thread that runs goroutines): its g0 and the
/// goroutine it runs. Every field belongs to the M's own thread, but
/// stack_size_field (set before the thread starts).
struct MCore {
  Gobuf g0;         ///< g0's registers while a goroutine runs
  G* curg = nullptr;  ///< the goroutine running on this M, or null on g0

  MCall call = MCall::kNone;  ///< the request of the last switch to g0
  // Arguments of a kPark request (Go's m.waitunlockf and friends), then
  // of a kGoexit one:
  Sudog<G*>* park_sudog = nullptr;     ///< the sudog to park with
  ParkUnlock park_unlock;  ///< what park_m releases (objects' locks)
  WaitReason park_reason = WaitReason::kNone;  ///< the park's wait reason
  std::chrono::steady_clock::time_point park_until;  ///< kSleep: wake time
  bool exit_finished = false;  ///< kGoexit: returned (true) or Goexit

  /// LockOSThread (Go's m.lockedg and m.lockedExt): the goroutine wired to
  /// this M, or null, and how many lock_os_thread calls its unlocks have
  /// not matched yet. Written by that goroutine as it runs here, and by
  /// goexit0 on this M's g0; read by this M's loop. Owner: this M's thread.
  G* lockedg = nullptr;
  std::uint32_t locked_ext = 0;  ///< LockOSThread's nesting (Go 1.10+)

  /// Go's LockOSThread on this M, for its running goroutine: one more
  /// lock, and the goroutine and this M wired to each other. Panics
  /// ("LockOSThread nesting overflow") past 2^32 - 1 locks, as Go's.
  void lock_os_thread() {
    if (locked_ext == UINT32_MAX) throw Panic("LockOSThread nesting overflow");
    ++locked_ext;
    lockedg = curg;
    curg->lockedm = this;
  }
  /// Go's UnlockOSThread: one lock fewer (none: nothing); at none, the
  /// goroutine and this M are free of each other.
  void unlock_os_thread() noexcept {
    if (locked_ext == 0 || --locked_ext != 0) return;
    lockedg = nullptr;
    curg->lockedm = nullptr;
  }

  /// This thread's C++ exception-handling globals (__cxa_get_globals()),
  /// looked up once: they belong to the thread, and an M is one thread.
  void* eh_globals = nullptr;

  // Sanitizer and signal bookkeeping.
  void* tsan_g0_fiber = nullptr;       ///< ThreadSanitizer's fiber for g0
  void* asan_g0_fake_stack = nullptr;  ///< AddressSanitizer's, for g0
  const void* g0_stack_lo = nullptr;   ///< g0's stack, for AddressSanitizer
  std::size_t g0_stack_size = 0;      ///< its size, for AddressSanitizer
  /// The M's alternate signal stack and fault reports (signals.h): set
  /// up and torn down by the M's own thread.
  std::optional<FaultReports> faults;
  /// The overflow report's hint: "stage2::Config.stack_size", or the field
  /// of the stage whose M this is. Immutable.
  const char* stack_size_field = "stage2::Config.stack_size";

  /// This M's execution-trace buffer while a traced run is under way, or
  /// null (tracing off: every event site is one test of this pointer).
  /// Set by the M's own thread when it starts; only that thread records.
  trace::Buffer* trace = nullptr;
};

}  // namespace gmp::stage2
