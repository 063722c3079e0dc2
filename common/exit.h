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
/// gives such goroutines kExitGrace to reach a runtime call, counted from
/// the last goroutine that ended (await_the_rest): goroutines that are
/// still unwinding, however many, take as long as they need. If one is
/// still running a whole grace after the last one ended, the runtime does
/// what Go does: it ends the program, with exit status 0, after flushing
/// stdout (exit_program). run() does not return in that case, and no
/// destructor runs.
/// ```
#pragma once

#include <chrono>

namespace gmp {

/// How long run() waits, once main has returned and the other goroutines
/// have been told to end, with none of them ending, before it gives up on
/// the ones still running (await_the_rest). Go waits for none.
inline constexpr std::chrono::milliseconds kExitGrace{1000};

/// Ends the program as Go's does when main returns while goroutines still
/// run: flushes stdout, then exits with status 0 at once (_exit: no
/// destructor, no atexit handler runs while those goroutines' threads still
/// run). Any thread; never returns.
[[noreturn]] void exit_program() noexcept;

/// run()'s wait once main has returned: `wait(d)` waits up to d for the
/// last goroutine to end and returns whether all have; `left()` counts
/// the goroutines still alive. Ends the program (exit_program) only when
/// a whole kExitGrace passes without one ending: 10,000 goroutines
/// unwinding on two cores can take longer than one grace, and are not
/// stuck (ApiSuite.GoroutinesUnwindingLongerThanAGraceAllEnd). run()'s
/// thread.
template <class Wait, class Left>
void await_the_rest(Wait wait, Left left) {
  auto before = left();
  while (!wait(kExitGrace)) {
    auto now = left();
    if (now >= before) exit_program();  // none ended for a whole grace
    before = now;
  }
}

}  // namespace gmp
