// Stage 3: the M's loop on g0 (Go's schedule, findRunnable, stealWork,
// execute, park_m, gosched_m, goexit0), the goroutine's first and last
// frame, and the goroutine-side API.
//
// Where an M looks for work (findRunnable, in note 000's order, which is
// Go's; the notes disagree here, as docs/course/notes.md shows side by
// side: note 002 has no fairness step, note 003 looks at the GRQ only on
// the 61st tick, note 004 steals before the network poller and looks at
// the GRQ last again):
//   1. every 61st schedtick, one goroutine from the GRQ first (fairness:
//      without it, goroutines that keep the local queue busy, yielding,
//      would keep the GRQ waiting forever). It does not help against two
//      goroutines readying each other through runnext: they share one
//      time slice, the schedtick stays still, and they starve the GRQ and
//      their own P's queue alike (stage3_test.cc,
//      ARunnextChainStarvesTheLocalQueueAndTheGrq). In Go, sysmon's
//      preemption of the long slice ends such a chain;
//   2. the local queue, runnext first;
//   3. the GRQ, a batch of min(len/GOMAXPROCS + 1, 128);
//   4. poll_network (Go's netpoll without waiting; stage 3 has nothing to
//      poll);
//   5. steal half of another P's queue: 4 rounds over all Ps in a random
//      order, runnext taken only in the last round;
//   6. nothing: give the P back and park the M.
#include <algorithm>
#include <chrono>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/runtime_lock.h"
#include "common/storeload.h"
#include "common/errors.h"
#include "stage2_global_queue/goroutine_dump.h"
#include "stage2_global_queue/signals.h"
#include "stage2_global_queue/switch.h"
#include "stage2_global_queue/trace_points.h"
#include "stage3_gmp/runtime.h"

