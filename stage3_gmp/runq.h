/// \file
/// The local run queue of a P: Go's p.runq, runqhead, runqtail and runnext,
/// with runqput, runqputslow, runqget, runqgrab and runqsteal (proc.go).
///
/// ```unparsed
/// A ring of Cap slots (256 in Go) that one thread fills and many empty:
///
///   - the owner (the M holding the P) puts at the tail and takes from the
///     head, without a lock;
///   - thieves (other Ms out of work) take half of it from the head, also
///     without a lock;
///   - head and tail only grow (uint32, wrapping), the slot of a position is
///     position % Cap, so tail - head is the length even after wrap-around;
///   - a consumer (owner or thief) reads the slots it wants, then claims
///     them by moving head forward with a compare-and-swap; a consumer that
///     loses the CAS read slots that were not its to take and just retries;
///   - runnext holds the goroutine the owner readied last: it runs next and
///     inherits the current time slice (a goroutine that readies another and
///     blocks, as in a channel hand-off, gives it its turn at once).
///
/// The roles are types, so the compiler checks who may call what:
/// LocalRunQueue::Owner for the owner's M only, LocalRunQueue::Stealer for
/// anyone. Cap is a template parameter so that tests can use a tiny queue
/// and reach the full and wrap-around cases quickly; so is Atomic, the
/// atomic type of every shared field (std::atomic in the runtime), so that
/// a test can run a thief between two of the owner's operations on
/// runnext or a slot, on one thread, and check each interleaving
/// deterministically (labs/runq_lab_test.cc).
/// ```
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <utility>

#include "common/check.h"
#include "stage2_global_queue/g.h"

namespace gmp::stage3 {

using stage2::G;

/// A P's local run queue of Cap slots (a power of two) plus runnext. Every
/// shared field is an Atomic<T> (std::atomic, or a test's wrapper with
/// the same operations).
template <std::uint32_t Cap = 256, template <class> class Atomic = std::atomic>
class LocalRunQueue {
  static_assert(Cap >= 4 && (Cap & (Cap - 1)) == 0, "Cap: a power of two");

 public:
  /// Slots in the ring (Go: len(p.runq) = 256).
  static constexpr std::uint32_t kCapacity = Cap;
  /// What a put into a full queue hands to the global run queue: the
  /// oldest half of the ring plus the goroutine being put (Go's
  /// runqputslow: 128 + 1).
  static constexpr std::uint32_t kOverflowBatch = Cap / 2 + 1;
  /// Where put() leaves the batch for the GRQ when the queue is full.
  using Overflow = std::array<G*, kOverflowBatch>;

  class Stealer;

  /// The owner's handle: may only be used by the M that holds the P (Go:
  /// "Executed only by the owner P").
  class Owner {
   public:
    /// The owner's view of `q`.
    explicit Owner(LocalRunQueue& q) noexcept : q_(q) {}

    /// Go's runqput. With `next`, gp goes to runnext and the goroutine it
    /// displaces (if any) to the tail; otherwise gp goes to the tail. If
    /// the ring is full, the oldest half of it and that goroutine move to
    /// `overflow` instead (Go's runqputslow), and the count is returned:
    /// the caller puts them on the global run queue. Returns 0 otherwise.
    std::uint32_t put(G* gp, bool next, Overflow& overflow) noexcept {
      if (next) {
        G* old = q_.runnext_.load(std::memory_order_relaxed);
        // release: publishes gp (its context, its function) to a thief
        // that takes it from runnext with an acquire CAS.
        while (!q_.runnext_.compare_exchange_weak(
            old, gp, std::memory_order_release, std::memory_order_relaxed)) {
        }
        if (old == nullptr) return 0;
        gp = old;  // kick the old runnext out to the ring
      }
      for (;;) {
        // acquire: synchronizes with consumers, so their reads of the
        // slots they took happened before we overwrite those slots.
        std::uint32_t h = q_.head_.load(std::memory_order_acquire);
        std::uint32_t t = q_.tail_.load(std::memory_order_relaxed);  // ours
        if (t - h < Cap) {
          q_.slots_[t % Cap].store(gp, std::memory_order_relaxed);
          // release: makes the slot (and gp's contents) visible to a
          // consumer that loads the tail with acquire.
          q_.tail_.store(t + 1, std::memory_order_release);
          return 0;
        }
        if (std::uint32_t n = put_slow(gp, h, t, overflow)) return n;
        // A thief emptied some slots meanwhile: the ring has room again.
      }
    }

