// Exercise 14: the runtime's own lock and its one-shot event, on a futex
// (Go's runtime/lock_futex.go: lock2, unlock2, noteclear, notewakeup,
// notesleep, notetsleep). See README.md for the statement.
//
// Given here: the futex word (FutexWord: std::atomic<std::uint32_t>'s
// operations, which the tests can observe), the futex itself (futexsleep,
// futexwakeup: Linux's futex(2) on that word, counted for the tests), the
// spin helpers (procyield, osyield) and a clock (nanotime). Write the six
// member functions of futex_lock.cc.
//
// The keys
// ========
//   Mutex::key_   0 unlocked, 1 locked, 2 locked and a thread may sleep on it
//   Note::key_    0 not yet woken, 1 woken
// A thread sleeps only with futexsleep(&key, v), which returns at once if
// the key no longer holds v: a wake that comes between the check and the
// sleep is not lost. futexsleep may also return for no reason at all (a
// signal, a wake meant for an earlier sleeper): the first futexsleep of
// every thread here returns at once, so a caller that does not check its
// key again after a sleep is caught.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <utility>

#include "common/procyield.h"

namespace gmp::exercises::futex {

// ---- Provided: a test hook and the futex word
// --------------------------------

/// A step of the code under test, as the test hook sees it.
enum class Step : std::uint8_t {
  kKey,          ///< an operation on a FutexWord (load, store, exchange, CAS)
  kProcyield,    ///< procyield(arg) returned
  kOsyield,      ///< osyield() returned
  kFutexsleep,   ///< futexsleep(addr, val, arg) returned (arg: its ns)
  kFutexwakeup,  ///< futexwakeup(addr, arg) returned
};

/// Test-only: run on the calling thread after each Step (that thread's
/// own; empty by default), with the step's argument (0 for kKey). A test
/// records the steps of a thread, or plays another thread's part between
/// two of them: a holder's unlock while a locker spins, a second wakeup
/// between the load and the store of the first. What the hook itself calls
/// is not hooked.
inline thread_local std::function<void(Step, std::int64_t)> step_hook;

/// Runs this thread's step_hook, if any, disarmed while it runs. Provided
/// code only.
inline void after_step(Step step, std::int64_t arg) {
  if (!step_hook) return;
  std::function<void(Step, std::int64_t)> hook = std::move(step_hook);
  step_hook = nullptr;
  struct Rearm {  // even if the hook throws
    std::function<void(Step, std::int64_t)>& slot;
    std::function<void(Step, std::int64_t)>& hook;
    ~Rearm() { slot = std::move(hook); }
  } rearm{step_hook, hook};
  hook(step, arg);
}

/// The 32-bit word a futex sleeps on: std::atomic<std::uint32_t>'s load,
/// store, exchange and compare-and-swap, with the same memory orders, each
/// followed by after_step(Step::kKey, 0).
class FutexWord {
  // The operation, then the hook (defined before its callers: they deduce
  // its return type).
  template <class Op>
  static auto stepped(Op op) {
    auto result = op();
    after_step(Step::kKey, 0);
    return result;
  }

 public:
  constexpr FutexWord(std::uint32_t v) noexcept : a_(v) {}  // NOLINT
  FutexWord(const FutexWord&) = delete;
  FutexWord& operator=(const FutexWord&) = delete;

  std::uint32_t load(std::memory_order mo = std::memory_order_seq_cst) const {
    return stepped([&] { return a_.load(mo); });
  }
  void store(std::uint32_t v,
             std::memory_order mo = std::memory_order_seq_cst) {
    stepped([&] { a_.store(v, mo); return 0; });
  }
  std::uint32_t exchange(std::uint32_t v,
                         std::memory_order mo = std::memory_order_seq_cst) {
    return stepped([&] { return a_.exchange(v, mo); });
  }
  bool compare_exchange_weak(std::uint32_t& expected, std::uint32_t desired,
                             std::memory_order success,
                             std::memory_order failure) {
    return stepped([&] {
      return a_.compare_exchange_weak(expected, desired, success, failure);
    });
  }
  bool compare_exchange_weak(std::uint32_t& expected, std::uint32_t desired,
                             std::memory_order mo = std::memory_order_seq_cst) {
    return stepped([&] { return a_.compare_exchange_weak(expected, desired, mo); });
  }
  bool compare_exchange_strong(std::uint32_t& expected, std::uint32_t desired,
                               std::memory_order success,
                               std::memory_order failure) {
    return stepped([&] {
      return a_.compare_exchange_strong(expected, desired, success, failure);
    });
  }
  bool compare_exchange_strong(
      std::uint32_t& expected, std::uint32_t desired,
      std::memory_order mo = std::memory_order_seq_cst) {
    return stepped(
        [&] { return a_.compare_exchange_strong(expected, desired, mo); });
  }

  /// The value, unhooked (relaxed): for the tests' key() only.
  std::uint32_t peek() const { return a_.load(std::memory_order_relaxed); }
  /// The word the kernel sees: for the provided futex calls only.
  /// std::atomic<uint32_t> has the layout of a uint32_t (static_assert
  /// below).
  std::uint32_t* word() { return reinterpret_cast<std::uint32_t*>(&a_); }

 private:
  std::atomic<std::uint32_t> a_;
};
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));

// ---- Provided: the futex and the helpers
// -------------------------------------

