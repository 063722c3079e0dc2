// Stage 2's M loop (protocols 2 and 3 of runtime.h): a goroutine's first
// and last frame, mstart (Go's schedule), find_runnable, execute, park_m,
// gosched_m, goexit0; then the Scheduler interface and the free functions.
#include <chrono>
#include <mutex>
#include <string>
#include <utility>
#include "common/check.h"
#include "common/errors.h"
#include "stage2_global_queue/goroutine_dump.h"
#include "stage2_global_queue/runtime.h"
#include "stage2_global_queue/signals.h"
#include "stage2_global_queue/switch.h"
#include "stage2_global_queue/tls.h"
#include "stage2_global_queue/trace_points.h"

namespace gmp::stage2 {

using Clock = std::chrono::steady_clock;

// A goroutine's life on its own stack, up to the destruction of its
// function; whether it finished (false: unwound by Goexit). Returns to
// goroutine_entry, which ends it.
bool goroutine_body(G* gp) noexcept {
  on_goroutine_start();
  bool finished = false;
  try {
    gp->fn();
    finished = true;
  } catch (const Goexit&) {
    // ended by the runtime at exit
  } catch (...) {
    die_of_uncaught(*getm()->rt, gp);
  }
  if (gp->goid == 1) getm()->rt->exit_after_main();  // still goroutine 1
  gp->fn = nullptr;  // its destructors run while it is still a goroutine
  return finished;
}

// The first and last frame of every goroutine. Neither it nor mcall_exit
// is instrumented by ThreadSanitizer: they never return, and a frame that
// never returns stays on the shadow stack of the fiber, which the G's
// next goroutine reuses; 65,536 of them end the run
// (ApiSuite.StressSpawnAndJoinSeventyThousandTimes).
__attribute__((no_sanitize("thread"))) void goroutine_entry(
    void* arg) noexcept {
  G* gp = static_cast<G*>(arg);
  const bool finished = goroutine_body(gp);
  M* m = getm();  // fresh: the goroutine may have moved between Ms
  m->call = MCall::kGoexit;
  m->exit_finished = finished;
  mcall_exit(m, gp);
}

void Runtime::mstart(M* m) {
  setm_core(m);
  m->trace = trace_.buffer(m->id);
  init_g0(m);
  init_m_signals(m);
  for (bool exit = false; !exit;) {
    G* gp = m->lockedg;
    if (gp != nullptr) {
      stoplockedm(m);  // a locked M runs its goroutine only: wait for it
    } else if ((gp = find_runnable(m)) == nullptr) {
      break;  // the run is over
    }
    execute(m, gp);  // returns when gp switches back to g0
    trace_go_stop(m, gp);
    switch (m->call) {
      case MCall::kPark: park_m(m, gp); break;
      case MCall::kGosched: gosched_m(m, gp); break;
      case MCall::kGoexit: exit = goexit0(m, gp); break;
      default:  // kNone, or a value this stage gives no meaning
        fatal("mstart: a goroutine switched to g0 for nothing");
    }
  }
  fini_m_signals(m);
  setm_core(nullptr);
}

//! [find_runnable]
// The next goroutine for m, or null when the runtime stops. Sleeps while
// there is nothing to run.
G* Runtime::find_runnable(M* m) {
  std::unique_lock lk(sched_);
  for (;;) {
    if (stopping_) return nullptr;
    Clock::time_point now = Clock::now();
    if (!timers_.empty()) run_timers(now, m->fire);  // (no call for none)
    if (!m->fire.empty()) [[unlikely]] {  // timers' functions, unlocked
      lk.unlock();
      for (const TimerFiring& f : m->fire) f();
      m->fire.clear();
      lk.lock();
      // On to the queue, not to the timers again: tickers due again by now
      // would starve every goroutine (TimeSuite.StressTickersDestroyed...).
      if (stopping_) return nullptr;
      now = Clock::now();
    }
    // More Ms than places run when an idle M on timer duty woke by itself
    // while locked Ms' spares ran: then this one goes idle again.
    G* gp = mcount_ - nmidle_ - nmidlelocked_ > config_.procs ? nullptr
                                                               : globrunqget();
    if (gp != nullptr && gp->lockedm != nullptr) [[unlikely]] {
      startlockedm(m, gp);  // its M runs it, in our place
      gp = nullptr;
    }
    if (gp != nullptr) {
      casgstatus(gp, GStatus::kRunnable, GStatus::kRunning);
      gp->started = true;
      gp->last_m.store(m->id, std::memory_order_relaxed);
      ++stats_.context_switches;
      // This M may have been on timer duty (or nobody is): hand the duty to
      // an idle M, or sleepers would wait until some M runs out of work.
      if (!timers_.empty() && timer_m_ == nullptr) wake_idle_m();
      // The trace: the GRQ's length (read under the lock), and gp starts
      // here (its switch follows at once). One test when tracing is off.
      if (trace::Buffer* t = m->trace) [[unlikely]] {
        t->queues(trace::kNoP, 0, grq_size_);
        t->go_start(gp->goid.load(std::memory_order_relaxed), trace::kNoP);
      }
      return gp;
    }
    // Nothing to run: go idle (Go's stopm), the first idle M on timer duty.
    mput(m);
    checkdead();
    bool timer_duty = !timers_.empty() && timer_m_ == nullptr;
    if (timer_duty) timer_m_ = m;
    Clock::duration timeout = timer_duty ? timers_.earliest() - now
                                         : Clock::duration::max();
    m->park.clear();
    lk.unlock();
    if (trace::Buffer* t = m->trace) [[unlikely]] t->m_park();
    if (timer_duty) {
      m->park.tsleep(timeout);
    } else {
      m->park.sleep();
    }
    if (trace::Buffer* t = m->trace) [[unlikely]] t->m_unpark();
    lk.lock();
    if (timer_m_ == m) timer_m_ = nullptr;
    if (m->idle) mremove(m);  // timed out: nobody took us off the list
  }
}
//! [find_runnable]

void Runtime::execute(M* m, G* gp) {
  m->curg = gp;
  m->call = MCall::kNone;
  gogo(m, gp);
  m->curg = nullptr;
}
//! [park_m]

// Protocol 3, on g0 once gp's registers are saved (Go's park_m).
void Runtime::park_m(M* m, G* gp) {
  Sudog<G*>* s = m->park_sudog;
  {
    std::lock_guard lk(sched_);
    if (main_done_) {
      // Exiting: do not park. Nobody can have claimed s (its object's lock
      // is still held), so cancel and unlink it; gp throws Goexit.
      GMP_CHECK(s->try_cancel(), "a sudog was claimed before it was parked");
      unlink_cancelled_locked(*s);  // a select's other cases too
      casgstatus(gp, GStatus::kRunning, GStatus::kRunnable);
      globrunqput(gp);
    } else {
      gp->waiting = s;
      gp->waitreason.store(m->park_reason, std::memory_order_relaxed);
      gp->waitsince.store(coarse_now().time_since_epoch().count(),
                          std::memory_order_relaxed);
      casgstatus(gp, GStatus::kRunning, GStatus::kWaiting);
      if (m->park_reason != WaitReason::kSleep) {
        ++nblocked_;
      } else {  // Go's resetForSleep: the G's own timer
        gp->timer.when = m->park_until;
        gp->timer.arg = s;
        add_timer_locked(&gp->timer);
      }
    }
  }
  // Only now may a waker see gp: release the object's lock.
  m->park_unlock();
}
//! [park_m]

// Go's gosched_m: gp goes to the GRQ's tail.
void Runtime::gosched_m(M*, G* gp) {
  std::lock_guard lk(sched_);
  casgstatus(gp, GStatus::kRunning, GStatus::kRunnable);
  globrunqput(gp);
}

// Go's goexit0: gp is dead; its G and stack go to the free list. If it
// was locked to m, m's thread ends (Go 1.10+: the goroutine may have left
// it in a state no other should see), and another M takes its place.
bool Runtime::goexit0(M* m, G* gp) {
  // Under ThreadSanitizer its fiber goes back to the pool: TSan counts
  // fibers as threads (8,128 at most), and a dead G in the free list needs
  // none (10,000 goroutines left running by Go's TestNonblockRecvRace).
  destroy_fiber(gp);
  std::lock_guard lk(sched_);
  casgstatus(gp, GStatus::kRunning, GStatus::kDead);
  ++(m->exit_finished ? stats_.goroutines_finished : stats_.goroutines_exited);
  const bool locked = gp->lockedm != nullptr;
  if (locked) [[unlikely]] {
    gp->lockedm = nullptr;
    m->lockedg = nullptr;  // locked_ext stays: a new M is not cloned from us
    --mcount_;
    matchmg();
  }
  gfput(gp);
  if (--live_ == 0 && main_done_) all_dead_.wakeup();  // once per run
  return locked;
}

Sched::G Sched::current_g(const char* op) {
  M* m = getm();
  if (m == nullptr || m->curg == nullptr) [[unlikely]] {
    throw UsageError(std::string(op) +
                     " called outside a goroutine: only goroutines of a "
                     "running stage2::Runtime may call it (start one with "
                     "Runtime::run(main) and call it from main or from a "
                     "goroutine started with go())");
  }
  return m->curg;
}

std::uint64_t Sched::goid(G g) noexcept { return g->goid; }

bool Sched::park(Sudog<G>& s, ParkUnlock unlock, WaitReason why) {
  return park_current(s.g, s, unlock, why, Clock::time_point{});
}

void Sched::ready(Sudog<G>& s) noexcept {
  G gp = s.g;  // s may vanish once gp runs again
  Runtime* rt = getm()->rt;
  std::lock_guard lk(rt->sched_);
  rt->ready(gp);
}

void Sched::add_timer(RuntimeTimer& t) {
  current_g("time");  // a UsageError on a plain thread
  getm()->rt->add_timer(&t);
}

bool Sched::del_timer(RuntimeTimer& t) {
  // acquire: see RuntimeTimer::owner. Null: in no heap (fired, stopped,
  // or its run has ended).
  void* owner = t.owner.load(std::memory_order_acquire);
  return owner != nullptr && static_cast<Runtime*>(owner)->del_timer(&t);
}

void Sched::go_from_timer(std::function<void()> fn) {
  M* m = getm();  // on g0, in find_runnable
  m->rt->newproc(std::move(fn), m, nullptr);
}

void go(GoFunc fn, const std::type_info* type) {
  Sched::current_g("go");  // a UsageError on a plain thread
  if (!fn) throw UsageError("go called with an empty function");
  M* m = getm();
  m->rt->newproc(std::move(fn), m, type);
}

int num_goroutine() {
  Sched::current_g("num_goroutine");  // a UsageError on a plain thread
  Runtime* rt = getm()->rt;
  std::lock_guard lk(rt->sched_);
  return static_cast<int>(rt->live_);
}

void yield() {
  G* gp = Sched::current_g("yield");
  M* m = getm();
  if (m->rt->exiting_.load(std::memory_order_relaxed)) throw Goexit{};
  m->call = MCall::kGosched;
  mcall(m, gp);
}

void lock_os_thread() {
  Sched::current_g("lock_os_thread");  // a UsageError on a plain thread
  M* m = getm();
  m->rt->template_thread_.start();  // before this thread may be changed
  m->lock_os_thread();
}

void unlock_os_thread() {
  Sched::current_g("unlock_os_thread");  // a UsageError on a plain thread
  getm()->unlock_os_thread();
}

std::uint32_t lock_os_count() {
  Sched::current_g("lock_os_count");  // a UsageError on a plain thread
  return getm()->locked_ext;
}

void sleep_for(std::chrono::nanoseconds d) {
  G* gp = Sched::current_g("sleep_for");
  if (d <= std::chrono::nanoseconds::zero()) return;  // as Go's time.Sleep
  if (!park_sleep(gp, d)) throw Goexit{};
}

}  // namespace gmp::stage2
