// Exercise 13, reference solution: the signal handler's decisions, as
// stage 5 makes them (stage5_preemption/async_preempt.cc, user_code.cc)
// after Go's wantAsyncPreempt, isAsyncSafePoint and sigctxt.pushCall.
#include "exercises/13_safe_point/safepoint.h"

#include <cstring>

namespace gmp::exercises::safepoint {

bool UserCode::contains(std::uintptr_t pc) const {
  // Find the first range that starts after pc; the one before it, if
  // any, is the last that starts at or before pc: the only candidate.
  std::size_t lo = 0, hi = ranges_.size();  // the answer is in [lo, hi]
  while (lo < hi) {
    std::size_t mid = lo + (hi - lo) / 2;
    if (ranges_[mid].start <= pc) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo > 0 && pc < ranges_[lo - 1].end;
}

SafePoint check_safe_point(const Interrupted& in) {
  // Go's wantAsyncPreempt: a late signal (the request already served, or
  // the goroutine gone) is simply ignored.
  if (!in.running_g || !in.preempt) return SafePoint::kNoRequest;
  // On g0 or the signal stack the runtime itself runs: never stop it.
  std::uintptr_t sp = in.regs.sp;
  if (sp <= in.gstack.lo || sp > in.gstack.hi) return SafePoint::kNotOnGStack;
  // A lock held across the yield could be wanted by the next goroutine
  // on this P: a deadlock.
  if (in.locks > 0) return SafePoint::kLocksHeld;
  // Only code compiled for it may be stopped anywhere: not malloc, not
  // the scheduler, not the trampoline.
  if (in.user_code == nullptr || !in.user_code->contains(in.regs.pc)) {
    return SafePoint::kNotUserCode;
  }
  // The trampoline's frame goes below the red zone, on this stack.
  if (sp - in.gstack.lo < kAsyncPreemptStack) return SafePoint::kStackTooLow;
  return SafePoint::kSafe;
}

void inject_async_preempt(Regs& regs, std::uintptr_t trampoline) {
  // Below the 128 bytes the interrupted function may be using without
  // having moved sp (Go's own code has no red zone, so Go's pushCall
  // pushes right at sp), the return address: as if the instruction at pc
  // had been `call trampoline`. memcpy: sp need not be 8-byte aligned.
  std::uintptr_t sp = regs.sp - kRedZone - sizeof(std::uintptr_t);
  std::memcpy(reinterpret_cast<void*>(sp), &regs.pc, sizeof regs.pc);
  regs.sp = sp;
  regs.pc = trampoline;
}

}  // namespace gmp::exercises::safepoint
