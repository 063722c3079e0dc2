// Exercise 05: a P's local run queue (Go's p.runq, runqhead, runqtail).
//
// The interface and the fields are given; write the functions in runq.cc.
// See README.md for the statement.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "exercises/testing/atomic.h"

namespace gmp::exercises::runq {

/// A goroutine, as far as the queue cares: the queue stores pointers.
struct G {
  /// A test's label, written before runqput and read by whoever takes the
  /// goroutine: an int (a variable Relacy checks, in the memory-model
  /// check build).
  Plain<int> id;
};

/// A ring of 256 goroutine pointers that one thread (the owner, the M that
/// holds the P) fills and empties at will, and that other threads (thieves)
/// may take half of, all without a lock.
class LocalRunQueue {
 public:
  /// Slots in the ring (Go: len(p.runq)): 256, or 8 in the memory-model
  /// build, so that its checker sees full, wrapped and torn queues in a few
  /// steps. Write the code with kCapacity, never with its value.
#if defined(GMP_RELACY)
  static constexpr std::uint32_t kCapacity = 8;
#else
  static constexpr std::uint32_t kCapacity = 256;
#endif

  /// Go's runqput, without runnext and without overflow (exercise 06 adds
  /// both): puts gp at the tail. Returns false, changing nothing, if the
  /// queue is full. Owner only.
  bool runqput(G* gp);

  /// Go's runqget: takes the goroutine at the head, or returns null if the
  /// queue is empty. Owner only.
  G* runqget();

  /// Go's runqsteal: called by the owner of *this* (the thief's own, empty
  /// queue), takes half of `victim`'s goroutines (rounded up: 1 of 1, 2 of
  /// 3), puts all but the last of them in this queue and returns the last
  /// (to run at once). Returns null if the victim is empty. Safe while the
  /// victim's owner and other thieves use the victim.
  G* runqsteal(LocalRunQueue& victim);

  /// Goroutines in the queue; a snapshot (others may change it at once).
  std::uint32_t size() const;

 private:
  /// Go's runqgrab: copies half of this queue (rounded up) into `batch`
  /// and claims them; returns how many. Any thread.
  std::uint32_t runqgrab(std::array<G*, kCapacity / 2>& batch);

  // head_: the next slot to take. Advanced by consumers (the owner and the
  // thieves) with a compare-and-swap; only grows (wrapping).
  Atomic<std::uint32_t> head_{0};
  // tail_: the next slot to fill. Written by the owner only; only grows
  // (wrapping). tail_ - head_ is the length, even across the wrap.
  Atomic<std::uint32_t> tail_{0};
  // The ring: slot of position i is slots_[i % kCapacity]. Written by the
  // owner (a slot in [tail, head + 256)), read by consumers (a slot in
  // [head, tail)). Atomic so that a thief reading a slot the owner is
  // rewriting is not a data race (its CAS on head_ then fails).
  std::array<Atomic<G*>, kCapacity> slots_{};
};

}  // namespace gmp::exercises::runq
