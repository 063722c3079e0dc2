/// \file
/// CountingLock: a RuntimeLock that counts how it is used, to make the
/// contention of a global lock visible (stage 2's global run queue lock is
/// the one the course measures).
#pragma once

#include <chrono>
#include <cstdint>

#include "common/runtime_lock.h"

namespace gmp {

/// Contention figures of a CountingLock.
struct LockCounters {
  std::uint64_t acquisitions = 0;  ///< times the lock was taken
  std::uint64_t contended = 0;     ///< of which it was held by someone else
  std::uint64_t wait_ns = 0;       ///< total time spent waiting for it
};

/// A RuntimeLock with contention counters. Lockable; any thread. The only
/// cost over a RuntimeLock is two increments, plus two clock reads when the
/// lock was contended (then we wait anyway).
class CountingLock {
 public:
  /// Takes the lock; counts the acquisition, and the wait if contended.
  void lock() noexcept {
    if (!lock_.try_lock()) {
      auto start = std::chrono::steady_clock::now();
      lock_.lock();
      ++counters_.contended;
      counters_.wait_ns += static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(
              std::chrono::steady_clock::now() - start)
              .count());
    }
    ++counters_.acquisitions;
  }

  /// Takes the lock if free (counted as an uncontended acquisition).
  bool try_lock() noexcept {
    if (!lock_.try_lock()) return false;
    ++counters_.acquisitions;
    return true;
  }

  /// Releases the lock.
  void unlock() noexcept { lock_.unlock(); }

  /// The counters so far. The caller must hold the lock.
  const LockCounters& counters() const noexcept { return counters_; }
  /// Zeroes the counters. The caller must hold the lock.
  void reset_counters() noexcept { counters_ = LockCounters{}; }

 private:
  RuntimeLock lock_;
  LockCounters counters_;  // protected by lock_: updated once it is held
};

}  // namespace gmp
