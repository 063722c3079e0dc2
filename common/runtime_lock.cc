#include "common/runtime_lock.h"

#include <thread>

namespace gmp {

// Go's lock2: spin a little (the holder is probably running on another
// CPU and about to release), yield once, then announce a sleeper and sleep.
void RuntimeLock::lock_slow() noexcept {
  constexpr int kSpins = 64;  // arbitrary, like Go's active_spin (4 x 30)
  for (int i = 0; i < kSpins; ++i) {
    std::uint32_t expected = kUnlocked;
    // acquire: pairs with unlock()'s release.
    if (key_.load(std::memory_order_relaxed) == kUnlocked &&
        key_.compare_exchange_weak(expected, kLocked,
                                   std::memory_order_acquire,
                                   std::memory_order_relaxed)) {
      return;
    }
  }
  std::this_thread::yield();
  // From here on the key is 2 whenever we hold it: we cannot know whether
  // other sleepers remain, so our unlock must wake one.
  // acquire: pairs with unlock()'s release when the exchange finds 0.
  while (key_.exchange(kSleeping, std::memory_order_acquire) != kUnlocked) {
    key_.wait(kSleeping, std::memory_order_relaxed);  // futex wait on 2
  }
}

}  // namespace gmp
