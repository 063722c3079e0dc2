// Exercise 05, reference solution: Go's runqput, runqget, runqgrab and
// runqsteal (proc.go), without runnext and overflow.
#include "exercises/05_local_runq/runq.h"

namespace gmp::exercises::runq {

bool LocalRunQueue::runqput(G* gp) {
  // acquire: our later overwrite of a slot must come after the consumer
  // that freed it (by moving head) has read it.
  std::uint32_t h = head_.load(std::memory_order_acquire);
  std::uint32_t t = tail_.load(std::memory_order_relaxed);  // only we write it
  if (t - h >= kCapacity) return false;
  slots_[t % kCapacity].store(gp, std::memory_order_relaxed);
  // release: a consumer that reads this tail with acquire sees the slot.
  tail_.store(t + 1, std::memory_order_release);
  return true;
}

G* LocalRunQueue::runqget() {
  for (;;) {
    // acquire: pairs with other consumers' releasing CAS on head.
    std::uint32_t h = head_.load(std::memory_order_acquire);
    std::uint32_t t = tail_.load(std::memory_order_relaxed);  // only we write it
    if (t == h) return nullptr;
    G* gp = slots_[h % kCapacity].load(std::memory_order_relaxed);
    // release: our read of the slot happens before the owner reuses it.
    if (head_.compare_exchange_weak(h, h + 1, std::memory_order_release,
                                    std::memory_order_relaxed)) {
      return gp;
    }
  }
}

std::uint32_t LocalRunQueue::runqgrab(std::array<G*, kCapacity / 2>& batch) {
  for (;;) {
    // acquire: pairs with other consumers' CAS on head.
    std::uint32_t h = head_.load(std::memory_order_acquire);
    // acquire: pairs with the owner's release of tail (the slots are set).
    std::uint32_t t = tail_.load(std::memory_order_acquire);
    std::uint32_t n = t - h;
    n = n - n / 2;
    if (n == 0) return 0;
    // A stale h and a fresh t can look longer than the ring: retry.
    if (n > kCapacity / 2) continue;
    for (std::uint32_t i = 0; i < n; ++i) {
      batch[i] = slots_[(h + i) % kCapacity].load(std::memory_order_relaxed);
    }
    // release: commits the consume; our reads of the slots come first.
    if (head_.compare_exchange_weak(h, h + n, std::memory_order_release,
                                    std::memory_order_relaxed)) {
      return n;
    }
  }
}

G* LocalRunQueue::runqsteal(LocalRunQueue& victim) {
  std::array<G*, kCapacity / 2> batch;
  std::uint32_t n = victim.runqgrab(batch);
  if (n == 0) return nullptr;
  --n;
  // The thief's own queue is empty (we only steal when out of work), so
  // the n others fit; runqput cannot fail here.
  for (std::uint32_t i = 0; i < n; ++i) runqput(batch[i]);
  return batch[n];
}

std::uint32_t LocalRunQueue::size() const {
  for (;;) {
    // acquire/relaxed: a consistent pair, re-read if head moved meanwhile.
    std::uint32_t h = head_.load(std::memory_order_acquire);
    std::uint32_t t = tail_.load(std::memory_order_acquire);
    if (h == head_.load(std::memory_order_relaxed)) return t - h;
  }
}

}  // namespace gmp::exercises::runq
