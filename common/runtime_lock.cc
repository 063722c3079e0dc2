#include "common/runtime_lock.h"

#include <thread>

#include "common/procyield.h"

namespace gmp {
namespace {

// Go's lock_futex.go constants: how long a contended lock spins before it
// sleeps. The holder is usually running on another CPU and lets go within
// a microsecond or two (a goroutine parking holds its object's lock across
// the switch to g0); a futex sleep and the wake that ends it cost two
// system calls and a thread wake-up.
constexpr int kActiveSpin = 4;      // rounds of procyield
constexpr int kActiveSpinCnt = 30;  // pause instructions per round
constexpr int kPassiveSpin = 1;     // rounds of sched_yield

}  // namespace

// Go's lock2, after the fast path's compare-and-swap failed: spin (active,
// then passive), then announce a sleeper and sleep; woken, spin again.
// The spin matters most for a lock held across a switch, as a channel's
// is while a parking goroutine goes to g0: its holder is about to let go.
void RuntimeLock::lock_slow() noexcept {
  // What we write when we take the lock: kLocked, until we have slept once.
  // From then on kSleeping: we cannot know whether other sleepers remain,
  // so our unlock must wake one.
  std::uint32_t wait = kLocked;
  for (;;) {
    for (int i = 0; i < kActiveSpin + kPassiveSpin; ++i) {
      while (key_.load(std::memory_order_relaxed) == kUnlocked) {
        std::uint32_t expected = kUnlocked;
        // acquire: pairs with unlock()'s release.
        if (key_.compare_exchange_weak(expected, wait,
                                       std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
          return;
        }
      }
      if (i < kActiveSpin) {
        procyield(kActiveSpinCnt);
      } else {
        std::this_thread::yield();  // Go's osyield
      }
    }
    // acquire: pairs with unlock()'s release when the exchange finds 0.
    if (key_.exchange(kSleeping, std::memory_order_acquire) == kUnlocked) {
      return;
    }
    wait = kSleeping;
    key_.wait(kSleeping, std::memory_order_relaxed);  // futex wait on 2
  }
}

}  // namespace gmp
