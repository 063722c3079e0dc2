// Stage 3: stopping the world, and changing GOMAXPROCS while running (Go's
// stopTheWorldWithSema, gcstopm, startTheWorldWithSema, procresize,
// runtime.GOMAXPROCS).
//
// Stop the world (for a GOMAXPROCS change, and when main returns): the
// caller raises gcwaiting and asks every running goroutine to stop at its
// next safe point (P::preempt, Go's preemptall): its next call into the
// runtime, where it yields (preempt_now); each M, at its next scheduling
// point, gives its P up; idle Ps are taken at once; the caller sleeps
// until every P is stopped, changes what it must, and starts the world
// again. A goroutine that never calls into the runtime (a loop on an
// atomic) delays the stop: preemption from outside the goroutine
// (Go 1.14's, through a watcher thread) cures that.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <numeric>
#include <vector>

#include "common/check.h"
#include "stage2_global_queue/switch.h"
#include "stage3_gmp/runtime.h"

namespace gmp::stage3 {

using Clock = std::chrono::steady_clock;

M* Runtime::stop_the_world(bool exiting) {
  worldsema_.lock();  // one stop at a time; waiting parks this goroutine
  if (exiting) exiting_.store(true, std::memory_order_seq_cst);
  M* m = getm();  // fresh: waiting for the lock may have moved us
  std::unique_lock lk(sched_);
  // Cleared before any P is counted: the count can reach 0 here, in a
  // later stage's stop_unattended_ps, whose stopped_for_world wakes the
  // note (the last stop left it woken: a second wake-up would be fatal).
  stopnote_.clear();
  gcwaiting_.store(true, std::memory_order_seq_cst);
  stopwait_ = gomaxprocs_.load(std::memory_order_relaxed);
  m->p->status.store(PStatus::kStopped, std::memory_order_relaxed);
  --stopwait_;
  while (P* pp = pidleget()) {
    pp->status.store(PStatus::kStopped, std::memory_order_relaxed);
    --stopwait_;
  }
  preemptall();
  stop_unattended_ps();
  bool wait = stopwait_ > 0;
  lk.unlock();
  // Go's wait: 100 us at a time, asking again each time. A goroutine that
  // started just as the stop began missed the first request (its new time
  // slice cleared the P's flag: execute), and must hear a second one.
  while (wait && !stopnote_.tsleep(std::chrono::microseconds(100))) {
    std::lock_guard again(sched_);
    preemptall();
  }
  lk.lock();
  GMP_CHECK(stopwait_ == 0, "stopTheWorld: not stopped");
  return m;
}

void Runtime::stopped_for_world() {
  if (--stopwait_ == 0) stopnote_.wakeup();
}

void Runtime::preemptall() {
  for (int i = 0; i < gomaxprocs_.load(std::memory_order_relaxed); ++i) {
    P* pp = allp_[static_cast<std::size_t>(i)].get();
    if (pp->status.load(std::memory_order_relaxed) == PStatus::kRunning) {
      pp->preempt.store(true, std::memory_order_relaxed);
    }
  }
}

void Runtime::gcstopm(M* m) {
  if (m->spinning.load(std::memory_order_relaxed)) stop_spinning(m);
  {
    std::lock_guard lk(sched_);
    P* pp = releasep(m);
    pp->status.store(PStatus::kStopped, std::memory_order_relaxed);
    stopped_for_world();
  }
  stopm(m);
}

void Runtime::start_the_world(M* m, int newprocs) {
  std::vector<M*> woken;  // Ms handed a P: woken after the unlock
  {
    std::lock_guard lk(sched_);
    if (newprocs > 0) procresize(m, newprocs);
    gcwaiting_.store(false, std::memory_order_seq_cst);
    m->p->status.store(PStatus::kRunning, std::memory_order_relaxed);
    int procs = gomaxprocs_.load(std::memory_order_relaxed);
    for (int i = procs - 1; i >= 0; --i) {
      P* pp = allp_[i].get();
      if (pp == m->p) continue;
      if (pp->runq.stealer().empty()) {
        pidleput(pp);
      } else if (M* idle = mget()) {  // Go prefers the P's last M; any will do
        idle->nextp = pp;
        ++stats_.wakeups;
        woken.push_back(idle);
      } else {
        reserve_m();
        newm(pp, /*spinning=*/false);
      }
    }
  }
  // As Go's startTheWorldWithSema, after the unlock: a woken M takes
  // sched_ at once (stopm), and may run on this CPU before us.
  for (M* idle : woken) wake_m(idle);
  worldsema_.unlock();  // on the goroutine that locked it
  wakep();  // work that waited in the GRQ
}

void Runtime::procresize(M* m, int n) {
  int old = gomaxprocs_.load(std::memory_order_relaxed);
  while (static_cast<int>(allp_.size()) < n) {
    allp_.push_back(std::make_unique<P>(static_cast<int>(allp_.size())));
  }
  for (int i = 0; i < n; ++i) {
    if (m == nullptr || allp_[i].get() != m->p) {
      allp_[i]->status.store(PStatus::kStopped, std::memory_order_relaxed);
    }
  }
  for (int i = n; i < old; ++i) {  // removed Ps: none of their work is lost
    P* pp = allp_[i].get();
    // Its goroutines go to the GRQ's head, runnext first, then its queue
    // in order (Go's p.destroy): they were runnable already, and run
    // before what waited in the GRQ.
    std::vector<G*> gs;
    while (G* gp = pp->runq.owner().get().first) gs.push_back(gp);
    for (auto it = gs.rbegin(); it != gs.rend(); ++it) globrunqputhead(*it);
    std::unique_lock gfree_lk(gfree_lock_);  // Go's gfpurge
    while (G* gp = pp->gfree) {
      pp->gfree = gp->schedlink;
      gp->schedlink = gfree_;
      gfree_ = gp;
      ngfree_.fetch_add(1, std::memory_order_relaxed);
    }
    gfree_lk.unlock();
    pp->gfreecnt.store(0, std::memory_order_relaxed);
    pp->stackcache.flush(stacks_);
    // Its timers go to the caller's P (Go's moveTimers), or to P 0.
    move_timers(pp, m != nullptr && m->p->id < n ? m->p : allp_[0].get());
    pp->status.store(PStatus::kDead, std::memory_order_relaxed);
  }
  if (m != nullptr && m->p->id >= n) {  // the caller's own P went
    releasep(m);
    acquirep(m, allp_[0].get());
    allp_[0]->status.store(PStatus::kStopped, std::memory_order_relaxed);
  }
  gomaxprocs_.store(n, std::memory_order_relaxed);
  steal_coprimes_.clear();  // Go's stealOrder.reset: every i coprime to n
  for (int i = 1; i <= n; ++i) {
    if (std::gcd(i, n) == 1) steal_coprimes_.push_back(static_cast<std::uint32_t>(i));
  }
}

int Runtime::set_gomaxprocs(int n) {
  int old = gomaxprocs_.load(std::memory_order_relaxed);
  if (n == 0 || n == old) return old;
  auto start = Clock::now();
  M* m = stop_the_world(/*exiting=*/false);
  old = gomaxprocs_.load(std::memory_order_relaxed);  // another may have won
  start_the_world(m, n);
  auto pause = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start)
          .count());
  {
    std::lock_guard lk(sched_);
    ++stats_.stw_pauses;
    stats_.stw_pause_ns += pause;
    stats_.stw_max_pause_ns = std::max(stats_.stw_max_pause_ns, pause);
  }
  // Go's startTheWorld hands worldsema to the next waiter and yields to it
  // (semrelease1 with handoff). We yield after every change: a goroutine
  // that changes GOMAXPROCS in a loop would otherwise keep its P through
  // every stop, and the P's queue and the due timers would never get a turn.
  m = getm();  // fresh, as after any call that may switch
  m->call = stage2::MCall::kGosched;
  stage2::mcall(m, m->curg);
  return old;
}

}  // namespace gmp::stage3
