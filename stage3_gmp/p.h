/// \file
/// P: a logical processor (Go's p, runtime2.go). An M must hold a P to run
/// goroutines; there are GOMAXPROCS of them.
#pragma once

#include <atomic>
#include <cstdint>
#include <random>

#include "common/counting_lock.h"
#include "common/timer.h"
#include "stage2_global_queue/g.h"
#include "stage3_gmp/runq.h"
#include "stage3_gmp/stack_cache.h"

namespace gmp::stage3 {

struct M;

/// Go's P states, with Go's numbers (schedtrace prints them): `_Pidle` (on
/// the idle list), `_Prunning` (held by an M), `_Pgcstop` (stopped by
/// stop-the-world), and, for Ps removed by a GOMAXPROCS decrease, `_Pdead`.
/// Go's 2, `_Psyscall`, is not a stage 3 state: here an M that leaves its
/// P gives it up. A scheduler built on this one may give 2 that meaning.
enum class PStatus : std::uint8_t {
  kIdle = 0,
  kRunning = 1,
  kStopped = 3,
  kDead = 4,
};

/// Counters of one P, for benchmarks. Written only by the M holding the P
/// (relaxed atomics: others read them for Runtime::stats()).
struct PCounters {
  std::atomic<std::uint64_t> steal_attempts{0};  ///< victims tried
  std::atomic<std::uint64_t> steals{0};          ///< of which gave work
  std::atomic<std::uint64_t> stolen{0};          ///< goroutines taken
  std::atomic<std::uint64_t> grq_takes{0};       ///< GRQ batches taken
  std::atomic<std::uint64_t> grq_goroutines{0};  ///< goroutines in them
  std::atomic<std::uint64_t> runnext_hits{0};    ///< runs from runnext
  std::atomic<std::uint64_t> context_switches{0};  ///< goroutines run
  std::atomic<std::uint64_t> timers_run{0};     ///< fired from its own heap
  std::atomic<std::uint64_t> timers_stolen{0};  ///< fired from another P's
  std::atomic<std::uint64_t> gs_reused{0};  ///< go()s served by a dead G (gfget)
  std::atomic<std::uint64_t> stack_refills{0};  ///< batches from the pool

  /// +1, by the owner only (a load and a store: no atomic read-modify-write
  /// needed with a single writer).
  static void inc(std::atomic<std::uint64_t>& c, std::uint64_t by = 1) {
    c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }

  /// Zeroes every counter (at the start of a run, no M running).
  void reset() noexcept {
    for (auto* c : {&steal_attempts, &steals, &stolen, &grq_takes,
                    &grq_goroutines, &runnext_hits, &context_switches,
                    &timers_run, &timers_stolen, &gs_reused,
                    &stack_refills}) {
      c->store(0, std::memory_order_relaxed);
    }
  }
};

/// A logical processor: a local run queue, a free-G cache, and what the M
/// holding it needs to schedule. Lives from the first run that needed it
/// to the Runtime's end (removed Ps are kept, dead, for a later increase).
struct P {
  /// P number `index`, with its steal-order generator seeded from it.
  explicit P(int index) : id(index), rng(static_cast<unsigned>(index) + 1) {}

  const int id;  ///< immutable: its index in allp

  /// Stage 3 stores kIdle, kStopped and kDead under the sched lock (the
  /// idle list, stop-the-world, procresize); kRunning by acquirep, often
  /// without it, by the M the P was handed to (under the lock, or by
  /// startm's wakeup). Read by thieves and traces without the lock
  /// (relaxed: a hint, as in Go). A later stage's own state, and the
  /// stores that leave it (kIdle or kStopped included), follow the rules
  /// that stage gives where it defines the state.
  std::atomic<PStatus> status{PStatus::kIdle};

  /// The local run queue: its Owner handle belongs to the M holding the P,
  /// its Stealer handle to anyone.
  LocalRunQueue<256> runq;

  // Written by the owner M only (the M holding the P), but `preempt`
  // (see there); others read them relaxed.
  /// Runs that started a time slice (not runnext's inherited ones): the
  /// 61-tick rule reads it, traces and any watcher of long slices too.
  std::atomic<std::uint32_t> schedtick{0};
  /// A request that the goroutine running here stop at its next safe
  /// point, a call into the runtime (Go's gp.preempt): set by a stop of the
  /// world for every running P (Go's preemptall), or by anyone else who
  /// wants the P back; cleared by the goroutine that honours it
  /// (Runtime::preempt_now), and by a new time slice (execute). Relaxed: a
  /// request, not a hand-over of data.
  std::atomic<bool> preempt{false};
  stage2::G* gfree = nullptr;  ///< dead Gs, stackless (Go's p.gFree)
  std::atomic<int> gfreecnt{0};            ///< their number (traces read it)
  /// Free stacks: a goroutine takes one at its first run on this P and
  /// gives it back here when it dies (Runtime::stackalloc, stackfree).
  StackCache stackcache;
  std::uint64_t goidcache = 0;     ///< next goroutine id of this P's batch
  std::uint64_t goidcacheend = 0;  ///< end of the batch
  std::minstd_rand rng;            ///< steal order
  PCounters counters;              ///< this P's share of the stats

  // ---- Timers (Go 1.14's per-P heap): the timers that goroutines set
  // while running on this P, the sleepers' included. The M holding the P
  // runs the due ones in findRunnable; an M looking for work runs those of
  // other Ps (steal_work); an idle M on duty sleeps until the earliest of
  // all Ps' timer0_when.
  /// Go's pp.timersLock: protects `timers`. Taken without the sched lock,
  /// or inside it (lock order: sched lock, then a P's timers_lock); never
  /// two Ps' at once, but by procresize with the world stopped.
  CountingLock timers_lock;
  /// The P's timers, earliest first; each records this P as its owner
  /// (RuntimeTimer::owner), so that a stop finds the lock. timers_lock.
  TimerHeap timers{this};
  /// Go's pp.timer0When: the earliest timer's time, in nanoseconds of
  /// RuntimeTimer::Clock, or 0 for none. Written under timers_lock with
  /// every change of the heap's top; read without it by Ms deciding
  /// whether to take the lock and by the idle M on duty computing its sleep
  /// (relaxed: a hint. A timer that becomes its P's earliest is not missed
  /// by the M on duty: add_timer fences after this write, then finds that
  /// M waking in time or wakes it under the sched lock, which its next
  /// read follows; an M leaving the duty fences before it reads again).
  std::atomic<std::int64_t> timer0_when{0};

  P* link = nullptr;  ///< next P on the idle list; under the sched lock
  /// The M holding it, or -1: written by acquirep and releasep, often
  /// without the sched lock; read by traces and reports (relaxed: a hint,
  /// a moment old).
  std::atomic<int> m_id{-1};
};

}  // namespace gmp::stage3
