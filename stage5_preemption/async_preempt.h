/// \file
/// Stage 5: asynchronous preemption (Go 1.14's preemptM, sighandler's
/// doSigPreempt, isAsyncSafePoint, asyncPreempt; signal_unix.go,
/// preempt.go).
///
/// ```unparsed
/// Cooperative preemption waits for a function call. A loop without one
/// never yields. Go 1.14's answer, and this file's: sysmon sends the M a
/// signal, SIGURG (one that programs rarely use, and whose default action
/// is to do nothing). The handler, on the M's signal stack:
///   1. never schedules: a signal can arrive anywhere, in malloc, holding a
///      lock, in the middle of the scheduler itself;
///   2. decides whether the interrupted point is safe (check_safe_point):
///      the M runs a goroutine on its own stack, whose P has a request
///      pending, that holds no runtime lock (RuntimeLock's per-thread
///      count, Go's m.locks), at a PC inside the user's code (user_code.h:
///      not the runtime, not the C++ library, not libc), with room on its
///      stack. Otherwise it declines: sysmon sends the signal again on its
///      next round, as Go does, and the goroutine will be elsewhere;
///   3. if safe, rewrites the interrupted context so that the goroutine
///      "calls" gmp_async_preempt (preempt_x86_64.S) when the handler
///      returns: past the red zone it pushes the interrupted PC, and sets
///      the PC to the trampoline. The trampoline saves every register, the
///      flags and the vector state, and calls gmp_async_preempt2, which
///      yields as a cooperative preemption does (the goroutine goes to the
///      GRQ). When the goroutine runs again, perhaps on another M, the
///      trampoline restores everything and returns to the interrupted
///      instruction.
/// x86-64 only; not under ThreadSanitizer, which runs signal handlers only
/// at its own interception points, with a copy of the context: a rewrite
/// would be lost (stage 5 is cooperative there).
/// ```
#pragma once

#include <signal.h>

#include <cstddef>
#include <cstdint>

#include "stage3_gmp/m.h"

namespace gmp::stage5 {

/// Whether this build can preempt asynchronously.
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
inline constexpr bool kAsyncPreemptSupported = true;
#else
inline constexpr bool kAsyncPreemptSupported = false;
#endif

/// The signal (Go's sigPreempt).
inline constexpr int kPreemptSignal = SIGURG;

/// Why an interrupted point is, or is not, a safe point.
enum class SafePoint : std::uint8_t {
  kSafe,
  kNoRequest,     ///< no goroutine, no P, no request, or not running
  kNotOnGStack,   ///< on g0 or another stack: the runtime is running
  kLocksHeld,     ///< a runtime lock is held
  kNotUserCode,   ///< the runtime, the C++ library, libc...
  kStackTooLow,   ///< not enough stack left for the trampoline's frame
};

/// Go's wantAsyncPreempt and isAsyncSafePoint: may the goroutine running on
/// `m` (the calling thread's M) be stopped at `pc` with stack pointer `sp`?
/// Async-signal-safe.
SafePoint check_safe_point(const stage3::M* m, std::uintptr_t pc,
                           std::uintptr_t sp) noexcept;

/// Installs the SIGURG handler (once per process), fills in the XSAVE area
/// size, builds the user code table. Returns an error message, or null if
/// asynchronous preemption is ready.
const char* init_async_preempt() noexcept;

/// Go's preemptM: sends the signal to the thread with kernel id `tid`.
/// Returns false if the thread is gone.
bool signal_thread(int tid) noexcept;

}  // namespace gmp::stage5

// Hidden: the trampoline calls its C++ half directly, not through the PLT.
extern "C" {
/// The trampoline (preempt_x86_64.S): not called, jumped to.
__attribute__((visibility("hidden"))) void gmp_async_preempt();
/// Go's asyncPreempt2: called by the trampoline with every register saved,
/// the goroutine yields as a cooperative preemption does. Returns when it
/// runs again, on whichever M.
__attribute__((visibility("hidden"))) void gmp_async_preempt2();
}
