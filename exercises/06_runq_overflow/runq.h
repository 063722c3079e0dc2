// Exercise 06: runnext and the overflow of a full local queue to the global
// run queue (Go's runqput, runqputslow, runqget, globrunqputbatch).
//
// Given: the ring (owner-only here: exercise 05 made it lock-free; this
// exercise is about the policy on top), the global run queue, and the
// thief's side of runnext. Write runqput, runqputslow and runqget in
// runq.cc. See README.md for the statement.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <utility>
#include <vector>

namespace gmp::exercises::overflow {

/// A goroutine, as far as the queues care.
struct G {
  int id = 0;  ///< a test's label
};

/// The global run queue (Go's sched.runq under sched.lock): a FIFO behind
/// one lock. Thread-safe.
class GlobalRunQueue {
 public:
  /// Go's globrunqputbatch: appends `n` goroutines, in order, under one
  /// acquisition of the lock.
  void putbatch(G* const* gs, std::uint32_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    ++lock_acquisitions_;
    q_.insert(q_.end(), gs, gs + n);
  }
  /// Go's globrunqget with a batch of one: the head, or null.
  G* get() {
    std::lock_guard<std::mutex> lock(mu_);
    ++lock_acquisitions_;
    if (q_.empty()) return nullptr;
    G* g = q_.front();
    q_.pop_front();
    return g;
  }
  /// Goroutines queued; a snapshot.
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return q_.size();
  }
  /// How many times the lock was taken (the cost the batch saves).
  std::uint64_t lock_acquisitions() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lock_acquisitions_;
  }

 private:
  mutable std::mutex mu_;
  std::deque<G*> q_;                     // guarded by mu_
  std::uint64_t lock_acquisitions_ = 0;  // guarded by mu_
};

/// The ring of a P's local run queue, 256 slots, FIFO. Owner only: the
/// thread holding the P. (Exercise 05 writes the lock-free version.)
class Ring {
 public:
  /// Slots (Go: len(p.runq)).
  static constexpr std::uint32_t kCapacity = 256;
  /// Appends at the tail; false if full.
  bool push(G* g) {
    if (size() == kCapacity) return false;
    slots_[tail_++ % kCapacity] = g;
    return true;
  }
  /// Takes the head, or null.
  G* pop() { return head_ == tail_ ? nullptr : slots_[head_++ % kCapacity]; }
  /// Goroutines in the ring.
  std::uint32_t size() const { return tail_ - head_; }

 private:
  std::array<G*, kCapacity> slots_{};  // owner only
  std::uint32_t head_ = 0;             // owner only; only grows (wraps)
  std::uint32_t tail_ = 0;             // owner only; only grows (wraps)
};

/// A P's run queue: the ring plus runnext (Go's p.runnext): the goroutine
/// the owner readied last, which runs next and inherits the current time
/// slice.
class LocalRunQueue {
 public:
  /// Go's runqput. With `next`, gp becomes runnext and the goroutine it
  /// displaces (if any) goes to the tail of the ring; otherwise gp goes to
  /// the tail. If the ring is full, runqputslow moves the oldest half of it
  /// and that goroutine to `grq` in one batch. Owner only.
  void runqput(G* gp, bool next, GlobalRunQueue& grq);

  /// Go's runqget: runnext first, and then `.second` (inheritTime) is
  /// true; else the ring's head with false; {null, false} when empty.
  /// Owner only.
  std::pair<G*, bool> runqget();

  /// The thief's side, given: takes runnext if set (Go's runqgrab does
  /// this for an otherwise empty victim). Any thread.
  G* steal_runnext() {
    G* next = runnext_.load(std::memory_order_relaxed);
    // acquire: pairs with the owner's release that published it.
    while (next != nullptr &&
           !runnext_.compare_exchange_weak(next, nullptr,
                                           std::memory_order_acquire,
                                           std::memory_order_relaxed)) {
    }
    return next;
  }

  /// Goroutines in the ring (runnext not counted). Owner only.
  std::uint32_t ring_size() const { return ring_.size(); }

 private:
  /// Go's runqputslow: the ring is full; moves its oldest half and gp
  /// after them to `grq`, with one putbatch. Owner only.
  void runqputslow(G* gp, GlobalRunQueue& grq);

  Ring ring_;  // owner only
  // runnext_: set by the owner, cleared by the owner or a thief, always
  // with a compare-and-swap (or exchange) so that no goroutine is lost.
  std::atomic<G*> runnext_{nullptr};
};

}  // namespace gmp::exercises::overflow
