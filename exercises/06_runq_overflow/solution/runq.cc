// Exercise 06, reference solution: Go's runqput with runnext, runqputslow
// and runqget (proc.go), over an owner-only ring.
#include "exercises/06_runq_overflow/runq.h"

namespace gmp::exercises::overflow {

void LocalRunQueue::runqput(G* gp, bool next, GlobalRunQueue& grq) {
  if (next) {
    // release: publishes gp to a thief that takes runnext with acquire.
    // An exchange, not a load and a store: a thief may clear runnext in
    // between, and the goroutine it took must not also be kicked out.
    G* old = runnext_.exchange(gp, std::memory_order_acq_rel);
    if (old == nullptr) return;
    gp = old;  // the displaced goroutine goes to the tail
  }
  if (!ring_.push(gp)) runqputslow(gp, grq);
}

void LocalRunQueue::runqputslow(G* gp, GlobalRunQueue& grq) {
  // The oldest half of the ring, then gp: the order they would have run in.
  std::array<G*, Ring::kCapacity / 2 + 1> batch;
  std::uint32_t n = ring_.size() / 2;
  for (std::uint32_t i = 0; i < n; ++i) batch[i] = ring_.pop();
  batch[n] = gp;
  // One lock acquisition for 129 goroutines: the point of the batch.
  grq.putbatch(batch.data(), n + 1);
}

std::pair<G*, bool> LocalRunQueue::runqget() {
  // acquire: pairs with the release that published it. exchange rather
  // than a CAS loop: whatever is there (or null, if a thief was first) is
  // ours.
  if (G* next = runnext_.exchange(nullptr, std::memory_order_acquire)) {
    return {next, true};
  }
  return {ring_.pop(), false};
}

}  // namespace gmp::exercises::overflow
