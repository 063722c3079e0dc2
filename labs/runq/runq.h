/// \file
/// Lab "runq": YOUR local run queue for stage 3 (labs/runq/README.md).
/// With --define=lab=runq, stage 3 includes this file as
/// "stage3_gmp/runq.h" in place of its own: every P's queue, every steal,
/// every runqput of the real runtime goes through your code.
///
/// Keep the public interface below exactly (stage 3, its tests and the
/// benchmarks use it); the private part is yours to design. Each body
/// that ends the program with "fatal error: not written yet: ..." is yours
/// to write (inside the runtime an exception would have nowhere to go).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <utility>

#include "common/check.h"
#include "stage2_global_queue/g.h"

namespace gmp::stage3 {

using stage2::G;

/// A P's local run queue of Cap slots (a power of two) plus runnext.
/// Every shared field (head, tail, runnext, the slots) must be an
/// Atomic<T>: std::atomic in the runtime; in labs/runq_lab_test.cc a
/// wrapper with load, store, exchange, compare_exchange_weak and _strong
/// (and fetch_add, fetch_sub for integers) that runs a thief (or the
/// owner) between two of your atomic operations, so that each
/// interleaving is checked on one thread, every time.
template <std::uint32_t Cap = 256, template <class> class Atomic = std::atomic>
class LocalRunQueue {
  static_assert(Cap >= 4 && (Cap & (Cap - 1)) == 0, "Cap: a power of two");

 public:
  /// Slots in the ring (Go: len(p.runq) = 256).
  static constexpr std::uint32_t kCapacity = Cap;
  /// What a put into a full queue hands to the global run queue: the
  /// oldest half of the ring plus the goroutine being put (128 + 1).
  static constexpr std::uint32_t kOverflowBatch = Cap / 2 + 1;
  /// Where put() leaves the batch for the GRQ when the queue is full.
  using Overflow = std::array<G*, kOverflowBatch>;

  class Stealer;

  /// The owner's handle: only the M that holds the P uses it.
  class Owner {
   public:
    /// The owner's view of `q`.
    explicit Owner(LocalRunQueue& q) noexcept : q_(q) {}

    /// Go's runqput. With `next`, gp goes to runnext and the goroutine it
    /// displaces (if any) to the tail; otherwise gp goes to the tail. If
    /// the ring is full, its oldest half and that goroutine go to
    /// `overflow` instead (Go's runqputslow) and their count is returned;
    /// otherwise 0.
    std::uint32_t put(G* gp, bool next, Overflow& overflow) {
      (void)gp;
      (void)next;
      (void)overflow;
      fatal("not written yet: LocalRunQueue::Owner::put (labs/runq/runq.h)");
    }

    /// Go's runqget: {runnext, true} if set, else {the head, false}, else
    /// {nullptr, false}.
    std::pair<G*, bool> get() {
      fatal("not written yet: LocalRunQueue::Owner::get (labs/runq/runq.h)");
    }

    /// Go's runqsteal: half of `victim`'s queue (rounded up) moves to this
    /// one, which is empty; one of them is returned to run now, or null.
    /// With `steal_runnext`, an otherwise empty victim's runnext may be
    /// taken (Go waits 3 us first: the victim is probably about to run it).
    G* steal(Stealer victim, bool steal_runnext) {
      (void)victim;
      (void)steal_runnext;
      fatal("not written yet: LocalRunQueue::Owner::steal (labs/runq/runq.h)");
    }

   private:
    LocalRunQueue& q_;
  };

  /// A thief's handle on a victim's queue: any thread may use it.
  class Stealer {
   public:
    /// A thief's (or any reader's) view of `q`.
    explicit Stealer(LocalRunQueue& q) noexcept : q_(q) {}
    /// Goroutines in the ring (runnext not counted). A snapshot.
    std::uint32_t size() const { return q_.size(); }
    /// Go's runqempty; see LocalRunQueue::empty().
    bool empty() const { return q_.empty(); }

   private:
    friend class Owner;
    LocalRunQueue& q_;
  };

  /// Goroutines in the ring (runnext not counted). Any thread; a snapshot.
  std::uint32_t size() const {
    fatal("not written yet: LocalRunQueue::size (labs/runq/runq.h)");
  }

  /// Go's runqempty: neither the ring nor runnext holds a goroutine. Any
  /// thread; must not miss a goroutine moving from runnext to the ring.
  bool empty() const {
    fatal("not written yet: LocalRunQueue::empty (labs/runq/runq.h)");
  }

  /// The owner's handle.
  Owner owner() noexcept { return Owner(*this); }
  /// A thief's handle (any thread).
  Stealer stealer() noexcept { return Stealer(*this); }

 private:
  // Yours: the ring, its head and tail, runnext, each an Atomic<T> (see
  // above). Every shared field names what protects it, every memory order
  // its reason, as in stage3_gmp/runq.h.
};

}  // namespace gmp::stage3
