// Stage 3: goroutines, run queues, Ms and Ps (Go's proc.go: newproc,
// runqput, ready, wakep, startm,
// stopm, mput/mget, pidleput/pidleget, acquirep/releasep).
//
// Where runnable goroutines go (runqput):
//   - a new goroutine (go) and a readied one (ready) go to the current P's
//     runnext; the goroutine displaced from runnext goes to its queue;
//   - a full queue moves its oldest half, plus the new one, to the GRQ in
//     one batch (runqputslow);
//   - yield() puts the goroutine at the local queue's tail (the notes'
//     Gosched, and Go's goyield), or at the GRQ's if it is alone on its P
//     and goroutines wait there (Go's own Gosched always uses the GRQ);
//   - the runnext goroutine inherits the current time slice.
//
// Spinning Ms and wakep (Go's "Worker thread parking/unparking")
// ----------------------------------------------------------------
// An M out of work that looks for some to steal is spinning. Submitting
// work (go, ready) wakes an idle M only if there is an idle P and no M is
// spinning (wakep): a spinning M will find the work. So that no work is
// lost (a goroutine queued while every M parks), the two sides follow
// Go's protocol, the delicate dance:
//   1. submit: put the goroutine in a queue, then check nmspinning;
//   2. stop spinning: decrement nmspinning, then check every queue again,
//      and go back to spinning if anything is there;
//   3. with no idle P, the submitter raises needspinning, then looks at
//      npidle again; an M about to give its P up (not spinning, so it
//      skips rule 2) checks needspinning before and after it puts the P
//      on the idle list, and spins instead if it is raised (Go 1.21's
//      fix of a lost wake-up, golang/go#45867: without it, a goroutine
//      queued while the last busy M was giving up its P waited until the
//      busy goroutine scheduled, forever if it spins on the queued one);
// and a spinning M that finds work calls wakep, so that another M spins
// for the work that may follow. At most half the busy Ps' worth of Ms spin
// (2 * nmspinning < GOMAXPROCS - npidle).
#include <algorithm>
#include <chrono>
#include <mutex>
#include <span>
#include <string>
#include <system_error>
#include <utility>

#include "common/check.h"
#include "common/storeload.h"
#include "common/errors.h"
#include "stage2_global_queue/switch.h"
#include "stage2_global_queue/trace_points.h"
#include "stage3_gmp/runtime.h"

