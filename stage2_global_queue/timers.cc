// Stage 2's timers (Go's addtimer, deltimer and the timer loop of 1.0's
// timerproc, here run by the Ms): one heap under the sched lock.
#include <chrono>
#include <mutex>
#include "stage2_global_queue/runtime.h"

namespace gmp::stage2 {

using Clock = std::chrono::steady_clock;

// If the GRQ was empty, the caller's M takes the first sleeper readied
// next, so only the others need to wake idle Ms.
void Runtime::run_timers(Clock::time_point now,
                         std::vector<TimerFiring>& fire) {
  bool ours = grq_head_ == nullptr;
  timers_.take_all_due(now, fire, [&](RuntimeTimer* t) {
    auto* s = static_cast<Sudog<G*>*>(t->arg);
    if (!s->try_claim()) return;  // cancelled meanwhile
    ready(s->g, /*wake=*/!ours);
    ours = false;
  });  // the functions in `fire` are called once sched_ is released
}

void Runtime::add_timer_locked(RuntimeTimer* t) {
  if (timers_.push(t) && timer_m_ != nullptr && timer_m_->idle) {
    // The new timer is the earliest: the M on timer duty must resleep.
    mremove(timer_m_);
    timer_m_->park.wakeup();
  } else if (timer_m_ == nullptr && t->f != nullptr) {
    // A program's timer, set by a goroutine that runs on: an idle M takes
    // timer duty. (A sleeper's M comes to find_runnable next and takes it.)
    wake_idle_m();
  }
}

void Runtime::add_timer(RuntimeTimer* t) {
  std::lock_guard lk(sched_);
  add_timer_locked(t);
}

bool Runtime::del_timer(RuntimeTimer* t) {
  std::lock_guard lk(sched_);
  return timers_.remove(t);
}

}  // namespace gmp::stage2