namespace gmp::stage3 {

using Clock = std::chrono::steady_clock;

namespace {
constexpr int kStealTries = 4;       // Go's stealTries
constexpr std::uint32_t kFairness = 61;  // Go's 1-in-61 global queue check

// common/fault.h's FaultLookup for an M of this stage: stage 2's account
// of the running goroutine, and the P it runs on. Async-signal-safe.
bool describe_curg_and_p(FaultGoroutine* out) noexcept {
  const G* gp = stage2::describe_curg(out);
  if (gp == nullptr) return false;
  out->p = read_last_p(*gp);
  return true;
}
}  // namespace

// ---- The goroutine's first and last frame ------------------------------------

void goroutine_body(G* gp) noexcept {
  stage2::on_goroutine_start();
  Runtime* rt = getm()->rt;
  bool finished = false;
  if (gp->goid != 1 && rt->exiting_.load(std::memory_order_acquire)) {
    // main returned before this goroutine's first turn: it never runs.
    rt->never_started_.fetch_add(1, std::memory_order_relaxed);
  } else {
    try {
      gp->fn();
      finished = true;
    } catch (const Goexit&) {
      // ended by the runtime at exit
    } catch (...) {
      stage2::die_of_uncaught(*rt, gp);
    }
    if (gp->goid == 1) {  // still goroutine 1
      rt->main_returned_.wakeup();  // before a stop that may never end
      rt->exit_after_main();
    }
    (finished ? rt->finished_ : rt->exited_)
        .fetch_add(1, std::memory_order_relaxed);
  }
  gp->fn = nullptr;  // its destructors run while it is still a goroutine
}

// Not instrumented by ThreadSanitizer, as stage 2's (proc.cc): it never
// returns, and its fiber goes to the goroutine that reuses the G's.
__attribute__((no_sanitize("thread"))) void goroutine_entry(
    void* arg) noexcept {
  G* gp = static_cast<G*>(arg);
  goroutine_body(gp);
  M* m = getm();  // fresh: the goroutine may have moved between Ms
  m->call = stage2::MCall::kGoexit;
  stage2::mcall_exit(m, gp);
}

// ---- The M's loop ---------------------------------------------------------------

void Runtime::minit(M* m) { stage2::init_m_signals(m, &describe_curg_and_p); }

void Runtime::mstart(M* m) {
  stage2::setm_core(m);
  m->trace = trace_.buffer(m->id);
  stage2::init_g0(m);
  minit(m);
  P* pp = nullptr;
  {
    std::lock_guard lk(sched_);
    pp = m->nextp;
    m->nextp = nullptr;
  }
  if (pp != nullptr) acquirep(m, pp);
  if (m->spinning.load(std::memory_order_relaxed)) start_spin_clock(m);
  // Go's schedule(), as a loop: find a goroutine, run it until it switches
  // back to g0, do what it asked.
  for (bool exit = false; !exit;) {
    G* gp = m->lockedg;
    bool inherit_time = false;
    if (gp != nullptr) {
      stoplockedm(m);  // a locked M runs its goroutine only: wait for it
    } else {
      std::tie(gp, inherit_time) = find_runnable(m);
      if (gp == nullptr) break;  // the run is over
      if (m->spinning.load(std::memory_order_relaxed)) resetspinning(m);
      if (gp->lockedm != nullptr) {  // another M's: give it our P
        startlockedm(m, gp);
        continue;
      }
    }
    execute(m, gp, inherit_time);
    if (m->trace != nullptr) [[unlikely]] {
      stage2::trace_go_stop(m, gp, stop_reason(m->call));
    }
    switch (m->call) {
      case stage2::MCall::kPark: park_m(m, gp); break;
      case stage2::MCall::kGosched: gosched_m(m, gp); break;
      case stage2::MCall::kGoexit: exit = goexit0(m, gp); break;
      case kPreemptCall: gopreempt_m(m, gp); break;
      case stage2::MCall::kNone:
        fatal("mstart: a goroutine switched to g0 for nothing");
      default: other_mcall(m, gp); break;  // a later stage's request
    }
  }
  // The run is over. An M woken to spin just before may still count.
  if (m->spinning.load(std::memory_order_relaxed)) stop_spinning(m);
  stage2::fini_m_signals(m);
  stage2::setm_core(nullptr);
}

//! [find_runnable]
std::pair<G*, bool> Runtime::find_runnable(M* m) {
  for (;;) {
    if (stopping_.load(std::memory_order_acquire)) return {nullptr, false};
    if (gcwaiting_.load(std::memory_order_acquire)) {
      gcstopm(m);  // until the world starts again, with a P
      continue;
    }
    P* pp = m->p;
    // 0. This P's due timers (Go's checkTimers): their goroutines first.
    if (pp->timer0_when.load(std::memory_order_relaxed) != 0) {
      run_timers(pp, pp, Clock::now());
    }
    // 1. Fairness: every 61st tick the GRQ first, one goroutine.
    if (pp->schedtick.load(std::memory_order_relaxed) % kFairness == 0 &&
        grq_size_.load(std::memory_order_relaxed) > 0) {
      std::lock_guard lk(sched_);
      if (G* gp = globrunqget(pp, 1)) return {gp, false};
    }
    // 2. The local queue, runnext first.
    if (auto [gp, inherit] = pp->runq.owner().get(); gp != nullptr) {
      return {gp, inherit};
    }
    // 3. The GRQ, a batch.
    if (grq_size_.load(std::memory_order_relaxed) > 0) {
      std::lock_guard lk(sched_);
      if (G* gp = globrunqget(pp, 0)) return {gp, false};
    }
    // 4. poll_network (Go's netpoll; stage 3's finds nothing).
    if (G* gp = poll_network(m)) return {gp, false};
    // 5. Steal, if not too many Ms are spinning already.
    int procs = gomaxprocs_.load(std::memory_order_relaxed);
    if (m->spinning.load(std::memory_order_relaxed) ||
        2 * nmspinning_.load(std::memory_order_seq_cst) <
            procs - npidle_.load(std::memory_order_seq_cst)) {
      if (!m->spinning.load(std::memory_order_relaxed)) become_spinning(m);
      if (G* gp = steal_work(m)) return {gp, false};
      if (gcwaiting_.load(std::memory_order_acquire)) continue;
    }
    // 6. Nothing: give the P back, with a last look at the GRQ.
    {
      std::lock_guard lk(sched_);
      if (gcwaiting_.load(std::memory_order_acquire)) continue;
      if (G* gp = globrunqget(pp, 0)) return {gp, false};
      if (!m->spinning.load(std::memory_order_relaxed) &&
          needspinning_.load(std::memory_order_relaxed)) {
        // Someone found work that no idle P could take (wakep,
        // pidleget_spinning), while we were about to go idle without
        // having seen it: we spin for them instead.
        become_spinning(m);
        continue;
      }
      pidleput(releasep(m));
    }
    if (recheck_after_drop(m, procs)) continue;  // work after all: a P again
    stopm(m);  // returns holding a P, or with none when the run stops
    if (m->p == nullptr) return {nullptr, false};
  }
}
//! [find_runnable]

//! [steal_work]
G* Runtime::steal_work(M* m) {
  P* pp = m->p;
  auto procs = static_cast<std::uint32_t>(
      gomaxprocs_.load(std::memory_order_relaxed));
  for (int round = 0; round < kStealTries; ++round) {
    bool last = round == kStealTries - 1;
    std::uint32_t r = static_cast<std::uint32_t>(pp->rng());
    std::uint32_t pos = r % procs;
    std::uint32_t inc = steal_coprimes_[(r / procs) % steal_coprimes_.size()];
    for (std::uint32_t k = 0; k < procs; ++k, pos = (pos + inc) % procs) {
      if (gcwaiting_.load(std::memory_order_relaxed) ||
          stopping_.load(std::memory_order_relaxed)) {
        return nullptr;
      }
      P* victim = allp_[pos].get();
      if (victim == pp) continue;
      // The last round runs the victim's due timers too, idle or not (Go's
      // stealWork): what they ready comes to our queue.
      if (last && victim->timer0_when.load(std::memory_order_relaxed) != 0 &&
          run_timers(victim, pp, Clock::now()) > 0) {
        if (G* gp = pp->runq.owner().get().first) return gp;
      }
      if (victim->status.load(std::memory_order_relaxed) != PStatus::kRunning) {
        continue;  // an idle P's queue is empty; a stopped one is off limits
      }
      PCounters::inc(pp->counters.steal_attempts);
      std::uint32_t before = pp->runq.size();
      G* gp = pp->runq.owner().steal(victim->runq.stealer(),
                                     /*steal_runnext=*/last);
      if (gp != nullptr) {
        std::uint32_t n = pp->runq.size() - before + 1;
        PCounters::inc(pp->counters.steals);
        PCounters::inc(pp->counters.stolen, n);
        if (trace::Buffer* t = m->trace) [[unlikely]] {
          t->steal(pp->id, victim->id, n);
        }
        return gp;
      }
    }
  }
  return nullptr;
}
//! [steal_work]

//! [recheck_after_drop]
bool Runtime::recheck_after_drop(M* m, int procs) {
  // A submitter that saw nmspinning > 0 woke nobody: look everywhere.
  if (m->spinning.load(std::memory_order_relaxed)) {
    stop_spinning(m);  // the StoreLoad: the decrement, then the reads
    bool work = grq_size_.load(std::memory_order_relaxed) > 0;
    for (int i = 0; i < procs && !work; ++i) {
      work = !allp_[i]->runq.empty();
    }
    if (!work) return false;
  } else {  // a submitter that saw no idle P raised needspinning instead
    storeload_fence();  // our pidleput, then the flag (pairs with wakep's)
    if (!needspinning_.load(std::memory_order_seq_cst)) return false;
  }
  P* idle = nullptr;
  {
    std::lock_guard lk(sched_);
    idle = pidleget_spinning();  // none: needspinning stays raised
  }
  if (idle == nullptr) return false;
  acquirep(m, idle);
  become_spinning(m);
  return true;
}
//! [recheck_after_drop]

void Runtime::become_spinning(M* m) {
  m->spinning.store(true, std::memory_order_relaxed);
  nmspinning_.fetch_add(1, std::memory_order_seq_cst);
  // A spinning M looks everywhere before it stops: whoever asked for one
  // (needspinning) is served. seq_cst, after the increment: a wakep that
  // raises the flag again after this either sees nmspinning > 0 first,
  // or queued its work before our look (the delicate dance).
  if (needspinning_.load(std::memory_order_relaxed)) {
    needspinning_.store(false, std::memory_order_seq_cst);
  }
  start_spin_clock(m);
}

void Runtime::start_spin_clock(M* m) {
  m->spin_start = Clock::now();
  if (trace::Buffer* t = m->trace) [[unlikely]] t->spin_start();
}

void Runtime::stop_spinning(M* m) {
  m->spinning.store(false, std::memory_order_relaxed);
  // The StoreLoad of the delicate dance (proc.cc): the decrement is
  // ordered before our re-reads of the queues (the fence pairs with
  // wakep's, on the submitting side).
  std::int32_t before = nmspinning_.fetch_sub(1, std::memory_order_seq_cst);
  storeload_fence();
  GMP_CHECK(before > 0, "findRunnable: negative nmspinning");
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                Clock::now() - m->spin_start)
                .count();
  m->spinning_ns.fetch_add(static_cast<std::uint64_t>(ns),
                           std::memory_order_relaxed);
  if (trace::Buffer* t = m->trace) [[unlikely]] t->spin_stop();
}

