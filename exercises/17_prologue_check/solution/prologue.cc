// Exercise 17, reference solution: Go's preemptone (its cooperative half),
// the x86-64 prologue check (cmd/internal/obj/x86/obj6.go, stacksplit),
// newstack, releasem and execute (runtime/stack.go, proc.go; Go 1.19).
#include "exercises/17_prologue_check/prologue.h"

#include <stdexcept>

namespace gmp::exercises::prologue {

void preemptone(G& gp) {
  gp.preempt.store(true, std::memory_order_relaxed);
  // relaxed, as Go's plain stores: the goroutine sees the request at some
  // later prologue; nothing else is published with it.
  gp.stackguard0.store(kStackPreempt, std::memory_order_relaxed);
}

bool needs_morestack(std::uintptr_t sp, std::uintptr_t stackguard0,
                     std::size_t framesize) {
  if (framesize <= kStackSmall) return sp <= stackguard0;  // CMPQ SP, guard
  const std::uintptr_t below = framesize - kStackSmall;
  if (framesize <= kStackBig) {
    // The runtime keeps sp above kStackBig: sp - below cannot wrap.
    return sp - below <= stackguard0;  // LEAQ -below(SP); CMPQ
  }
  // A huge frame: sp - below may wrap past 0 and look like a high,
  // harmless address (JCS morestack).
  if (sp < below) return true;
  return sp - below <= stackguard0;
}

namespace {

bool can_preempt_m(const M& m) {
  return m.locks == 0 && !m.mallocing && !m.preemptoff && m.p_running;
}

}  // namespace

Morestack newstack(G& gp, const M& m, std::uintptr_t sp, std::size_t max_frame) {
  // Read once: another thread may be asking for a preemption right now.
  const std::uintptr_t guard = gp.stackguard0.load(std::memory_order_relaxed);
  if (guard == kStackPreempt) {
    if (!can_preempt_m(m)) {
      // Run on for now, with the real guard; gp.preempt stays set, and
      // releasem asks again when the M leaves its critical section.
      gp.stackguard0.store(gp.stack_lo + kStackGuard, std::memory_order_relaxed);
      return Morestack::kKeepRunning;
    }
    return Morestack::kPreempt;  // as if the goroutine called Gosched
  }
  // A real overflow. Twice the size, and more until the frame fits.
  const std::size_t oldsize = gp.stack_hi - gp.stack_lo;
  const std::size_t used = gp.stack_hi - sp;
  const std::size_t needed = max_frame + kStackGuard;
  std::size_t newsize = oldsize * 2;
  while (newsize - used < needed && newsize <= kMaxStackSize) newsize *= 2;
  if (newsize > kMaxStackSize) {
    throw std::runtime_error(
        "stack overflow: goroutine stack exceeds 1000000000-byte limit");
  }
  copystack(gp, newsize);
  return Morestack::kGrew;
}

void releasem(G& gp, M& m) {
  --m.locks;
  if (m.locks == 0 && gp.preempt.load(std::memory_order_relaxed)) {
    // The request that newstack deferred: the next prologue traps again.
    gp.stackguard0.store(kStackPreempt, std::memory_order_relaxed);
  }
}

void execute(G& gp) {
  gp.preempt.store(false, std::memory_order_relaxed);
  gp.stackguard0.store(gp.stack_lo + kStackGuard, std::memory_order_relaxed);
}

}  // namespace gmp::exercises::prologue