    /// Go's runqget: runnext first (then inherit_time is true: the
    /// goroutine runs in the current time slice), else the head. Returns
    /// {nullptr, false} when the queue is empty.
    std::pair<G*, bool> get() noexcept {
      G* next = q_.runnext_.load(std::memory_order_relaxed);
      // acquire: pairs with the release that put it there. If the CAS
      // fails, a thief took it (only the owner sets runnext, others only
      // clear it): no retry needed.
      if (next != nullptr &&
          q_.runnext_.compare_exchange_strong(next, nullptr,
                                              std::memory_order_acquire,
                                              std::memory_order_relaxed)) {
        return {next, true};
      }
      for (;;) {
        // acquire: synchronizes with other consumers' head updates.
        std::uint32_t h = q_.head_.load(std::memory_order_acquire);
        std::uint32_t t = q_.tail_.load(std::memory_order_relaxed);  // ours
        if (t == h) return {nullptr, false};
        G* gp = q_.slots_[h % Cap].load(std::memory_order_relaxed);
        // release: commits the consume (our read of the slot happened
        // before anyone who sees the new head reuses it).
        if (q_.head_.compare_exchange_weak(h, h + 1,
                                           std::memory_order_release,
                                           std::memory_order_relaxed)) {
          return {gp, false};
        }
      }
    }

    /// Go's runqsteal: takes half of `victim`'s queue into this one and
    /// returns one of the stolen goroutines to run now (the rest are at our
    /// tail), or null. With `steal_runnext`, an otherwise empty victim's
    /// runnext may be taken, after a wait of a few microseconds: the
    /// victim (thieves only rob running Ps) most likely just readied that
    /// goroutine and is about to run it itself (Go's usleep(3)).
    G* steal(Stealer victim, bool steal_runnext) {
      std::uint32_t t = q_.tail_.load(std::memory_order_relaxed);  // ours
      std::uint32_t n = victim.grab(q_, t, steal_runnext);
      if (n == 0) return nullptr;
      --n;
      G* gp = q_.slots_[(t + n) % Cap].load(std::memory_order_relaxed);
      if (n == 0) return gp;
      // acquire: as in put().
      std::uint32_t h = q_.head_.load(std::memory_order_acquire);
      GMP_CHECK(t - h + n < Cap, "runqsteal: runq overflow");
      // release: makes the stolen slots available to our consumers.
      q_.tail_.store(t + n, std::memory_order_release);
      return gp;
    }

   private:
    // Go's runqputslow: the ring [h, t) is full. Moves its oldest half to
    // `overflow`, and gp after them, unless a consumer moved head first.
    std::uint32_t put_slow(G* gp, std::uint32_t h, std::uint32_t t,
                           Overflow& overflow) noexcept {
      std::uint32_t n = (t - h) / 2;
      GMP_CHECK(n == Cap / 2, "runqputslow: queue is not full");
      for (std::uint32_t i = 0; i < n; ++i) {
        overflow[i] = q_.slots_[(h + i) % Cap].load(std::memory_order_relaxed);
      }
      // release: commits the consume, as in get().
      if (!q_.head_.compare_exchange_strong(h, h + n,
                                            std::memory_order_release,
                                            std::memory_order_relaxed)) {
        return 0;
      }
      overflow[n] = gp;
      return n + 1;
    }

    LocalRunQueue& q_;
  };

  /// A thief's handle on a victim's queue: any thread may use it.
  class Stealer {
   public:
    /// A thief's (or any reader's) view of `q`.
    explicit Stealer(LocalRunQueue& q) noexcept : q_(q) {}