void Runtime::resetspinning(M* m) {
  stop_spinning(m);
  wakep();
}

// ---- Stacks: given at the first run, taken back at death -------------------
// (here, beside execute and goexit0, their only callers)

stage2::Stack Runtime::stackalloc(P* pp) {
  if (pp->stackcache.size() == 0) PCounters::inc(pp->counters.stack_refills);
  return pp->stackcache.get(stacks_);
}

void Runtime::stackfree(P* pp, stage2::Stack s) noexcept {
  pp->stackcache.put(stacks_, s);
}

void Runtime::gostartcallfn(M* m, G* gp) {
  try {
    gp->stack = stackalloc(m->p);
  } catch (const std::system_error& e) {
    // No error can reach go() now, which returned long ago: as in Go,
    // where a stack that cannot be had is "fatal error: out of memory".
    fatal(std::string(e.what()) + " (for goroutine " +
          std::to_string(gp->goid.load(std::memory_order_relaxed)) +
          "'s first run: from stage 3 a goroutine gets its stack then)");
  }
  stage2::context_init(&gp->ctx, gp->stack.lo, gp->stack.size,
                       &goroutine_entry, gp);
  stage2::create_fiber(gp);
}

inline void Runtime::execute(M* m, G* gp, bool inherit_time) {
  P* pp = m->p;
  if (inherit_time) {
    PCounters::inc(pp->counters.runnext_hits);
  } else {  // a new time slice
    pp->schedtick.store(pp->schedtick.load(std::memory_order_relaxed) + 1,
                        std::memory_order_relaxed);
    pp->preempt.store(false, std::memory_order_relaxed);
  }
  PCounters::inc(pp->counters.context_switches);
  // For the dumps. Before the call below, which would otherwise make pp
  // live across it (one more value kept across every switch).
  gp->last_m.store(m->id, std::memory_order_relaxed);
  last_p(gp).store(pp->id, std::memory_order_relaxed);
  if (!gp->started) gostartcallfn(m, gp);  // its stack, only now
  casgstatus(gp, GStatus::kRunnable, GStatus::kRunning);
  gp->started = true;
  m->curg = gp;
  m->curg_goid.store(gp->goid, std::memory_order_relaxed);
  m->call = stage2::MCall::kNone;
  if (m->trace != nullptr) [[unlikely]] trace_execute(m);
  stage2::gogo(m, gp);
  m->curg = nullptr;
  m->curg_goid.store(0, std::memory_order_relaxed);
}

