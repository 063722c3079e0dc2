// Exercise 12, reference solution: the arithmetic of Go's sysmon sleep and
// the per-P body of Go's retake (proc.go), as stage 5 has them
// (stage5_preemption/runtime.cc and syscall.cc).
#include "exercises/12_sysmon/sysmon.h"

#include <algorithm>

namespace gmp::exercises::sysmon {

std::chrono::microseconds sysmon_delay(int idle_rounds) {
  // Go's loop keeps `delay` across rounds: 20 us while idle <= 50, then
  // doubled once per quiet round. As a function of idle that is
  // 20 us << (idle - 50), capped; doubling step by step and stopping at
  // the cap avoids the shift's overflow for a long quiet spell.
  std::chrono::microseconds delay = kSysmonMinDelay;
  for (int quiet = kQuietRounds; quiet < idle_rounds && delay < kSysmonMaxDelay;
       ++quiet) {
    delay *= 2;
  }
  return std::min(delay, kSysmonMaxDelay);
}

namespace {

// The preemption half of retake (Go's schedtick check, then preemptone).
Action preempt_long_run(const PSnapshot& pp, Nanos now, SysmonTick& pd) {
  if (!pd.sched_seen || pp.schedtick != pd.schedtick) {
    // A slice began since the last look (or this is the first look at
    // it): remember when we saw it begin. It has not run long yet.
    pd.sched_seen = true;
    pd.schedtick = pp.schedtick;
    pd.schedwhen = now;
    return Action::kNone;
  }
  // The same slice as last time: it is too long once it has lasted a
  // whole forcePreemptNS. The memory stays, so that the next round asks
  // again if this request finds no safe point.
  return now - pd.schedwhen >= kForcePreemptNS ? Action::kPreempt
                                               : Action::kNone;
}

// The syscall half of retake: a P left in one call since the last look.
Action retake_syscall(const PSnapshot& pp, const SchedSnapshot& sched,
                      Nanos now, SysmonTick& pd) {
  if (!pd.syscall_seen || pp.syscalltick != pd.syscalltick) {
    pd.syscall_seen = true;  // a call seen for the first time
    pd.syscalltick = pp.syscalltick;
    pd.syscallwhen = now;
    return Action::kNone;
  }
  // Nothing queued and someone else looking for work: the P is not
  // needed now, but is retaken after 10 ms anyway (so that sysmon, which
  // would otherwise look at it every round, can go back to deep sleep).
  if (pp.runq_empty && sched.nmspinning + sched.npidle > 0 &&
      now - pd.syscallwhen < kRetakeAnyway) {
    return Action::kNone;
  }
  pd.syscall_seen = false;  // handed off: Go's pp.syscalltick++
  return Action::kRetake;
}

}  // namespace

Action retakep(const PSnapshot& pp, const SchedSnapshot& sched, Nanos now,
               SysmonTick& pd) {
  switch (pp.status) {
    case PStatus::kRunning:
      return preempt_long_run(pp, now, pd);
    case PStatus::kSyscall:
      return retake_syscall(pp, sched, now, pd);
    case PStatus::kIdle:
    case PStatus::kStopped:
      break;
  }
  // No slice runs and no call is under way: whatever runs next is new.
  pd.sched_seen = false;
  pd.syscall_seen = false;
  return Action::kNone;
}

}  // namespace gmp::exercises::sysmon
