/// \file
/// What happens to goroutines still running when main returns, the same in
/// every stage.
///
/// ```unparsed
/// Go ends the program the moment main returns: other goroutines stop
/// wherever they are, their deferred calls never run. A course runtime is a
/// library call, run(), that returns to its caller, so it ends the other
/// goroutines instead (protocol 4 of each stage): queued ones are dropped,
/// parked ones are woken to unwind with gmp::Goexit (their destructors
/// run), and a running one unwinds at its next call into the runtime (a
/// channel operation, yield, go...), which throws Goexit.
///
/// A goroutine that never calls into the runtime (a loop on an atomic, a
/// long computation, a system call outside stage4::blocking) cannot be
/// stopped from outside on stages 1-4 (stage 5 can preempt it, but a
/// preempted goroutine cannot unwind either: it is not at a call). run()
/// gives such goroutines kExitGrace to reach a runtime call. If one is
/// still running then, the runtime does what Go does: it ends the program,
/// with exit status 0, after flushing stdout (exit_program). run() does not
/// return in that case, and no destructor runs.
/// ```
#pragma once

#include <chrono>

namespace gmp {

/// How long run() waits, once main has returned and the other goroutines
/// have been told to end, for the ones still running to reach a call into
/// the runtime and unwind. Go waits for none.
inline constexpr std::chrono::milliseconds kExitGrace{1000};

/// Ends the program as Go's does when main returns while goroutines still
/// run: flushes stdout, then exits with status 0 at once (_exit: no
/// destructor, no atexit handler runs while those goroutines' threads still
/// run). Any thread; never returns.
[[noreturn]] void exit_program() noexcept;

}  // namespace gmp
