/// \file
/// M: an OS thread that runs goroutines while it holds a P (Go's m).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "common/note.h"
#include "stage2_global_queue/mcore.h"
#include "stage2_global_queue/tls.h"
#include "stage3_gmp/p.h"

namespace gmp::stage3 {

class Runtime;

/// Stage 3's own request to g0 (stage2::MCall): gopreempt_m, for a
/// goroutine stopped at a safe point.
inline constexpr stage2::MCall kPreemptCall = stage2::MCall::kFirstOwn;
/// The first request value left to a scheduler built on this one.
inline constexpr auto kFirstLaterCall = static_cast<stage2::MCall>(
    static_cast<unsigned char>(kPreemptCall) + 1);

/// One OS thread of a stage 3 runtime: the shared MCore (g0, the running
/// goroutine, the request to g0), plus the P it holds and its spinning.
struct M : stage2::MCore {
  /// M number `index` of `runtime`; its thread is started by newm.
  M(Runtime* runtime, int index) : rt(runtime), id(index) {}

  Runtime* const rt;   ///< immutable
  const int id;        ///< immutable; in creation order
  std::thread thread;  ///< joined by Runtime::run's thread at the end

  // Owner thread only.
  P* p = nullptr;  ///< the P this M holds (Go's m.p), or null
  std::chrono::steady_clock::time_point spin_start;  ///< when it began

  /// Looking for work without a goroutine to run (Go's m.spinning).
  /// Written by the M itself, or by startm before it wakes the M; read by
  /// traces (relaxed).
  std::atomic<bool> spinning{false};

  /// Idle M's sleep: cleared and slept on by this M, woken by the one that
  /// takes it off the idle list (thread-safe).
  Note park;

  // Protected by the sched lock.
  P* nextp = nullptr;      ///< the P to take when woken (Go's m.nextp)
  M* schedlink = nullptr;  ///< next idle M
  bool idle = false;       ///< on the idle list
  /// Asleep in stoplockedm until its locked goroutine is handed to it
  /// (startlockedm wakes it only then: the Note takes one wake-up).
  bool lockedwait = false;

  // For traces and stats: written by the owner (relaxed), read by anyone.
  std::atomic<std::uint64_t> curg_goid{0};  ///< goroutine running, or 0
  std::atomic<int> p_id{-1};                ///< P held, or -1
  std::atomic<std::uint64_t> spinning_ns{0};  ///< total time spent spinning
  std::atomic<std::uint64_t> parks{0};        ///< times it went idle
};

/// The M whose thread is running the caller; null on other threads (read
/// through the opaque getm_core(): never cached across a switch).
inline M* getm() noexcept { return static_cast<M*>(stage2::getm_core()); }

}  // namespace gmp::stage3
