// Stage 5: the lazy syscall hand-off (Go's entersyscall, exitsyscallfast,
// entersyscall_gcwait, and the syscall half of retake; proc.go).
//
// Stage 4 handed the P off before every blocking call: a call of a few
// hundred nanoseconds paid for waking another M (and often for making one). Go's answer is to
// do nothing at all on the way in. entersyscall only marks the P kPSyscall
// and lets go of it; the M keeps a pointer to it (oldp). Then either
//   - the call returns quickly: exitsyscall takes the P back with one
//     compare-exchange from kPSyscall to kRunning (exitsyscallfast), with
//     no lock and no other thread involved; or
//   - the call lasts: sysmon sees the same syscalltick on two of its
//     rounds (20 us at least), or finds the P in any call once its
//     goroutine's time slice has run out (Go's sysretake), and, if the P
//     has work or nobody else is looking for work or 10 ms have passed,
//     wins the compare-exchange from kPSyscall to kIdle and hands the P
//     off (stage 3's handoffp).
//     The call's return then finds its P gone and takes stage 4's three
//     steps (old P if idle, another idle P, else the GRQ and park).
// The compare-exchange decides who owns the P (and its run queue): acq_rel
// so that the winner sees everything the previous owner wrote.
#include <mutex>

#include "stage2_global_queue/switch.h"
#include "stage4_syscalls/trace_points.h"
#include "stage5_preemption/runtime.h"

namespace gmp::stage5 {

namespace {
constexpr std::chrono::milliseconds kRetakeAnyway{10};  // Go's 10 ms rule
}  // namespace

void Runtime::stop_unattended_ps() {
  for (int i = 0; i < nprocs(); ++i) {
    PStatus s = kPSyscall;
    // seq_cst: the load half of a Dekker pair with entersyscall (it stores
    // kPSyscall, then reads world_stopping).
    if (allp(i)->status.compare_exchange_strong(s, PStatus::kStopped,
                                                 std::memory_order_seq_cst)) {
      stopped_for_world();
    }
  }
}

P* Runtime::entersyscall(M* m, G* gp) {
  if (stall_threshold_.count() > 0) {  // opt-in: stall.cc
    std::lock_guard lk(in_calls_mu_);
    in_calls_[m] = InCall{gp->goid, Clock::now(), false};
  }
  P* pp = syscall_releasep(m, gp);  // stage 4's
  syscalltick_[static_cast<std::size_t>(pp->id)].fetch_add(
      1, std::memory_order_relaxed);
  // seq_cst: a store-then-load against stop_the_world's store of
  // gcwaiting then its compare-exchange of our status (Dekker): either it
  // sees kPSyscall and takes the P, or we see world_stopping below. Also the
  // release of everything this M wrote as the P's owner.
  pp->status.store(kPSyscall, std::memory_order_seq_cst);
  if (world_stopping(std::memory_order_seq_cst)) {
    // Go's entersyscall_gcwait: a stop of the world waits for this P.
    std::lock_guard lk(sched_);
    PStatus s = kPSyscall;
    if (pp->status.compare_exchange_strong(s, PStatus::kStopped,
                                           std::memory_order_seq_cst)) {
      stopped_for_world();
    }
  }
  return pp;
}

void Runtime::exitsyscall(M* m, G* gp, P* oldp) noexcept {
  if (stall_threshold_.count() > 0) {
    std::lock_guard lk(in_calls_mu_);
    in_calls_.erase(m);
  }
  PStatus s = kPSyscall;
  // acq_rel: pairs with our own release in entersyscall (same thread) and
  // makes the P ours again before anyone else's compare-exchange.
  if (oldp->status.compare_exchange_strong(s, PStatus::kRunning,
                                           std::memory_order_acq_rel)) {
    syscalls_fast_.fetch_add(1, std::memory_order_relaxed);
    acquirep(m, oldp);  // Go's wirep
    syscall_resume(m, gp, oldp);
    return;
  }
  stage4::Runtime::exitsyscall(m, gp, oldp);  // sysmon or a stop took it
}

// The syscall half of Go's retake, on sysmon: pp has been in one call for
// a whole sysmon round, or its slice has run out (slice_over: then the
// call need not be one sysmon saw before, as in Go). Hand it off, unless
// it has nothing queued and others are looking for work (then only after
// 10 ms, so that sysmon can go back to its deep sleep).
bool Runtime::retake_syscall(P* pp, Tick& t, Clock::time_point now,
                             bool slice_over) {
  std::uint32_t tick =
      syscalltick_[static_cast<std::size_t>(pp->id)].load(
          std::memory_order_relaxed);
  if (!slice_over &&
      (tick != t.syscalltick || t.syscallwhen == Clock::time_point{})) {
    t.syscalltick = tick;  // a call we see for the first time
    t.syscallwhen = now;
    return false;
  }
  if (pp->runq.stealer().empty() &&
      nmspinning(std::memory_order_relaxed) +
              npidle(std::memory_order_relaxed) >
          0 &&
      now - t.syscallwhen < kRetakeAnyway) {
    return false;
  }
  // From the compare-exchange until handoffp has given the P to an M or
  // to the idle list, the P and its queue are ours and no M's: the M back
  // from the call, finding its P gone, may go idle as the last M, and its
  // checkdead must not call that a deadlock (Go's incidlelocked(-1)).
  outside_work_begin();
  PStatus s = kPSyscall;
  // acq_rel: we own the P (and its queue) only if we win; see the top.
  if (!pp->status.compare_exchange_strong(s, PStatus::kIdle,
                                          std::memory_order_acq_rel)) {
    outside_work_end();
    return false;  // the call returned, or the world is stopping
  }
  syscall_retakes_.fetch_add(1, std::memory_order_relaxed);
  t.syscallwhen = Clock::time_point{};
  trace::Buffer* tb = sysmon_trace_;
  if (tb != nullptr) [[unlikely]] tb->sysmon(trace::SysmonAction::kRetake, pp->id);
  syscall_handoffp(pp, tb, trace::kSysmonThread);  // stage 4's
  outside_work_end();
  return true;
}

}  // namespace gmp::stage5
