/// \file
/// P: a logical processor (Go's p, runtime2.go). An M must hold a P to run
/// goroutines; there are GOMAXPROCS of them.
#pragma once

#include <atomic>
#include <cstdint>
#include <random>

#include "stage2_global_queue/g.h"
#include "stage3_gmp/runq.h"

namespace gmp::stage3 {

struct M;

/// Go's P states: _Pidle (on the idle list), _Prunning (held by an M),
/// _Psyscall (stage 5: left by an M gone into a blocking call, which takes
/// it back on return unless sysmon retook it), _Pgcstop (stopped by
/// stop-the-world), and, for Ps removed by a GOMAXPROCS decrease, dead.
enum class PStatus : std::uint8_t {
  kIdle,
  kRunning,
  kSyscall,  ///< stage 5: its M is in a blocking call and may come back
  kStopped,
  kDead,
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

  /// +1, by the owner only (a load and a store: no atomic read-modify-write
  /// needed with a single writer).
  static void inc(std::atomic<std::uint64_t>& c, std::uint64_t by = 1) {
    c.store(c.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
  }

  /// Zeroes every counter (at the start of a run, no M running).
  void reset() noexcept {
    for (auto* c : {&steal_attempts, &steals, &stolen, &grq_takes,
                    &grq_goroutines, &runnext_hits, &context_switches}) {
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

  /// Changed under the sched lock (acquirep, releasep, the idle list,
  /// stop-the-world); read by thieves and traces without it (relaxed: a
  /// hint, as in Go). Stage 5 only: kSyscall is left without the lock by
  /// the M entering a call (release), and taken back by whoever wins a
  /// compare-exchange from it (acq_rel: the winner owns the P's queue).
  std::atomic<PStatus> status{PStatus::kIdle};

  /// The local run queue: its Owner handle belongs to the M holding the P,
  /// its Stealer handle to anyone.
  LocalRunQueue<256> runq;

  // Owner M only (the M holding the P).
  std::atomic<std::uint32_t> schedtick{0};  ///< non-inherited runs (traces,
                                            ///< stage 5's sysmon)
  /// A request that the goroutine running here stop at its next safe
  /// point, a call into the runtime (Go's gp.preempt): set by a stop of the
  /// world for every running P (Go's preemptall), or by anyone else who
  /// wants the P back; cleared by the goroutine that honours it
  /// (Runtime::preempt_now), and by a new time slice (execute). Relaxed: a
  /// request, not a hand-over of data.
  std::atomic<bool> preempt{false};
  stage2::G* gfree = nullptr;  ///< dead Gs with stacks (Go's p.gFree)
  std::atomic<int> gfreecnt{0};            ///< their number (traces read it)
  std::uint64_t goidcache = 0;     ///< next goroutine id of this P's batch
  std::uint64_t goidcacheend = 0;  ///< end of the batch
  std::minstd_rand rng;            ///< steal order
  PCounters counters;              ///< this P's share of the stats

  // Protected by the sched lock.
  P* link = nullptr;           ///< next P on the idle list
  std::atomic<int> m_id{-1};   ///< the M holding it (traces), or -1
};

}  // namespace gmp::stage3
