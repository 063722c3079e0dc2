// Exercise 14, reference solution: Go's lock2, unlock2 and the futex note
// (runtime/lock_futex.go, Go 1.19).
#include "exercises/14_futex_lock/futex_lock.h"

#include <stdexcept>

namespace gmp::exercises::futex {

void Mutex::lock() {
  // Speculative grab. acquire: pairs with unlock's release; the critical
  // section sees what the previous holder wrote.
  std::uint32_t v = key_.exchange(kLocked, std::memory_order_acquire);
  if (v == kUnlocked) return;
  // v is kLocked or kSleeping. If it was kSleeping, our exchange just hid a
  // sleeper: whatever we write from now on must be kSleeping again, or the
  // unlock that ends our turn would not wake that sleeper.
  std::uint32_t wait = v;
  for (;;) {
    // Spin: the holder is probably running on another CPU and about to
    // let go, and a futex sleep and wake cost two system calls.
    for (int i = 0; i < kActiveSpin; ++i) {
      while (key_.load(std::memory_order_relaxed) == kUnlocked) {
        std::uint32_t expected = kUnlocked;
        if (key_.compare_exchange_weak(expected, wait, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
          return;
        }
      }
      procyield(kActiveSpinCnt);
    }
    for (int i = 0; i < kPassiveSpin; ++i) {
      while (key_.load(std::memory_order_relaxed) == kUnlocked) {
        std::uint32_t expected = kUnlocked;
        if (key_.compare_exchange_weak(expected, wait, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
          return;
        }
      }
      osyield();
    }
    // Sleep, announced: with the key at kSleeping, the holder's unlock will
    // wake someone. If the exchange finds the lock free, it is ours (as
    // kSleeping: there may be other sleepers).
    v = key_.exchange(kSleeping, std::memory_order_acquire);
    if (v == kUnlocked) return;
    wait = kSleeping;
    futexsleep(&key_, kSleeping, -1);  // returns at once if the key moved
  }
}

void Mutex::unlock() {
  // release: publishes the critical section to the next locker.
  std::uint32_t v = key_.exchange(kUnlocked, std::memory_order_release);
  if (v == kUnlocked) throw std::logic_error("unlock of unlocked lock");
  if (v == kSleeping) futexwakeup(&key_, 1);  // only if someone may sleep
}

void Note::clear() { key_.store(0, std::memory_order_relaxed); }

void Note::wakeup() {
  // release: what the waker wrote before is seen by the sleeper's acquire.
  std::uint32_t old = key_.exchange(1, std::memory_order_release);
  if (old != 0) throw std::logic_error("notewakeup - double wakeup");
  futexwakeup(&key_, 1);
}

void Note::sleep() {
  // acquire: pairs with wakeup's release. The loop: a futexsleep may
  // return without a wakeup.
  while (key_.load(std::memory_order_acquire) == 0) futexsleep(&key_, 0, -1);
}

bool Note::tsleep(std::int64_t ns) {
  if (ns < 0) {
    sleep();
    return true;
  }
  if (key_.load(std::memory_order_acquire) != 0) return true;
  const std::int64_t deadline = nanotime() + ns;
  for (;;) {
    futexsleep(&key_, 0, ns);
    if (key_.load(std::memory_order_acquire) != 0) return true;
    std::int64_t now = nanotime();
    if (now >= deadline) return false;
    ns = deadline - now;  // woken early for nothing: sleep the rest
  }
}

}  // namespace gmp::exercises::futex