// execute's trace events: the queues' lengths, then m's goroutine starts
// on m's P. Out of line, and reading all it needs from m, so that execute
// keeps no value alive for it across the switch, traced or not.
void Runtime::trace_execute(M* m) {
  P* pp = m->p;
  m->trace->queues(pp->id, pp->runq.size(),
                   static_cast<std::uint64_t>(
                       m->rt->grq_size_.load(std::memory_order_relaxed)));
  m->trace->go_start(m->curg->goid.load(std::memory_order_relaxed), pp->id);
}

void Runtime::park_m(M* m, G* gp) {
  Sudog<G*>* s = m->park_sudog;
  gp->waiting = s;
  gp->waitreason.store(m->park_reason, std::memory_order_relaxed);
  gp->waitsince.store(stage2::coarse_now().time_since_epoch().count(),
                      std::memory_order_relaxed);
  casgstatus(gp, GStatus::kRunning, GStatus::kWaiting);
  if (exiting_.load(std::memory_order_seq_cst) && s->try_cancel()) {
    // main has returned: do not park. The object's lock is still ours.
    unlink_cancelled_locked(*s);  // a select's other cases too
    gp->waiting = nullptr;
    gp->waitreason.store(WaitReason::kNone, std::memory_order_relaxed);
    casgstatus(gp, GStatus::kWaiting, GStatus::kRunnable);
    runqput(m->p, gp, /*next=*/true);  // it throws Goexit
  } else if (m->park_reason == WaitReason::kSleep) {
    gp->timer.when = m->park_until;  // Go's resetForSleep: the G's timer
    gp->timer.arg = s;
    add_timer(m->p, &gp->timer);  // on this P's heap
  } else {
    nblocked_.fetch_add(1, std::memory_order_relaxed);
  }
  m->park_unlock();
}