    /// Goroutines in the ring (runnext not counted). A snapshot.
    std::uint32_t size() const noexcept { return q_.size(); }

    /// Go's runqempty; see LocalRunQueue::empty().
    bool empty() const noexcept { return q_.empty(); }

   private:
    friend class Owner;

    // Go's runqgrab: copies half of this queue (rounded up) into `into`'s
    // ring from position `into_tail`, and claims it; returns how many.
    std::uint32_t grab(LocalRunQueue& into, std::uint32_t into_tail,
                       bool steal_runnext) {
      for (;;) {
        // acquire: synchronizes with other consumers.
        std::uint32_t h = q_.head_.load(std::memory_order_acquire);
        // acquire: synchronizes with the producer (the slots up to t).
        std::uint32_t t = q_.tail_.load(std::memory_order_acquire);
        std::uint32_t n = t - h;
        n = n - n / 2;
        if (n == 0) {
          if (!steal_runnext) return 0;
          G* next = q_.runnext_.load(std::memory_order_relaxed);
          if (next == nullptr) return 0;
          std::this_thread::sleep_for(std::chrono::microseconds(3));
          // acquire: pairs with the owner's release that put it there.
          if (!q_.runnext_.compare_exchange_strong(
                  next, nullptr, std::memory_order_acquire,
                  std::memory_order_relaxed)) {
            continue;  // the owner took it, or put another: look again
          }
          into.slots_[into_tail % Cap].store(next, std::memory_order_relaxed);
          return 1;
        }
        if (n > Cap / 2) continue;  // h and t read inconsistently: retry
        for (std::uint32_t i = 0; i < n; ++i) {
          G* gp = q_.slots_[(h + i) % Cap].load(std::memory_order_relaxed);
          into.slots_[(into_tail + i) % Cap].store(gp,
                                                   std::memory_order_relaxed);
        }
        // release: commits the consume, as in Owner::get().
        if (q_.head_.compare_exchange_weak(h, h + n, std::memory_order_release,
                                           std::memory_order_relaxed)) {
          return n;
        }
      }
    }

    LocalRunQueue& q_;
  };

  /// Goroutines in the ring (runnext not counted). Any thread; a snapshot.
  std::uint32_t size() const noexcept {
    std::uint32_t h = head_.load(std::memory_order_acquire);
    std::uint32_t t = tail_.load(std::memory_order_acquire);
    return t - h <= Cap ? t - h : 0;  // torn read: h moved past our t
  }

  /// Go's runqempty: true if neither the ring nor runnext holds a
  /// goroutine. Any thread. Reads a consistent snapshot: a goroutine being
  /// moved from runnext to the ring is never missed.
  bool empty() const noexcept {
    for (;;) {
      std::uint32_t h = head_.load(std::memory_order_acquire);
      std::uint32_t t = tail_.load(std::memory_order_acquire);
      G* next = runnext_.load(std::memory_order_acquire);
      if (t == tail_.load(std::memory_order_acquire)) {
        return h == t && next == nullptr;
      }
    }
  }

  /// The owner's handle (see Owner for who may use it).
  Owner owner() noexcept { return Owner(*this); }
  /// A thief's handle (any thread).
  Stealer stealer() noexcept { return Stealer(*this); }

 private:
  /// Next position to take. Moved forward by CAS, by the owner (get,
  /// put_slow) and by thieves (grab); read by everyone.
  Atomic<std::uint32_t> head_{0};
  /// Next position to fill. Written only by the owner (store-release);
  /// read by thieves (load-acquire).
  Atomic<std::uint32_t> tail_{0};
  /// The goroutine to run next. Set only by the owner; cleared by the
  /// owner or by a thief, with a CAS.
  Atomic<G*> runnext_{nullptr};
  /// The ring. Written only by the owner, in [tail, head + Cap); read by
  /// consumers in [head, tail). Atomic (relaxed) because a consumer that
  /// then loses its head CAS may have read a slot being rewritten; the
  /// value is discarded, but in C++ the read must not be a data race.
  std::array<Atomic<G*>, Cap> slots_{};
};

}  // namespace gmp::stage3
