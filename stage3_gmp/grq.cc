// Stage 3's global run queue (GRQ): Go's globrunqput, globrunqputhead,
// globrunqputbatch and globrunqget (proc.go), all with sched_ held. Lab
// "grq" (labs/grq) replaces this file.
#include <algorithm>
#include <mutex>

#include "common/check.h"
#include "stage3_gmp/runtime.h"

namespace gmp::stage3 {

using Overflow = LocalRunQueue<256>::Overflow;

void Runtime::globrunqput(G* gp) {
  gp->schedlink = nullptr;
  globrunqputbatch(gp, gp, 1);
}

void Runtime::globrunqputhead(G* gp) {
  gp->schedlink = grq_head_;
  grq_head_ = gp;
  if (grq_tail_ == nullptr) grq_tail_ = gp;
  std::int32_t size = grq_size_.load(std::memory_order_relaxed) + 1;
  grq_size_.store(size, std::memory_order_relaxed);  // sched_ held: see below
  stats_.max_queue_len =
      std::max(stats_.max_queue_len, static_cast<std::size_t>(size));
}

void Runtime::link_batch(G* const* gs, std::uint32_t n) noexcept {
  for (std::uint32_t i = 0; i + 1 < n; ++i) gs[i]->schedlink = gs[i + 1];
  gs[n - 1]->schedlink = nullptr;
}

void Runtime::globrunqputbatch(G* head, G* tail, std::uint32_t n) {
  (grq_tail_ != nullptr ? grq_tail_->schedlink : grq_head_) = head;
  grq_tail_ = tail;
  // A load and a store, not an atomic add: only holders of sched_ write
  // it; the atomic is for readers without the lock.
  std::int32_t size = grq_size_.load(std::memory_order_relaxed) +
                      static_cast<std::int32_t>(n);
  grq_size_.store(size, std::memory_order_relaxed);
  stats_.max_queue_len =
      std::max(stats_.max_queue_len, static_cast<std::size_t>(size));
}

//! [globrunqget]
G* Runtime::globrunqget(P* pp, std::uint32_t max) {
  auto size = static_cast<std::uint32_t>(
      grq_size_.load(std::memory_order_relaxed));
  if (size == 0) return nullptr;
  auto procs = static_cast<std::uint32_t>(
      gomaxprocs_.load(std::memory_order_relaxed));
  std::uint32_t n = std::min(size / procs + 1, size);
  if (max > 0) n = std::min(n, max);
  n = std::min<std::uint32_t>(n, LocalRunQueue<256>::kCapacity / 2);
  grq_size_.store(static_cast<std::int32_t>(size - n),
                  std::memory_order_relaxed);  // sched_ held: see above
  auto pop = [this] {
    G* gp = grq_head_;
    grq_head_ = gp->schedlink;
    if (grq_head_ == nullptr) grq_tail_ = nullptr;
    gp->schedlink = nullptr;
    return gp;
  };
  G* first = pop();
  Overflow unused;
  for (std::uint32_t i = 1; i < n; ++i) {
    GMP_CHECK(pp->runq.owner().put(pop(), false, unused) == 0,
              "globrunqget: the local queue overflowed");
  }
  PCounters::inc(pp->counters.grq_takes);
  PCounters::inc(pp->counters.grq_goroutines, n);
  if (trace::Buffer* t = mtrace()) [[unlikely]] t->grq_get(pp->id, n);
  return first;
}
//! [globrunqget]

}  // namespace gmp::stage3
