/// \file
/// Stage 3's counters of one run (Runtime::stats).
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/counting_lock.h"

namespace gmp::stage3 {

/// Counters of one Runtime::run. Conservation: created == finished +
/// exited + never_started.
struct Stats {
  std::uint64_t goroutines_created = 0;   ///< main and every go()
  std::uint64_t goroutines_finished = 0;  ///< returned from their function
  std::uint64_t goroutines_exited = 0;    ///< unwound by Goexit at exit
  std::uint64_t goroutines_never_started = 0;  ///< dropped at exit, unrun
  std::uint64_t threads_created = 0;      ///< Ms started
  std::size_t max_queue_len = 0;          ///< longest the GRQ has been
  std::int64_t goroutines_blocked = 0;    ///< now: parked on an object
  std::uint64_t context_switches = 0;     ///< goroutines run (g0 -> G)
  std::uint64_t stacks_mapped = 0;        ///< stacks ever mapped
  /// go()s that reused a dead G (a P's free list, or the global one)
  /// rather than allocating one.
  std::uint64_t gs_reused = 0;
  /// Batches of StackCache::kBatch stacks the Ps' caches took from the
  /// shared pool (each one acquisition of its lock).
  std::uint64_t stack_refills = 0;
  std::int64_t max_live = 0;  ///< the most goroutines alive at once (run)
  LockCounters sched_lock;  ///< the sched lock (GRQ, idle lists, timer duty)
  /// Every P's timers_lock, summed (P::timers_lock: Go 1.14's per-P heap,
  /// where stage 2 takes its one sched lock for every timer).
  LockCounters timers_lock;
  std::uint64_t timers_run = 0;     ///< timers fired from their own P's heap
  std::uint64_t timers_stolen = 0;  ///< fired by another P's M (steal_work)

  std::uint64_t steal_attempts = 0;  ///< victims tried by spinning Ms
  std::uint64_t steals = 0;          ///< of which had something to take
  std::uint64_t stolen = 0;          ///< goroutines moved by stealing
  std::uint64_t grq_takes = 0;       ///< batches taken from the GRQ
  std::uint64_t grq_goroutines = 0;  ///< goroutines in those batches
  std::uint64_t runq_overflows = 0;  ///< full local queues halved to the GRQ
  std::uint64_t runnext_hits = 0;    ///< goroutines run from runnext
  std::uint64_t spinning_ns = 0;     ///< time Ms spent spinning
  std::uint64_t parks = 0;           ///< times an M went idle
  std::uint64_t wakeups = 0;         ///< times an idle M was woken
  std::uint64_t preemptions = 0;     ///< goroutines stopped at a safe
                                     ///< point on their P's request
  std::uint64_t stw_pauses = 0;      ///< stops of the world
  std::uint64_t stw_pause_ns = 0;    ///< their total length
  std::uint64_t stw_max_pause_ns = 0;  ///< the longest
};

}  // namespace gmp::stage3
