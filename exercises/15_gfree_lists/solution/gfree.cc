// Exercise 15, reference solution: Go's gfput and gfget (runtime/proc.go,
// Go 1.19), over the lists of gfree.h.
#include "exercises/15_gfree_lists/gfree.h"

namespace gmp::exercises::gfree {

void gfput(Sched& sched, P& pp, G* gp) {
  // A stack that grew is not what the next goroutine starts with: give it
  // back now rather than keep its memory behind a dead G.
  if (gp->stack.lo != 0 && gp->stack.size != kStartingStackSize) {
    sched.stackfree(gp);
  }
  pp.gfree.push(gp);  // on top: the next gfget reuses it, still warm
  if (pp.gfree.size() < kGFreeSpill) return;
  // Too many for one P: the others may be creating goroutines with none.
  // Sort the batch into two lists first, then one short hold of the lock.
  GList with_stack, without_stack;
  while (pp.gfree.size() >= kGFreeBatch) {
    G* g = pp.gfree.pop();
    (g->stack.lo != 0 ? with_stack : without_stack).push(g);
  }
  std::lock_guard lk(sched.lock);
  // relaxed: the lock orders the lists; n is only a hint outside it.
  sched.n.store(sched.n.load(std::memory_order_relaxed) + with_stack.size() +
                    without_stack.size(),
                std::memory_order_relaxed);
  while (G* g = with_stack.pop()) sched.stack.push(g);
  while (G* g = without_stack.pop()) sched.no_stack.push(g);
}

G* gfget(Sched& sched, P& pp) {
  // A peek at n first: with nothing free anywhere (a program that only
  // creates goroutines), no go() should take the lock. relaxed: a stale
  // value costs one useless acquisition, or one malg.
  if (pp.gfree.empty() && sched.n.load(std::memory_order_relaxed) > 0) {
    // One acquisition for a whole batch; Gs that kept a stack first, so
    // that fewer goroutines need a new one.
    std::lock_guard lk(sched.lock);
    while (pp.gfree.size() < kGFreeBatch) {
      G* g = sched.stack.pop();
      if (g == nullptr) g = sched.no_stack.pop();
      if (g == nullptr) break;
      pp.gfree.push(g);
      sched.n.store(sched.n.load(std::memory_order_relaxed) - 1,
                    std::memory_order_relaxed);
    }
  }
  G* gp = pp.gfree.pop();
  if (gp == nullptr) return nullptr;  // the caller makes a new G (malg)
  if (gp->stack.lo == 0) sched.stackalloc(gp);
  return gp;
}

}  // namespace gmp::exercises::gfree
