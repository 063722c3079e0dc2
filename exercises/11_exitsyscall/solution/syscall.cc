// Exercise 11, reference solution: Go's entersyscall, exitsyscall,
// exitsyscallfast, exitsyscall0 and the syscall half of retake
// (proc.go), in the model of syscall.h.
//
// Who may touch a P in kSyscall: nobody owns it, and two threads may want
// it (its M back from the kernel, and sysmon). Each tries one
// compare-and-swap from kSyscall; the winner owns the P, the loser leaves
// it alone. A load followed by a store would let both "win".
#include "exercises/11_exitsyscall/syscall.h"

#include <mutex>
#include <utility>

namespace gmp::exercises::syscall {

void Sched::entersyscall(M* m) {
  casgstatus(m->curg, GStatus::kRunning, GStatus::kSyscall);
  // Let go of the P before marking it: once it is kSyscall, sysmon may
  // take it, and a P it takes must have no owner left.
  P* pp = releasep(m);
  m->oldp = pp;
  // release: pairs with the acquire of whoever wins the P from kSyscall
  // (exitsyscallfast or retake): our writes as its owner come first.
  pp->status.store(PStatus::kSyscall, std::memory_order_release);
}

// Path 1. No lock, nobody woken: the common case of a short call.
bool Sched::exitsyscallfast(M* m, P* oldp) {
  PStatus s = PStatus::kSyscall;
  // acquire: the P is ours only if we win; pairs with the release in
  // entersyscall. On failure relaxed: we do not touch the P then.
  if (!oldp->status.compare_exchange_strong(s, PStatus::kRunning,
                                            std::memory_order_acquire,
                                            std::memory_order_relaxed)) {
    return false;  // sysmon retook it (now idle, or someone else's)
  }
  acquirep(m, oldp);  // Go's wirep
  return true;
}

ExitPath Sched::exitsyscall(M* m) {
  G* gp = m->curg;
  P* oldp = std::exchange(m->oldp, nullptr);
  if (exitsyscallfast(m, oldp)) {
    casgstatus(gp, GStatus::kSyscall, GStatus::kRunning);
    return ExitPath::kFast;
  }
  // Path 2: the old P was retaken; any idle P will do (Go's
  // exitsyscallfast_pidle).
  P* pp;
  {
    std::lock_guard lk(lock);
    pp = pidleget();
  }
  if (pp != nullptr) {
    acquirep(m, pp);
    casgstatus(gp, GStatus::kSyscall, GStatus::kRunning);
    return ExitPath::kIdleP;
  }
  return exitsyscall0(m);  // Path 3 (Go: mcall(exitsyscall0), on g0)
}

// Path 3. Looking again and queueing under one lock hold: a P that goes
// idle meanwhile is either found here, or put back after gp is on the GRQ,
// where that P's next M finds gp.
ExitPath Sched::exitsyscall0(M* m) {
  G* gp = m->curg;
  casgstatus(gp, GStatus::kSyscall, GStatus::kRunnable);
  P* pp;
  {
    std::lock_guard lk(lock);
    pp = pidleget();
    if (pp == nullptr) globrunqput(gp);
  }
  if (pp != nullptr) {  // Go: acquirep, then execute(gp)
    acquirep(m, pp);
    casgstatus(gp, GStatus::kRunnable, GStatus::kRunning);
    return ExitPath::kIdleP;
  }
  m->curg = nullptr;  // Go's dropg; then stopm: the M parks
  return ExitPath::kParked;
}

bool Sched::retake(P* pp) {
  PStatus s = PStatus::kSyscall;
  // acquire: if we win, the P is ours, with what its M wrote (pairs with
  // the release in entersyscall). On failure relaxed: we leave it alone.
  if (!pp->status.compare_exchange_strong(s, PStatus::kIdle,
                                          std::memory_order_acquire,
                                          std::memory_order_relaxed)) {
    return false;  // not in a call: running, idle, or its M came back
  }
  handoffp(pp);
  return true;
}

}  // namespace gmp::exercises::syscall
