// Stage 2's LockOSThread (Go 1.0's lockedm in its M-only scheduler):
// stoplockedm, startlockedm, and matchmg, which gives a place an M left to
// another M.
#include <mutex>
#include "common/check.h"
#include "stage2_global_queue/locked_wait.h"
#include "stage2_global_queue/runtime.h"

namespace gmp::stage2 {

void Runtime::stoplockedm(M* m) {
  std::unique_lock lk(sched_);
  ++nmidlelocked_;
  matchmg();
  checkdead();
  wait_for_locked_g(m, lk, [m] { return m->lockedready; });
  m->lockedready = false;
}

void Runtime::startlockedm(M* m, G* gp) {
  auto* lm = static_cast<M*>(gp->lockedm);
  GMP_CHECK(lm != m && !lm->lockedready, "startlockedm: bad hand-over");
  casgstatus(gp, GStatus::kRunnable, GStatus::kRunning);
  gp->last_m.store(lm->id, std::memory_order_relaxed);
  ++stats_.context_switches;
  --nmidlelocked_;  // lm runs from now on, in m's place
  lm->lockedready = true;
  wake_locked_m(lm);
}

void Runtime::matchmg() {
  if (grq_size_ > 0 || (!timers_.empty() && timer_m_ == nullptr)) {
    wake_idle_m();
  }
}

}  // namespace gmp::stage2
