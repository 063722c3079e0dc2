// Stage 3: LockOSThread's scheduler side (Go's stoplockedm, startlockedm,
// and the thread's exit when its locked goroutine ends). The goroutine's
// side (lock_os_thread, unlock_os_thread) is in schedule.cc, beside the
// other calls a goroutine makes.
//
// A locked goroutine G runs on its M and nowhere else, and that M runs
// nothing else. Each M still needs a P to run G, so when G waits, its M
// gives the P away (stoplockedm) and sleeps; G, readied, goes to a run
// queue like any goroutine; the M that takes it from there sees it is
// another M's and hands that M its own P (startlockedm), then goes idle.
#include <mutex>

#include "common/check.h"
#include "stage2_global_queue/locked_wait.h"
#include "stage3_gmp/runtime.h"

namespace gmp::stage3 {

//! [stoplockedm]
void Runtime::stoplockedm(M* m) {
  GMP_CHECK(m->lockedg != nullptr &&
                m->lockedg->lockedm == static_cast<stage2::MCore*>(m),
            "stoplockedm: inconsistent locking");
  if (m->p != nullptr) handoffp(releasep(m));  // another M runs the P
  std::unique_lock lk(sched_);
  ++nmidlelocked_;  // Go's incidlelocked(1): idle, for checkdead
  checkdead();
  stage2::wait_for_locked_g(m, lk, [m] { return m->nextp != nullptr; });
  P* pp = m->nextp;
  m->nextp = nullptr;
  lk.unlock();
  GMP_CHECK(m->lockedg->readgstatus() == GStatus::kRunnable,
            "stoplockedm: the locked goroutine is not runnable");
  acquirep(m, pp);
}
//! [stoplockedm]

void Runtime::startlockedm(M* m, G* gp) {
  auto* lm = static_cast<M*>(gp->lockedm);
  GMP_CHECK(lm != m, "startlockedm: the goroutine is locked to this M");
  P* pp = releasep(m);
  {
    std::lock_guard lk(sched_);
    --nmidlelocked_;  // Go's incidlelocked(-1): lm runs from now on
    lm->nextp = pp;
    stage2::wake_locked_m(lm);
  }
  stopm(m);  // until a P comes our way
}

void Runtime::mexit_locked(M* m) {
  handoffp(releasep(m));
  std::lock_guard lk(sched_);
  --mcount_;  // Go's sched.nmfreed: a thread fewer
  checkdead();
}

}  // namespace gmp::stage3
