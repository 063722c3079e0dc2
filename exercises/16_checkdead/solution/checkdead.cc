// Exercise 16, reference solution: Go's checkdead (runtime/proc.go, Go
// 1.19), without its cgo, library and faketime cases.
#include "exercises/16_checkdead/checkdead.h"

#include <stdexcept>

namespace gmp::exercises::checkdead {

Verdict checkdead(const Snapshot& s) {
  // A program already dying of a panic may freeze its threads: that is
  // not a deadlock to report.
  if (s.panicking) return Verdict::kAlive;
  // Ms that can run a goroutine right now: all, but the idle ones, the
  // ones waiting for their locked goroutine and the runtime's own.
  int run = s.mcount - s.nmidle - s.nmidlelocked - s.nmsys;
  if (run > 0) return Verdict::kAlive;
  if (run < 0) throw std::logic_error("checkdead: inconsistent counts");
  // No M runs. Then no program goroutine may be runnable or running: an M
  // would be running it, or about to.
  int waiting = 0;
  for (const GInfo& g : s.allgs) {
    if (g.system) continue;
    switch (g.status) {
      case GStatus::kWaiting:
      case GStatus::kPreempted:
        ++waiting;
        break;
      case GStatus::kRunnable:
      case GStatus::kRunning:
      case GStatus::kSyscall:
        throw std::logic_error("checkdead: runnable g");
      case GStatus::kIdle:
      case GStatus::kDead:
        break;
    }
  }
  if (waiting == 0) return Verdict::kNoGoroutines;
  // Everyone waits: only a timer can still wake one (a sleep, a timeout).
  for (int n : s.timers_per_p) {
    if (n > 0) return Verdict::kAlive;
  }
  return Verdict::kDeadlock;
}

}  // namespace gmp::exercises::checkdead