namespace gmp::stage3 {

using Clock = std::chrono::steady_clock;
using Overflow = LocalRunQueue<256>::Overflow;

namespace {
constexpr std::uint64_t kGoidBatch = 16;  // Go's _GoidCacheBatch
}  // namespace

// ---- Goroutines ------------------------------------------------------------

G* Runtime::newproc(GoFunc fn, M* m,
                     const std::type_info* type) {
  if (exiting_.load(std::memory_order_acquire)) return nullptr;  // dropped
  P* pp = m != nullptr ? m->p : nullptr;
  G* gp = pp != nullptr ? gfget(pp) : nullptr;
  if (gp != nullptr) {
    PCounters::inc(pp->counters.gs_reused);
  } else {
    gp = malg();  // may throw: nothing changed yet
  }
  gp->fn = std::move(fn);  // no stack yet: gostartcallfn, at its first run
  gp->goid.store(newgoid(pp), std::memory_order_relaxed);
  gp->started = false;
  stage2::note_go_create(
      gp,
      m != nullptr && m->curg != nullptr  // none for main or a timer's
          ? m->curg->goid.load(std::memory_order_relaxed)
          : 0,
      type);
  if (trace::Buffer* t = m != nullptr ? m->trace : trace_.run_buffer())
      [[unlikely]] {
    stage2::trace_go_create(t, gp, pp != nullptr ? pp->id : trace::kNoP);
  }
  // relaxed: counts; the max only grows, by a CAS when a newer count is
  // higher (a load and a compare per go() otherwise).
  const std::int64_t live = live_.fetch_add(1, std::memory_order_relaxed) + 1;
  for (std::int64_t m = max_live_.load(std::memory_order_relaxed);
       live > m && !max_live_.compare_exchange_weak(
                       m, live, std::memory_order_relaxed);) {
  }
  created_.fetch_add(1, std::memory_order_relaxed);
  casgstatus(gp, GStatus::kDead, GStatus::kRunnable);
  if (pp == nullptr) {
    std::lock_guard lk(sched_);
    globrunqput(gp);
  } else {
    runqput(pp, gp, /*next=*/true);
    wakep_holding_p();
  }
  return gp;
}

G* Runtime::malg() {
  auto g = std::make_unique<GWithP>();  // stage 3's G (g_with_p.h)
  g->runtime = this;
  g->atomicstatus.store(GStatus::kDead, std::memory_order_relaxed);
  G* gp = g.get();
  std::lock_guard lk(allglock_);
  allgs_.push_back(std::move(g));  // publishes the G to scanners; may throw
  return gp;
}

std::uint64_t Runtime::newgoid(P* pp) {
  if (pp == nullptr) return goidgen_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (pp->goidcache == pp->goidcacheend) {
    pp->goidcache =
        goidgen_.fetch_add(kGoidBatch, std::memory_order_relaxed) + 1;
    pp->goidcacheend = pp->goidcache + kGoidBatch;
  }
  return pp->goidcache++;
}

void Runtime::casgstatus(G* gp, GStatus from, GStatus to) {
  // relaxed: the writer that made it `from` handed gp to us through a
  // queue or a lock, which ordered that write before this read.
  GStatus seen = gp->atomicstatus.load(std::memory_order_relaxed);
  if (seen != from) [[unlikely]] bad_gstatus(gp, seen, from, to);
  // release: publishes what was written before the change (readgstatus
  // pairs with it).
  gp->atomicstatus.store(to, std::memory_order_release);
}

// ---- Run queues --------------------------------------------------------------

//! [runqput]
void Runtime::runqput(P* pp, G* gp, bool next) {
  Overflow overflow;
  std::uint32_t n = pp->runq.owner().put(gp, next, overflow);
  if (n == 0) return;
  if (trace::Buffer* t = mtrace()) [[unlikely]] t->grq_put(pp->id, n);
  link_batch(overflow.data(), n);  // before the lock, as Go's runqputslow
  std::lock_guard lk(sched_);
  globrunqputbatch(overflow[0], overflow[n - 1], n);
  ++stats_.runq_overflows;
}
//! [runqput]

void Runtime::ready(G* gp, P* pp) {
  make_runnable(gp);
  runqput(pp, gp, /*next=*/true);
  wakep_holding_p();
}

void Runtime::make_runnable(G* gp) {
  if (gp->waitreason.load(std::memory_order_relaxed) != WaitReason::kSleep) {
    nblocked_.fetch_sub(1, std::memory_order_relaxed);
  }
  gp->waiting = nullptr;
  gp->waitreason.store(WaitReason::kNone, std::memory_order_relaxed);
  casgstatus(gp, GStatus::kWaiting, GStatus::kRunnable);
}

// ---- Ms and Ps ------------------------------------------------------------------

//! [wakep]
void Runtime::wakep() {
  // The StoreLoad of the submitting side: the goroutine just queued is
  // visible before we read nmspinning (pairs with stop_spinning's fence).
  storeload_fence();
  wakep_fenced();
}

void Runtime::wakep_fenced() {
  if (nmspinning_.load(std::memory_order_seq_cst) != 0) return;
  if (npidle_.load(std::memory_order_seq_cst) == 0) {
    // Every P is held, but one of their Ms may be about to give its P up
    // without having seen our work (golang/go#45867): ask it to spin
    // instead (needspinning, checked by findRunnable before and after it
    // drops its P).
    // Raised already (it stays raised while every P is busy): the M that
    // reads it raised spins; one that reads it cleared finds a spinning M
    // (the clearer) that looks at every queue after our fence above.
    if (needspinning_.load(std::memory_order_seq_cst)) return;
    // We raise it: then look again, a P that went idle meanwhile is ours
    // to start an M on (a Dekker pair with findRunnable's pidleput).
    needspinning_.store(true, std::memory_order_seq_cst);
    storeload_fence();
    if (npidle_.load(std::memory_order_seq_cst) == 0) return;
  }
  std::int32_t expected = 0;
  if (!nmspinning_.compare_exchange_strong(expected, 1,
                                           std::memory_order_seq_cst)) {
    return;  // another M started spinning meanwhile: it will find the work
  }
  startm(nullptr, /*spinning=*/true);
}
//! [wakep]

M* Runtime::startm(P* pp, bool spinning) {
  std::unique_lock lk(sched_);
  if (stopping_.load(std::memory_order_relaxed)) {
    // The run is over, but a thread outside the Ms (a watcher, as Go's
    // sysmon retaking a P) may still hand a P off: no M is made or woken
    // now.
    if (pp != nullptr) pidleput(pp);
    if (spinning) nmspinning_.fetch_sub(1, std::memory_order_seq_cst);
    return nullptr;
  }
  if (pp == nullptr) pp = spinning ? pidleget_spinning() : pidleget();
  if (pp == nullptr) {
    if (spinning) nmspinning_.fetch_sub(1, std::memory_order_seq_cst);
    return nullptr;
  }
  M* m = mget();
  if (m == nullptr) {
    reserve_m();
    return newm(pp, spinning);  // still under sched_: stop_ms waits for it
  }
  m->spinning.store(spinning, std::memory_order_relaxed);
  m->nextp = pp;
  ++stats_.wakeups;
  lk.unlock();
  wake_m(m);  // after the unlock (Go's order): m takes sched_ at once
  return m;
}

void Runtime::reserve_m() {
  ++mcount_;
  if (mcount_ > maxmcount_) {
    fatal("thread exhaustion: program exceeds " + std::to_string(maxmcount_) +
          "-thread limit (Ms blocked in system calls count; raise "
          "Config::max_threads)");
  }
}

M* Runtime::newm(P* pp, bool spinning) {
  allm_.push_back(std::make_unique<M>(this, static_cast<int>(allm_.size())));
  M* m = allm_.back().get();
  m->nextp = pp;
  m->spinning.store(spinning, std::memory_order_relaxed);
  if (stack_size_field_.empty()) {  // the stage's, for overflow reports
    stack_size_field_ = std::string(stage_name()) + "::Config.stack_size";
  }
  m->stack_size_field = stack_size_field_.c_str();
  ++stats_.threads_created;
  // A thread cloned from this one would share what its locked goroutine
  // may have changed in it (Go's newm): the template thread makes it.
  if (M* self = getm(); self != nullptr && self->locked_ext != 0) {
    template_thread_.run([this, m] {  // Go's newmHandoff
      std::lock_guard lk(sched_);  // as here: mstart waits for the handle
      newosproc(m);
    });
    return m;
  }
  newosproc(m);
  return m;
}

void Runtime::newosproc(M* m) {
  try {
    m->thread = std::thread(&Runtime::mstart, this, m);
  } catch (const std::system_error& e) {
    fatal(std::string("newm: cannot create M thread ") +
          std::to_string(m->id) + ": " + e.what() +
          " (raise ulimit -u or kernel.threads-max)");
  }
}

void Runtime::stopm(M* m) {
  GMP_CHECK(m->p == nullptr, "stopm: M holds a P");
  GMP_CHECK(!m->spinning.load(std::memory_order_relaxed), "stopm: spinning");
  std::unique_lock lk(sched_);
  for (;;) {
    if (stopping_.load(std::memory_order_relaxed)) return;
    if (P* pp = m->nextp) {
      m->nextp = nullptr;
      ensure_timer_m();  // we leave: another idle M takes timer duty
      bool more = grq_size_.load(std::memory_order_relaxed) > 1;
      lk.unlock();
      acquirep(m, pp);
      if (m->spinning.load(std::memory_order_relaxed)) {
        start_spin_clock(m);  // startm made us spin from now on
      }
      if (more) wakep();  // several are waiting: others may help
      return;
    }
    mput(m);
    bool timer_duty = timer_m_.load(std::memory_order_relaxed) == nullptr &&
                      idle_duty_wanted() &&
                      !gcwaiting_.load(std::memory_order_relaxed);
    if (timer_duty) {
      // On duty before we read the timers (a Dekker pair with add_timer's
      // fence): a timer added meanwhile is seen by timer_deadline below,
      // or its add_timer sees us on duty ("forever", for now, which makes
      // it wait for the sched lock and compare with our real time). Read
      // first and published after, a new earliest timer could be missed by
      // both, and a spinning M that would have seen it found the duty
      // taken: the M on duty slept past the timer.
      timer_m_.store(m, std::memory_order_relaxed);
      duty_until_.store(RuntimeTimer::ns(Clock::time_point::max()),
                        std::memory_order_seq_cst);
      storeload_fence();
    }
    Clock::time_point until = timer_deadline();
    if (timer_duty) {
      duty_until_.store(RuntimeTimer::ns(until), std::memory_order_seq_cst);
    }
    m->park.clear();
    m->parks.fetch_add(1, std::memory_order_relaxed);
    lk.unlock();
    if (trace::Buffer* t = m->trace) [[unlikely]] t->m_park();
    // What a source of events readied while we waited (idle_wait):
    // thread_local, so that waiting allocates nothing (stopm runs on g0,
    // on the M's thread).
    thread_local std::vector<G*> ready;
    if (timer_duty) {
      idle_wait(m, until, ready);
    } else {
      m->park.sleep();
    }
    if (trace::Buffer* t = m->trace) [[unlikely]] t->m_unpark();
    lk.lock();
    for (G* gp : ready) {  // to the GRQ; we take an idle P for them below
      make_runnable(gp);
      globrunqput(gp);
    }
    ready.clear();
    if (timer_m_.load(std::memory_order_relaxed) == m) {
      timer_m_.store(nullptr, std::memory_order_relaxed);
      // Off duty before we look at the timers again (timers_due below,
      // timer_deadline next round): a timer added meanwhile by someone who
      // read our old time is seen (add_timer's fence pairs with this).
      duty_until_.store(0, std::memory_order_seq_cst);
      storeload_fence();
    }
    if (m->idle) {
      mremove(m);  // timed out: nobody took us off the list
    } else if (timer_duty) {
      // Taken off it while our timed sleep ran out: the taker wakes us
      // after its unlock (startm, start_the_world). Take that wake-up now,
      // or it would cut our next sleep short, or be a second one.
      lk.unlock();
      m->park.sleep();
      lk.lock();
    }
    // A timer is due, or our wait readied goroutines onto the GRQ: run
    // them ourselves, on an idle P.
    // (The due timers run in findRunnable, on that P's queue.) Whether we
    // timed out or were woken for another reason (an earlier timer; with a
    // network poller, a first I/O waiter).
    if (m->nextp == nullptr &&
        (grq_size_.load(std::memory_order_relaxed) > 0 || timers_due())) {
      if (P* pp = pidleget()) m->nextp = pp;
    }
  }
}

//! [handoffp]
M* Runtime::handoffp(P* pp) {
  // Work on its queue or in the GRQ: an M runs it now.
  if (!pp->runq.stealer().empty() || !grq_empty()) {
    return startm(pp, /*spinning=*/false);
  }
  // Nobody looks for work (no spinning M, no idle P): an M spins on this
  // P, so that work submitted meanwhile is found (Go's condition).
  if (claim_spinning_if_nobody_looks()) return startm(pp, /*spinning=*/true);
  std::unique_lock lk(sched_);
  if (world_stopping(std::memory_order_relaxed)) {  // under sched_
    pp->status.store(PStatus::kStopped, std::memory_order_relaxed);
    stopped_for_world();
    return nullptr;
  }
  if (!grq_empty() || duty_unwatched()) {
    // Work arrived; or timers or I/O waiters and no M watching them (this
    // was the last M that would have): an M takes the P.
    lk.unlock();
    return startm(pp, /*spinning=*/false);
  }
  pidleput(pp);
  return nullptr;
}
//! [handoffp]

Runtime::Clock::time_point Runtime::timer_deadline() const {
  Clock::time_point until = earliest_timer();
  if (until == Clock::time_point::max()) return until;
  if (npidle_.load(std::memory_order_relaxed) == 0 && until <= Clock::now()) {
    return Clock::time_point::max();
  }
  return until;
}

bool Runtime::timers_due() const { return earliest_timer() <= Clock::now(); }

void Runtime::ensure_timer_m() {
  if (timer_m_.load(std::memory_order_relaxed) != nullptr || !any_timers()) {
    return;
  }
  if (M* idle = mget()) {
    ++stats_.wakeups;
    wake_m(idle);
  }
}

void Runtime::wake_duty_m() {
  if (M* duty = timer_m_.load(std::memory_order_relaxed)) {
    if (duty->idle) {
      mremove(duty);
      wake_m(duty);  // it parks again at once, with the new deadline
    }
  } else if (idle_duty_wanted()) {
    if (M* idle = mget()) {
      ++stats_.wakeups;
      wake_m(idle);
    }
  }
}

bool Runtime::duty_unwatched() const {
  return timer_m_.load(std::memory_order_relaxed) == nullptr &&
         (any_timers() || idle_duty_wanted());
}

bool Runtime::claim_spinning_if_nobody_looks() {
  std::int32_t zero = 0;
  return nmspinning_.load(std::memory_order_seq_cst) +
                 npidle_.load(std::memory_order_seq_cst) ==
             0 &&
         nmspinning_.compare_exchange_strong(zero, 1,
                                             std::memory_order_seq_cst);
}

//! [injectglist]
void Runtime::injectglist(M* m, std::span<G* const> gs) {
  if (gs.empty()) return;
  P* pp = m != nullptr ? m->p : nullptr;
  const std::size_t n = gs.size();
  // Without a P, all go to the GRQ; with one, as many as there are idle
  // Ps (each gets an M below), the rest stay here.
  std::size_t global = n;
  if (pp != nullptr) {
    // Holding a P, we run while the world does not stop, so no exit after
    // main reads these Gs' sudogs while make_runnable clears them.
    for (G* gp : gs) make_runnable(gp);
    global = std::min<std::size_t>(
        n, static_cast<std::size_t>(npidle_.load(std::memory_order_relaxed)));
  }
  if (global > 0) {
    std::lock_guard lk(sched_);
    // Without a P (a plain thread, a watcher), under the lock: exit after
    // main (stage2::cancel_parked) reads them under it, world stopped or
    // not.
    if (pp == nullptr) {
      for (G* gp : gs) make_runnable(gp);
    }
    auto k = static_cast<std::uint32_t>(global);
    link_batch(gs.data(), k);
    globrunqputbatch(gs[0], gs[global - 1], k);
  }
  // Go's startIdle: an M for each idle P, as long as there are any.
  for (std::size_t i = 0; i < global; ++i) {
    if (startm(nullptr, /*spinning=*/false) == nullptr) break;
  }
  if (global == n) return;
  for (std::size_t i = global; i < n; ++i) runqput(pp, gs[i], /*next=*/false);
  // Work queued here: an idle P may take some (rule 1 of the essay above;
  // Go 1.22's injectglist ends with wakep too, golang/go#63555).
  wakep_holding_p();
}
//! [injectglist]

// ---- Extension points (runtime.h): stage 3's versions -------------------------

G* Runtime::poll_network(M*) { return nullptr; }

bool Runtime::idle_duty_wanted() const {
  return timer_deadline() != Clock::time_point::max();
}

void Runtime::idle_wait(M* m, Clock::time_point until, std::vector<G*>&) {
  if (until == Clock::time_point::max()) {
    m->park.sleep();
  } else {
    m->park.tsleep(until - Clock::now());
  }
}

void Runtime::wake_m(M* m) { m->park.wakeup(); }

void Runtime::other_mcall(M*, G*) {
  fatal("mstart: an mcall request stage 3 does not know");
}

trace::StopReason Runtime::stop_reason(stage2::MCall call) const {
  return call == kPreemptCall ? trace::StopReason::kPreempt
                              : stage2::stop_reason(call);
}

void Runtime::mput(M* m) {
  m->idle = true;
  m->schedlink = midle_;
  midle_ = m;
  ++nmidle_;
  checkdead();
}

M* Runtime::mget() {
  M* m = midle_;
  if (m != nullptr) mremove(m);
  return m;
}

void Runtime::mremove(M* m) {
  M** link = &midle_;
  while (*link != m) link = &(*link)->schedlink;
  *link = m->schedlink;
  m->schedlink = nullptr;
  m->idle = false;
  --nmidle_;
}

void Runtime::pidleput(P* pp) {
  GMP_CHECK(pp->runq.stealer().empty(), "pidleput: P has non-empty run queue");
  pp->status.store(PStatus::kIdle, std::memory_order_relaxed);
  pp->link = pidle_;
  pidle_ = pp;
  npidle_.fetch_add(1, std::memory_order_seq_cst);
  // The M on duty went to sleep for good while a timer was due and every P
  // was held (timer_deadline): a P is idle now, so it wakes to take it.
  // (Whoever idles the P: findRunnable, or a later stage's hand-off.)
  if (duty_until_.load(std::memory_order_relaxed) ==
          RuntimeTimer::ns(Clock::time_point::max()) &&
      timer_m_.load(std::memory_order_relaxed) != nullptr && any_timers()) {
    wake_duty_m();
  }
}

P* Runtime::pidleget() {
  P* pp = pidle_;
  if (pp == nullptr) return nullptr;
  pidle_ = pp->link;
  pp->link = nullptr;
  npidle_.fetch_sub(1, std::memory_order_seq_cst);
  return pp;
}

bool Runtime::pidleremove(P* pp) {
  for (P** link = &pidle_; *link != nullptr; link = &(*link)->link) {
    if (*link == pp) {
      *link = pp->link;
      pp->link = nullptr;
      npidle_.fetch_sub(1, std::memory_order_seq_cst);
      return true;
    }
  }
  return false;
}

P* Runtime::pidleget_spinning() {
  P* pp = pidleget();
  if (pp == nullptr) needspinning_.store(true, std::memory_order_seq_cst);
  return pp;
}

void Runtime::acquirep(M* m, P* pp) {
  GMP_CHECK(m->p == nullptr, "acquirep: M already holds a P");
  m->p = pp;
  m->p_id.store(pp->id, std::memory_order_relaxed);
  pp->m_id.store(m->id, std::memory_order_relaxed);
  pp->status.store(PStatus::kRunning, std::memory_order_relaxed);
}

P* Runtime::releasep(M* m) {
  P* pp = m->p;
  GMP_CHECK(pp != nullptr, "releasep: M holds no P");
  m->p = nullptr;
  m->p_id.store(-1, std::memory_order_relaxed);
  pp->m_id.store(-1, std::memory_order_relaxed);
  return pp;
}

}  // namespace gmp::stage3
