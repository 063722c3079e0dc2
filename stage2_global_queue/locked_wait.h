/// \file
/// The two halves of an M's wait for its locked goroutine (stoplockedm and
/// startlockedm, stages 2 and 3): the M sleeps on its park note until the
/// goroutine is handed to it, and the hander wakes it only if it sleeps.
#pragma once

#include "trace/tracer.h"

namespace gmp::stage2 {

/// stoplockedm's sleep: m (an M with a `park` Note and a `lockedwait` flag,
/// both under the scheduler's lock) sleeps, with `lk`, that lock, released
/// meanwhile, until `handed()` (read under the lock) is true. If it is true
/// already (the goroutine was readied and handed over before m got here),
/// there is no sleep. `lk` held on entry and on return.
template <class M, class Lock, class Pred>
void wait_for_locked_g(M* m, Lock& lk, Pred handed) {
  while (!handed()) {
    m->park.clear();
    m->lockedwait = true;
    lk.unlock();
    if (trace::Buffer* t = m->trace) [[unlikely]] t->m_park();
    m->park.sleep();
    if (trace::Buffer* t = m->trace) [[unlikely]] t->m_unpark();
    lk.lock();
  }
}

/// startlockedm's wake-up, the scheduler's lock held, after it has made
/// `handed()` true for lm: lm is woken if it sleeps in wait_for_locked_g
/// (its note takes one wake-up; if it is not asleep yet, it sees handed()
/// before it would sleep).
template <class M>
void wake_locked_m(M* lm) {
  if (lm->lockedwait) {
    lm->lockedwait = false;
    lm->park.wakeup();
  }
}

}  // namespace gmp::stage2