[[gnu::always_inline]] inline void Runtime::gosched_m(M* m, G* gp) {
  casgstatus(gp, GStatus::kRunning, GStatus::kRunnable);
  // (The owner's snapshot of the ring; a goroutine alone in runnext runs
  // next here anyway.)
  const bool others = m->p->runq.size() != 0;
  // Alone on its P while goroutines wait in the GRQ: gp goes behind them,
  // as Go's Gosched puts it (globrunqput). On its P's queue it would run
  // again at once, 60 times in 61, while they wait
  // (GmpSuite.AYielderRunsAgainAfterTheGlobalQueue). relaxed: a hint; a
  // goroutine that arrives there just after is taken within 61 ticks.
  if (!others && grq_size_.load(std::memory_order_relaxed) > 0) [[unlikely]] {
    {
      std::lock_guard lk(sched_);
      globrunqput(gp);
    }
    wakep_holding_p();  // an idle P may share what waits there
    return;
  }
  // Otherwise the tail of its P's queue, behind the goroutines there (the
  // 61-tick rule gives the GRQ its turns). Others were queued here
  // already: this P has more than it can run at once, so an idle P may
  // take some (Go's goschedImpl calls wakep). A lone yielder just runs
  // again.
  runqput(m->p, gp, /*next=*/false);
  if (others) wakep_holding_p();
}

void Runtime::gopreempt_m(M*, G* gp) {
  casgstatus(gp, GStatus::kRunning, GStatus::kRunnable);
  {
    std::lock_guard lk(sched_);
    globrunqput(gp);
  }
  wakep();  // an idle P may take it
}

void Runtime::preempt_now(M* m) {
  m->p->preempt.store(false, std::memory_order_relaxed);
  preemptions_.fetch_add(1, std::memory_order_relaxed);
  m->call = kPreemptCall;
  stage2::mcall(m, m->curg);
}

bool Runtime::goexit0(M* m, G* gp) {
  casgstatus(gp, GStatus::kRunning, GStatus::kDead);
  const bool locked = gp->lockedm != nullptr;
  stackfree(m->p, gp->stack);  // at once: the next goroutine here takes it
  gp->stack = {};
  // Under ThreadSanitizer its fiber goes too (its first gogo takes one):
  // TSan allows 8128 at once, and a dead G in a free list needs none.
  stage2::destroy_fiber(gp);
  gfput(m->p, gp);
  if (locked) [[unlikely]] {
    gp->lockedm = nullptr;
    m->lockedg = nullptr;
    // locked_ext stays: an M this one's hand-off makes is made by the
    // template thread, not cloned from this thread (newm).
    mexit_locked(m);  // before the count below may end the run
  }
  if (live_.fetch_sub(1, std::memory_order_acq_rel) == 1 &&
      exiting_.load(std::memory_order_acquire)) {
    all_dead_.wakeup();  // once per run: the last goroutine after main
  }
  return locked;
}

// ---- The Scheduler interface and the free functions ------------------------

