/// \file
/// Note 001's program (docs/course/notes.md), for any stage
/// (examples/notes/demo.cc runs it on every one, each in a process of its own):
///
/// ```unparsed
/// func main() {
///     runtime.GOMAXPROCS(1)
///     go func() {
///         var u int
///         for {
///             u -= 2
///             if u == 1 {
///                 break
///             }
///         }
///     }()
///     <-time.After(time.Millisecond * 5)
///     fmt.Println("go 1.13 has never been here")
/// }
/// ```
///
/// On one P the loop, which calls nothing, keeps the P once it has it:
/// main, readied by its timer, waits for a P that never comes back. Go
/// before 1.14 never prints; Go 1.14's asynchronous preemption (the
/// course's stage 5) stops the loop and main prints.
#pragma once

#include <atomic>
#include <chrono>
#include <string>

#include "common/stage_api.h"

namespace gmp::notes {

/// The note's main, on the calling goroutine: starts the loop, waits for
/// `after(5 ms)`, then stores the note's line in `said` and raises `stop`.
/// The one change to the note: the loop also ends when `stop` is raised
/// (an atomic load, no call), because a course run() returns only once
/// every goroutine has ended, where Go's program exits as main returns.
template <StageApi A>
void tight_loop_then_after(std::atomic<bool>& stop, std::string& said) {
  // [note 001]
  A::go([&stop] {
    long u = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      u -= 2;
      if (u == 1) break;
      asm volatile("" : "+r"(u));  // u is "used": the loop stays, as Go's
    }
  });
  auto after = A::Timer::after(std::chrono::milliseconds(5));
  after.c()->recv();  // <-time.After(5 * time.Millisecond)
  said = "go 1.13 has never been here";
  // [note 001]
  stop.store(true, std::memory_order_relaxed);
}

}  // namespace gmp::notes
