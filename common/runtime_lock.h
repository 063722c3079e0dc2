/// \file
/// RuntimeLock: the runtime's own mutex, Go's runtime.mutex (lock_futex.go).
///
/// ```unparsed
/// Why not std::mutex? Because of how a goroutine parks (scheduler.h): it
/// locks an object (a channel, say), decides to wait, and must release that
/// lock only after it has switched away to its scheduler context (g0), so
/// that nobody can wake it before its registers are saved. So the lock is
/// taken by a goroutine and released by g0: on the same OS thread, but in a
/// different execution context. A std::mutex has an owner (and ThreadSanitizer
/// checks it); this lock does not, exactly like Go's.
///
/// The algorithm is Go's (and Drepper's "Futexes Are Tricky", mutex 2): the
/// key is 0 (unlocked), 1 (locked) or 2 (locked, and someone may sleep). A
/// locker that finds it taken spins as Go's lock2 does (4 rounds of 30
/// pause instructions, then one sched_yield), then sets 2 and sleeps on the
/// key (a futex, through std::atomic::wait); unlock wakes one sleeper only if
/// the key was 2. Exercise 14 builds the same lock on a bare futex.
/// ```
#pragma once

#include <atomic>
#include <cstdint>

namespace gmp {

/// A mutual-exclusion lock without an owner: it may be unlocked by another
/// execution context than the one that locked it (see above). Meets the
/// standard Lockable requirements. Any thread; not recursive.
class RuntimeLock {
 public:
  RuntimeLock() = default;
  RuntimeLock(const RuntimeLock&) = delete;
  RuntimeLock& operator=(const RuntimeLock&) = delete;

  /// Blocks until the lock is taken.
  void lock() noexcept {
    std::uint32_t expected = kUnlocked;
    // acquire: pairs with the release in unlock(); the critical section
    // that follows sees everything the previous holder wrote.
    // Counted before it is taken (as Go's m.locks++ comes first): a signal
    // landing between the two must not see the lock held and the count 0.
    // The signal fence keeps the compiler from moving the count past it.
    ++held_;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (!key_.compare_exchange_strong(expected, kLocked,
                                      std::memory_order_acquire,
                                      std::memory_order_relaxed)) {
      lock_slow();
    }
  }

  /// Takes the lock if it is free; never blocks.
  bool try_lock() noexcept {
    std::uint32_t expected = kUnlocked;
    // acquire: as in lock().
    ++held_;  // first, as in lock()
    std::atomic_signal_fence(std::memory_order_seq_cst);
    bool taken = key_.compare_exchange_strong(expected, kLocked,
                                              std::memory_order_acquire,
                                              std::memory_order_relaxed);
    if (!taken) --held_;
    return taken;
  }

  /// Releases the lock and wakes one sleeper if there may be one.
  void unlock() noexcept {
    // release: publishes the critical section to the next acquirer.
    if (key_.exchange(kUnlocked, std::memory_order_release) == kSleeping) {
      // The lock may already belong to someone else, or even be destroyed:
      // this only asks the kernel to wake a futex waiter at the address,
      // which never reads the memory (as glibc's mutex does too).
      key_.notify_one();
    }
    std::atomic_signal_fence(std::memory_order_seq_cst);
    --held_;  // last: see lock()
  }

  /// How many runtime locks the calling thread holds (Go's m.locks). Stage
  /// 5's preemption signal never stops a goroutine holding one: whoever
  /// ran next on its P could wait for the lock for ever. Counted per thread,
  /// since a goroutine's lock is released on the same M (by g0 if it
  /// parks); a few cycles per lock.
  static int held_by_this_thread() noexcept { return held_; }

 private:
  friend class NoPreempt;
  static constexpr std::uint32_t kUnlocked = 0;
  static constexpr std::uint32_t kLocked = 1;
  static constexpr std::uint32_t kSleeping = 2;  // locked, maybe sleepers

  void lock_slow() noexcept;

  static inline thread_local constinit int held_ = 0;  // this thread's

  std::atomic<std::uint32_t> key_{kUnlocked};
};

/// Go's acquirem / releasem: while one lives, the calling thread counts as
/// holding a runtime lock (RuntimeLock::held_by_this_thread), so stage 5
/// does not preempt the goroutine running there, which then stays on this
/// thread unless it parks. For code that keeps per-thread state across a
/// few steps without a lock (context.h's release of a chain). Not for
/// code that parks.
class NoPreempt {
 public:
  /// Counts as one more runtime lock held by the calling thread.
  NoPreempt() noexcept {
    ++RuntimeLock::held_;
    std::atomic_signal_fence(std::memory_order_seq_cst);  // as lock()'s
  }
  /// Counts it off again (the same thread: nothing in between parks).
  ~NoPreempt() {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    --RuntimeLock::held_;
  }
  NoPreempt(const NoPreempt&) = delete;
  NoPreempt& operator=(const NoPreempt&) = delete;
};

}  // namespace gmp