namespace {

// Out of line and cold: its strings would give every runtime call a stack
// frame (a canary and four saved registers, measured).
[[noreturn, gnu::noinline, gnu::cold]] void not_in_a_goroutine(const M* m,
                                                              const char* op) {
  if (m != nullptr && m->curg != nullptr) {  // a goroutine, but without a P
    throw UsageError(std::string(op) +
                     " called where the goroutine holds no P (inside a "
                     "blocking system call): call it before or after the "
                     "blocking call");
  }
  throw UsageError(std::string(op) +
                   " called outside a goroutine: only goroutines of a "
                   "running stage3::Runtime may call it (start one with "
                   "Runtime::run(main) and call it from main or from a "
                   "goroutine started with go())");
}

// current_m's slow path, out of line and cold so that the check it follows
// costs the fast path two instructions: the request is honoured, and the
// goroutine's M afterwards returned (it may be another). Not while the
// goroutine holds a runtime lock (Go's newstack: m.locks != 0): whoever
// ran next on its M, or on any M, could wait for that lock for ever
// (TimeSuite.ConcurrentResetsOfOneTimer). The request stays on the P and is
// honoured at the first runtime call made without a lock.
[[gnu::noinline, gnu::cold]] M* preempt_at_runtime_call(M* m) {
  if (RuntimeLock::held_by_this_thread() != 0) return m;
  m->rt->preempt_now(m);
  return getm();
}

// The calling goroutine's M (one opaque TLS read), or gmp::UsageError. A
// goroutine in a blocking call (Go's _Gsyscall) has an M but no P: the
// runtime cannot serve it there. Every call into the runtime comes through
// here, which makes it the goroutine's safe point: a preempt request on its
// P (a stop of the world waits) is honoured first.
[[gnu::always_inline]] inline M* current_m(const char* op) {
  M* m = getm();
  if (m == nullptr || m->curg == nullptr || m->p == nullptr) [[unlikely]] {
    not_in_a_goroutine(m, op);
  }
  if (m->p->preempt.load(std::memory_order_relaxed)) [[unlikely]] {
    m = preempt_at_runtime_call(m);
  }
  return m;
}

}  // namespace

Sched::G Sched::current_g(const char* op) { return current_m(op)->curg; }

std::uint64_t Sched::goid(G g) noexcept { return g->goid; }

bool Sched::park(Sudog<G>& s, ParkUnlock unlock, WaitReason why) {
  return stage2::park_current(s.g, s, unlock, why, Clock::time_point{});
}

void Sched::ready(Sudog<G>& s) noexcept {
  G gp = s.g;  // s may vanish once gp runs again
  M* m = getm();
  m->rt->ready(gp, m->p);
}

void Sched::add_timer(RuntimeTimer& t) {
  M* m = current_m("time");  // a UsageError on a plain thread
  m->rt->add_timer(m->p, &t);
}

bool Sched::del_timer(RuntimeTimer& t) { return Runtime::del_timer(&t); }

void Sched::go_from_timer(std::function<void()> fn) {
  M* m = getm();  // on g0, holding a P, in run_timers
  m->rt->newproc(std::move(fn), m, nullptr);
}

void go(GoFunc fn, const std::type_info* type) {
  M* m = current_m("go");
  if (!fn) throw UsageError("go called with an empty function");
  // Go's acquirem in newproc: newproc keeps m and its P in locals, and
  // moving fn into the G runs the user's move constructor, which a
  // runtime that preempts from outside may stop there; the goroutine
  // would then go on, on another M, with this one's P.
  NoPreempt pin;
  m->rt->newproc(std::move(fn), m, type);
}

int num_goroutine() {
  // relaxed: a snapshot, as Go's (which counts without a lock too).
  return static_cast<int>(
      current_m("num_goroutine")->rt->live_.load(std::memory_order_relaxed));
}

void yield() {
  M* m = current_m("yield");
  if (m->rt->exiting_.load(std::memory_order_relaxed)) throw Goexit{};
  m->call = stage2::MCall::kGosched;
  stage2::mcall(m, m->curg);
}

void lock_os_thread() {
  M* m = current_m("lock_os_thread");
  m->rt->template_thread_.start();  // before this thread may be changed
  m->lock_os_thread();
}

void unlock_os_thread() { current_m("unlock_os_thread")->unlock_os_thread(); }

std::uint32_t lock_os_count() { return current_m("lock_os_count")->locked_ext; }

void sleep_for(std::chrono::nanoseconds d) {
  G* gp = Sched::current_g("sleep_for");
  if (d <= std::chrono::nanoseconds::zero()) return;  // as Go's time.Sleep
  if (!stage2::park_sleep(gp, d)) throw Goexit{};
}

int gomaxprocs(int n) {
  M* m = current_m("gomaxprocs");
  if (n <= 0) return m->rt->gomaxprocs_.load(std::memory_order_relaxed);
  if (m->rt->exiting_.load(std::memory_order_relaxed)) {
    throw Goexit{};  // main has returned: a point where the goroutine ends
  }
  return m->rt->set_gomaxprocs(std::min(n, kMaxProcs));  // Go caps it too
}

}  // namespace gmp::stage3
