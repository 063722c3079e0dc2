// Stage 4: blocking system calls (Go's entersyscallblock, exitsyscall,
// exitsyscallfast, exitsyscall0); the P goes to stage 3's handoffp.
#include <mutex>
#include <string>

#include "common/check.h"
#include "common/errors.h"
#include "common/storeload.h"
#include "stage2_global_queue/switch.h"
#include "stage4_syscalls/runtime.h"
#include "stage4_syscalls/trace_points.h"

namespace gmp::stage4 {

//! [entersyscall]
P* Runtime::entersyscall(M* m, G* gp) {
  P* pp = syscall_releasep(m, gp);
  syscall_handoffp(pp, m->trace, m->id);  // at once: Go's entersyscallblock
  return pp;
}
//! [entersyscall]

P* Runtime::syscall_releasep(M* m, G* gp) {
  casgstatus(gp, GStatus::kRunning, kGSyscall);
  trace_go_syscall(m, gp, m->p->id);
  syscalls_.fetch_add(1, std::memory_order_relaxed);
  return releasep(m);
}

M* Runtime::syscall_handoffp(P* pp, trace::Buffer* t, int from) {
  const std::int64_t at = t != nullptr ? t->now() : 0;  // see handoff()
  M* to = handoffp(pp);  // stage 3's
  if (to != nullptr) handoffs_.fetch_add(1, std::memory_order_relaxed);
  if (t != nullptr && to != nullptr) [[unlikely]] {
    t->handoff(pp->id, from, to->id, at);
  }
  return to;
}

void Runtime::syscall_resume(M* m, G* gp, P* pp) {
  casgstatus(gp, kGSyscall, GStatus::kRunning);
  note_go_sysexit(m, gp, pp->id);
}

//! [exitsyscall]
void Runtime::exitsyscall(M* m, G* gp, P* oldp) noexcept {
  P* pp = nullptr;
  {
    std::lock_guard lk(sched_);
    if (!world_stopping(std::memory_order_relaxed)) {
      if (pidleremove(oldp)) {
        pp = oldp;
        exit_oldp_.fetch_add(1, std::memory_order_relaxed);
      } else if ((pp = pidleget()) != nullptr) {
        exit_otherp_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
  if (pp != nullptr) {
    acquirep(m, pp);
    syscall_resume(m, gp, pp);
    return;
  }
  note_go_sysexit(m, gp, trace::kNoP);
  m->call = kExitsyscallCall;
  stage2::mcall(m, gp);  // resumed by execute(), on some M with a P
}
//! [exitsyscall]

void Runtime::exitsyscall0(M* m, G* gp) {
  casgstatus(gp, kGSyscall, GStatus::kRunnable);
  P* pp = nullptr;
  {
    std::lock_guard lk(sched_);
    if (!world_stopping(std::memory_order_relaxed)) pp = pidleget();
    if (pp == nullptr) globrunqput(gp);
  }
  if (pp != nullptr) {
    exit_otherp_.fetch_add(1, std::memory_order_relaxed);
    acquirep(m, pp);
    runqput(pp, gp, /*next=*/true);  // the M's loop runs it next
    return;
  }
  exit_grq_.fetch_add(1, std::memory_order_relaxed);
  // Locked to m (lock_os_thread): m waits for gp alone, in the loop's
  // stoplockedm, not on the idle list (Go's exitsyscall0 does the same).
  if (gp->lockedm != nullptr) return;
  stopm(m);  // with a P when woken, or with none when the run is over
}

void Runtime::other_mcall(M* m, G* gp) {
  GMP_CHECK(m->call == kExitsyscallCall,
            "mstart: an mcall request stage 4 does not know");
  exitsyscall0(m, gp);
}

trace::StopReason Runtime::stop_reason(stage2::MCall call) const {
  return call == kExitsyscallCall ? trace::StopReason::kSyscall
                                  : stage3::Runtime::stop_reason(call);
}

// ---- SyscallScope -------------------------------------------------------------------

SyscallScope::SyscallScope() {
  M* m = getm();
  if (m == nullptr || m->curg == nullptr) {
    throw UsageError(
        "blocking called outside a goroutine: only goroutines of a running "
        "stage4::Runtime may call it (a plain thread may simply block)");
  }
  if (m->p == nullptr) {
    throw UsageError(
        "blocking called inside another blocking call: the goroutine "
        "already holds no P");
  }
  rt_ = dynamic_cast<Runtime*>(m->rt);
  if (rt_ == nullptr) {
    throw UsageError(
        "blocking called from a goroutine of a stage 3 runtime: blocking "
        "calls need a stage4::Runtime");
  }
  m_ = m;
  gp_ = m->curg;
  oldp_ = rt_->entersyscall(m, gp_);
}

SyscallScope::~SyscallScope() { rt_->exitsyscall(m_, gp_, oldp_); }

}  // namespace gmp::stage4
