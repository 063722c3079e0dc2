// Stage 3's timers: a heap per P (Go 1.14, runtime/time.go). A goroutine's
// timer, its sleep's included, goes into the heap of the P it runs on,
// under that P's own lock; the M holding the P fires the due ones in
// findRunnable (Go 1.19's checkTimers, there too); an M looking for work fires
// other Ps' (steal_work's last round); the idle M on duty sleeps until the
// earliest timer of all Ps. Stage 2 has one heap under the sched lock,
// which every sleep and every firing takes.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

#include "common/storeload.h"
#include "common/sudog.h"
#include "stage3_gmp/runtime.h"

namespace gmp::stage3 {

namespace {

using Clock = RuntimeTimer::Clock;
constexpr auto to_ns = RuntimeTimer::ns;  // never 0: 0 means "no timer"

// pp->timer0_when follows the heap's top. pp->timers_lock held.
void update_timer0(P* pp) {
  pp->timer0_when.store(pp->timers.empty() ? 0 : to_ns(pp->timers.earliest()),
                        std::memory_order_relaxed);
}

}  // namespace

void Runtime::add_timer(P* pp, RuntimeTimer* t) {
  bool earliest = false;
  std::int64_t when = 0;  // read under the lock: once t is in the heap,
  {                       // a ticker's tick may move it (take_due)
    std::lock_guard lk(pp->timers_lock);
    earliest = pp->timers.push(t);
    when = to_ns(t->when);
    if (earliest) update_timer0(pp);
  }
  if (!earliest) return;  // the P's earlier timer is watched already
  // Go's wakeNetPoller: the M on duty must not sleep past this one (read
  // without the sched lock, as Go reads sched.pollUntil), and with nobody
  // on duty, an M spins on an idle P (wakep): it runs the timer if it is
  // due, and otherwise goes idle and takes the duty. The fence orders our
  // timer0_when before the read of duty_until_ (stopm's pairs with it):
  // an M that leaves the duty meanwhile sees our timer; and before wakep's
  // reads of nmspinning and npidle, as wakep's own fence would.
  storeload_fence();
  std::int64_t until = duty_until_.load(std::memory_order_seq_cst);
  if (until != 0 && until <= when) return;  // it wakes in time
  if (until != 0) {
    std::lock_guard lk(sched_);
    if (timer_m_.load(std::memory_order_relaxed) != nullptr) {
      if (when < duty_until_.load(std::memory_order_relaxed)) {
        wake_duty_m();  // it sleeps again, less
      }
      return;
    }
  }
  wakep_fenced();  // the fence above is wakep's too
}

bool Runtime::del_timer(RuntimeTimer* t) {
  for (;;) {
    // acquire: see RuntimeTimer::owner. Null: in no heap (fired, stopped,
    // or its run has ended).
    auto* pp = static_cast<P*>(t->owner.load(std::memory_order_acquire));
    if (pp == nullptr) return false;
    std::lock_guard lk(pp->timers_lock);
    // A resize moved it meanwhile (drain_into): look in its new heap.
    if (t->owner.load(std::memory_order_relaxed) != pp) continue;
    pp->timers.remove(t);
    update_timer0(pp);
    return true;
  }
}

std::uint32_t Runtime::run_timers(P* from, P* onto, Clock::time_point now) {
  std::int64_t next = from->timer0_when.load(std::memory_order_relaxed);
  if (next == 0 || next > to_ns(now)) return 0;  // none due: no lock
  thread_local std::vector<G*> due;
  thread_local std::vector<TimerFiring> fire;
  bool more = false;
  {
    std::lock_guard lk(from->timers_lock);
    from->timers.take_all_due(now, fire, [](RuntimeTimer* t) {
      auto* s = static_cast<Sudog<G*>*>(t->arg);
      if (s->try_claim()) due.push_back(s->g);  // else cancelled meanwhile
    });  // the functions in `fire`: called below, unlocked
    update_timer0(from);
    more = !from->timers.empty();
  }
  auto n = static_cast<std::uint32_t>(due.size() + fire.size());
  PCounters::inc(from == onto ? onto->counters.timers_run
                              : onto->counters.timers_stolen,
                 n);
  for (G* gp : due) ready(gp, onto);
  due.clear();
  for (const TimerFiring& f : fire) f();
  fire.clear();
  // The M on duty may have been the one that fired them (it took a P): if
  // nobody is on duty now, an M spins on an idle P and then takes it.
  if (more && timer_m_.load(std::memory_order_relaxed) == nullptr) wakep();
  return n;
}

void Runtime::move_timers(P* from, P* to) {
  std::lock_guard lt(to->timers_lock);  // the world is stopped: no other
  std::lock_guard lf(from->timers_lock);  // thread holds two at once
  from->timers.drain_into(to->timers);
  update_timer0(from);
  update_timer0(to);
}

void Runtime::clear_timers() {
  for (auto& pp : allp_) {
    std::lock_guard lk(pp->timers_lock);
    pp->timers.clear();
    update_timer0(pp.get());
  }
}

Runtime::Clock::time_point Runtime::earliest_timer() const {
  std::int64_t best = 0;
  int procs = gomaxprocs_.load(std::memory_order_relaxed);
  for (int i = 0; i < procs; ++i) {
    std::int64_t w = allp_[static_cast<std::size_t>(i)]->timer0_when.load(
        std::memory_order_relaxed);
    if (w != 0 && (best == 0 || w < best)) best = w;
  }
  if (best == 0) return Clock::time_point::max();
  return Clock::time_point(std::chrono::nanoseconds(best));
}

bool Runtime::any_timers() const {
  return earliest_timer() != Clock::time_point::max();
}

}  // namespace gmp::stage3