/// Calls of the futex functions so far, all threads (for the tests).
struct FutexCounts {
  std::uint64_t sleeps = 0;   ///< futexsleep calls
  std::uint64_t wakeups = 0;  ///< futexwakeup calls
};

namespace provided {
inline std::atomic<std::uint64_t> sleeps{0};    // relaxed: counts only
inline std::atomic<std::uint64_t> wakeups{0};   // relaxed: counts only
inline std::atomic<int> sleeping{0};            // relaxed: a snapshot
inline thread_local bool slept_before = false;  // this thread's first call?
}  // namespace provided

/// Go's futexsleep(addr, val, ns): if *addr still holds val, sleeps until a
/// futexwakeup on addr or until ns nanoseconds pass (ns < 0: no limit).
/// Returns at once if *addr != val. May return early for no reason; the
/// first call of each thread always does.
inline void futexsleep(FutexWord* addr, std::uint32_t val, std::int64_t ns) {
  provided::sleeps.fetch_add(1, std::memory_order_relaxed);
  if (!provided::slept_before) {  // a spurious return, as the kernel may
    provided::slept_before = true;
    after_step(Step::kFutexsleep, ns);
    return;
  }
  timespec ts{};
  if (ns >= 0) {
    ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  }
  provided::sleeping.fetch_add(1, std::memory_order_relaxed);
  syscall(SYS_futex, addr->word(), FUTEX_WAIT_PRIVATE, val,
          ns >= 0 ? &ts : nullptr, nullptr, 0);
  provided::sleeping.fetch_sub(1, std::memory_order_relaxed);
  after_step(Step::kFutexsleep, ns);
}

/// Go's futexwakeup(addr, cnt): wakes up to cnt threads sleeping on addr.
inline void futexwakeup(FutexWord* addr, std::uint32_t cnt) {
  provided::wakeups.fetch_add(1, std::memory_order_relaxed);
  syscall(SYS_futex, addr->word(), FUTEX_WAKE_PRIVATE, cnt, nullptr, nullptr,
          0);
  after_step(Step::kFutexwakeup, cnt);
}

/// The futex calls made so far, by every thread.
inline FutexCounts futex_counts() {
  return {provided::sleeps.load(std::memory_order_relaxed),
          provided::wakeups.load(std::memory_order_relaxed)};
}

/// Threads inside futexsleep's wait now (not counting spurious returns).
inline int futex_sleepers() {
  return provided::sleeping.load(std::memory_order_relaxed);
}

/// Go's procyield(n): n pause instructions (a spin-wait hint to the CPU;
/// gmp::procyield of common/procyield.h, the one the course's own lock
/// spins with).
inline void procyield(int n) {
  gmp::procyield(n);
  after_step(Step::kProcyield, n);
}

/// Go's osyield: gives the CPU to another thread (sched_yield).
inline void osyield() {
  std::this_thread::yield();
  after_step(Step::kOsyield, 0);
}

/// Go's nanotime: a monotonic clock, in nanoseconds.
inline std::int64_t nanotime() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Go's spin limits in lock2 (lock_futex.go).
inline constexpr int kActiveSpin = 4;      ///< rounds of procyield
inline constexpr int kActiveSpinCnt = 30;  ///< pauses per round
inline constexpr int kPassiveSpin = 1;     ///< rounds of osyield

// ---- Yours: futex_lock.cc
// -----------------------------------------------------

/// Go's runtime mutex (lock_futex.go). Not recursive; any thread may unlock
/// it (it has no owner).
class Mutex {
 public:
  /// Go's lock2: takes the lock. Uncontended, one atomic operation and no
  /// futex call; contended, spins kActiveSpin rounds, yields kPassiveSpin
  /// times, then sleeps on the key until an unlock wakes it.
  void lock();
  /// Go's unlock2: releases the lock; calls futexwakeup (one thread) only
  /// if a thread may be sleeping. Throws std::logic_error("unlock of
  /// unlocked lock") if the lock was not held; the lock stays unlocked.
  void unlock();

  /// The key (for the tests): 0, 1 or 2.
  std::uint32_t key() const { return key_.peek(); }

 private:
  static constexpr std::uint32_t kUnlocked = 0;  ///< Go's mutex_unlocked
  static constexpr std::uint32_t kLocked = 1;    ///< Go's mutex_locked
  static constexpr std::uint32_t kSleeping = 2;  ///< Go's mutex_sleeping
  FutexWord key_{kUnlocked};
};

/// Go's note: a one-shot event. clear() it; then one thread sleeps and one
/// wakes it, at most once per clear().
class Note {
 public:
  /// Go's noteclear: re-arms the note. Only when nobody sleeps on it.
  void clear();
  /// Go's notewakeup: marks the note woken and wakes its sleeper, if any.
  /// A second wakeup without a clear() throws std::logic_error("notewakeup
  /// - double wakeup").
  void wakeup();
  /// Go's notesleep: returns once the note is woken (at once if it was
  /// woken already, without a futex call).
  void sleep();
  /// Go's notetsleep: like sleep(), but gives up after ns nanoseconds
  /// (ns < 0: never). Returns whether the note was woken.
  bool tsleep(std::int64_t ns);

  /// The key (for the tests): 0 or 1.
  std::uint32_t key() const { return key_.peek(); }

 private:
  FutexWord key_{0};
};

}  // namespace gmp::exercises::futex
