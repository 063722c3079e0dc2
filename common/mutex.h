/// \file
/// A goroutine mutex (Go's sync.Mutex), written once for every stage.
///
/// ```unparsed
/// A goroutine that finds the mutex locked parks on its wait queue instead of
/// spinning or blocking its thread (in stage 1 parking does block the thread:
/// that is stage 1's problem). Unlock with waiters hands the mutex directly
/// to the oldest waiter, which then runs already owning it.
///
/// Go's sync.Mutex is cleverer: in "normal mode" a running goroutine may
/// barge in ahead of the woken waiter (better throughput), and it switches
/// to this FIFO hand-off ("starvation mode") only after a waiter has waited
/// more than 1 ms. The course keeps only the hand-off: fair, and simple
/// enough to read in one sitting.
/// ```
#pragma once

#include <mutex>
#include <string>

#include "common/check.h"
#include "common/errors.h"
#include "common/runtime_lock.h"
#include "common/scheduler.h"

namespace gmp {

/// A mutual-exclusion lock for goroutines (Go's sync.Mutex). Each stage
/// exports it as `Mutex`. Meets the standard Lockable requirements, so
/// std::lock_guard and std::unique_lock work with it.
///
/// Every call must be made from a goroutine of a running runtime. As in Go,
/// the mutex is not tied to a goroutine: any goroutine may unlock it.
template <Scheduler S>
class BasicMutex {
 public:
  BasicMutex() = default;
  BasicMutex(const BasicMutex&) = delete;
  BasicMutex& operator=(const BasicMutex&) = delete;

  /// Fatal error if goroutines still wait for the mutex.
  ~BasicMutex() {
    std::lock_guard lk(lock_);
    if (waiters_.empty()) return;  // nobody waits: no message
    std::string waiters;
    waiters_.describe(WaitReason::kSyncMutexLock, waiters);
    check_not_waited_on("Mutex", waiters);
  }

  /// Locks, parking the calling goroutine while another goroutine holds it.
  /// Throws gmp::UsageError outside a goroutine.
  void lock() {
    G g = S::current_g("Mutex::lock");
    std::unique_lock lk(lock_);
    if (!locked_) {
      locked_ = true;
      return;
    }
    OwnSudog<S> me(g);
    park_on<S>(waiters_, *me, lk, WaitReason::kSyncMutexLock);
    // unlock() handed the mutex to us: locked_ stayed true.
  }

  /// Locks if free and returns true; returns false at once otherwise
  /// (Go's TryLock). Throws gmp::UsageError outside a goroutine.
  bool try_lock() {
    S::current_g("Mutex::try_lock");
    std::lock_guard lk(lock_);
    if (locked_) return false;
    locked_ = true;
    return true;
  }

  /// Unlocks, handing the mutex to the oldest waiter if there is one.
  /// Unlocking an unlocked mutex is a fatal error, as in Go ("sync: unlock
  /// of unlocked mutex"); so is calling it outside a goroutine, or with a
  /// waiter of another runtime (the mutex belongs to one runtime at a time).
  void unlock() noexcept {
    std::unique_lock lk(lock_, std::defer_lock);
    try {
      G g = S::current_g("Mutex::unlock");
      lk.lock();
      check_same_runtime<S>(waiters_, g, "Mutex::unlock", /*all=*/false);
    } catch (const UsageError& e) {
      fatal(e.what());  // noexcept (unlock runs in destructors): cannot throw
    }
    if (!locked_) fatal("sync: unlock of unlocked mutex");
    if (Sudog<G>* w = waiters_.dequeue()) {
      lk.unlock();  // locked_ stays true: the waiter now owns the mutex
      S::ready(*w);
      return;
    }
    locked_ = false;
  }

 private:
  using G = typename S::G;

  RuntimeLock lock_;    // guards the fields below (the runtime's own lock)
  bool locked_ = false;  // held by some goroutine
  WaitQ<G> waiters_;   // goroutines parked in lock(), oldest first
};

}  // namespace gmp
