// Exercise 16: the deadlock detector (Go's checkdead, runtime/proc.go, Go
// 1.19), over a snapshot of the scheduler taken with sched.lock held. See
// README.md for the statement.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gmp::exercises::checkdead {

/// A goroutine's status, as Go's readgstatus gives it (without _Gscan).
enum class GStatus : std::uint8_t {
  kIdle,       ///< _Gidle: just allocated, not yet initialized
  kRunnable,   ///< _Grunnable: on a run queue
  kRunning,    ///< _Grunning: on an M
  kSyscall,    ///< _Gsyscall: in a system call
  kWaiting,    ///< _Gwaiting: parked (a channel, a lock, a sleep, ...)
  kPreempted,  ///< _Gpreempted: stopped by an async preemption (a suspendG)
  kDead,       ///< _Gdead: ended, or on a free list
};

/// One goroutine of allgs.
struct GInfo {
  std::uint64_t goid = 0;
  GStatus status = GStatus::kDead;
  /// Started by the runtime for itself (Go's isSystemGoroutine: the
  /// finalizer goroutine, the GC's workers, ...): not the program's.
  bool system = false;
};

/// What checkdead reads, taken with sched.lock held (Go's fields).
struct Snapshot {
  int mcount = 0;  ///< Ms created and not yet exited (mcount())
  int nmidle = 0;  ///< idle Ms, parked in stopm (sched.nmidle)
  /// Ms idle waiting for their locked G (sched.nmidlelocked)
  int nmidlelocked = 0;
  /// System Ms that never run Gs: sysmon, the template thread (sched.nmsys)
  int nmsys = 0;
  std::vector<GInfo> allgs;       ///< every G ever made (allgs)
  std::vector<int> timers_per_p;  ///< len(pp.timers) of each P in allp
  /// A panic is killing the program already (panicking > 0)
  bool panicking = false;
};

/// What checkdead concludes.
enum class Verdict : std::uint8_t {
  /// Some M runs, or a timer will wake someone: return.
  kAlive,
  /// Fatal: "no goroutines (main called runtime.Goexit) - deadlock!".
  kNoGoroutines,
  /// Fatal: "all goroutines are asleep - deadlock!".
  kDeadlock,
};

/// Go's checkdead: whether the program can never run a goroutine again.
/// Throws std::logic_error, with Go's message, when the snapshot is
/// impossible: "checkdead: inconsistent counts" (more Ms idle or in the
/// system than exist), or "checkdead: runnable g" (no M runs, yet a
/// program goroutine is runnable, running or in a system call).
Verdict checkdead(const Snapshot& s);

/// The message Go prints for a fatal verdict (the two strings above), or ""
/// for kAlive. Given.
inline std::string fatal_message(Verdict v) {
  switch (v) {
    case Verdict::kAlive:
      return "";
    case Verdict::kNoGoroutines:
      return "no goroutines (main called runtime.Goexit) - deadlock!";
    case Verdict::kDeadlock:
      return "all goroutines are asleep - deadlock!";
  }
  return "";
}

}  // namespace gmp::exercises::checkdead
