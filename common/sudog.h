/// \file
/// Sudog: one goroutine waiting on one object (Go's sudog, runtime2.go).
///
/// ```unparsed
/// A goroutine that blocks on a channel, mutex or wait group puts a sudog on
/// that object's wait queue and parks. The sudog lives in the waiting
/// goroutine's G for as long as it waits (scheduler.h's OwnSudog; a
/// sleep's too, as the arg of the G's timer): nothing is allocated, and
/// whoever wakes it touches the G only, not the goroutine's stack. A
/// select's cases, one sudog each, live on the selecting goroutine's stack.
///
/// Claiming (the "Delicate dance" of this file)
/// ---------------------------------------------
/// Exactly one party may wake a parked goroutine, and it must be decided who:
///   1. a waker (a send matching a receive, an unlock, the last done()),
///      which found the sudog on the object's wait queue, under its lock;
///   2. the runtime, cancelling every parked goroutine when main returns;
///   3. a timer, for a timed wait (sleep_for).
/// Each party first tries to move `state` from kWaiting to its own value with
/// one compare-and-swap. Only the winner wakes the goroutine, so a goroutine
/// is never woken twice, and its sudog is never touched after it has been
/// woken (that would corrupt the goroutine's next wait, whose sudog is made
/// anew in the same G, or, a select's, read a stack frame that is gone).
/// Go uses the same idea for select (g.selectDone) and timers.
///
/// A select (select.h) waits on several queues at once, with one sudog per
/// case, chained by `waitlink` (Go's). The cases share one claim: every
/// sudog's `claim` points at the first case's `state`, so the first party
/// to claim any case wins them all, and the sudog it claimed is the case
/// that fired (`fired`). The losing cases stay in their queues, skipped by
/// every later claim, until the select's goroutine takes them out.
///
/// The winner also unlinks the sudog from its queue before the wakeup: a
/// waker does it under the object's lock as it claims (WaitQ::dequeue); the
/// runtime, which claims under its own lock, unlinks every sudog it cancelled
/// (unlink_cancelled) before it wakes any of them. So a woken goroutine never
/// touches the object again, and may not: another cancelled goroutine, as it
/// unwinds, may destroy it.
/// ```
#pragma once

#include <atomic>
#include <cstdint>

#include "common/runtime_lock.h"

namespace gmp {

template <class G>
class WaitQ;

/// One goroutine waiting on one object. `G` is the stage's goroutine handle.
template <class G>
struct Sudog {
  /// Who may wake the goroutine; changed once, from kWaiting, by try_claim()
  /// or try_cancel().
  enum State : std::uint8_t {
    kWaiting,    ///< parked (or about to park); nobody has claimed it yet
    kClaimed,    ///< a waker (or the timer) will wake it: the wait succeeded
    kCancelled,  ///< the runtime will wake it to end it (Goexit)
  };

  /// A sudog for goroutine g_ (id goid_), not yet in any queue.
  Sudog(G g_, std::uint64_t goid_) noexcept : g(g_), goid(goid_) {}
  Sudog(const Sudog&) = delete;
  Sudog& operator=(const Sudog&) = delete;

  const G g;                ///< the waiting goroutine; immutable
  const std::uint64_t goid;  ///< its id, for reports; immutable

  /// Channel operations: the sender's value, or where the receiver wants
  /// its value. Protected by the object's lock until claimed, then owned by
  /// the claimer until it wakes the goroutine.
  void* elem = nullptr;
  /// Channel operations: true when woken by a matching send or receive,
  /// false when woken by close. Written by the claimer before the wakeup,
  /// read by the waiter after it (the wakeup orders the two).
  bool success = false;

  /// Intrusive links of the WaitQ that holds the sudog: under the lock of
  /// the object that owns that queue while queued; after dequeue_all,
  /// `next` chains the claimed sudogs and belongs to their claimer.
  Sudog* prev = nullptr;  ///< the one before it in its queue
  Sudog* next = nullptr;  ///< the one after it in its queue
  /// The queue the sudog waits in and the lock of its object (both null for
  /// a wait in no queue, like a sleep), so that the runtime can unlink a
  /// sudog it cancels. Set once, before the sudog is enqueued.
  WaitQ<G>* queue = nullptr;
  RuntimeLock* lock = nullptr;  ///< that object's lock (set with queue)

  /// select: the next case's sudog of the same select (Go's waitlink), or
  /// null. Set by the waiter before any case is enqueued; immutable while
  /// they wait.
  Sudog* waitlink = nullptr;
  /// Set to true by the party whose claim of this sudog won (try_claim or
  /// try_cancel): for a select, the case that fired. Written by the winner
  /// before the wakeup, read by the waiter after it.
  bool fired = false;

  /// kWaiting until one party claims the wakeup. Atomic: written by at most
  /// one winning CAS (relaxed) from any thread; read by the waiter after it
  /// is woken, and under the object's lock by scans of its queue. A
  /// select's cases use the first case's (see `claim`).
  std::atomic<State> state{kWaiting};
  /// The state that the claims race on: `state`, or for a select's later
  /// cases the first case's (set with share_claim before any is queued).
  std::atomic<State>* claim = &state;

  /// This sudog is a later case of the select whose first case is `first`:
  /// both are won by one claim. Before either is enqueued.
  void share_claim(Sudog& first) noexcept { claim = &first.state; }
  /// Claims the wakeup for a waker or a timer. True for exactly one caller.
  bool try_claim() noexcept { return try_move_to(kClaimed); }
  /// Claims the wakeup for the runtime's cancellation. True for one caller.
  bool try_cancel() noexcept { return try_move_to(kCancelled); }
  /// Whether nobody has claimed the wakeup yet (for scans of a queue, under
  /// the object's lock; any case of a select answers for all).
  bool waiting() const noexcept {
    // relaxed: a snapshot for a scan; only a CAS decides who wins.
    return claim->load(std::memory_order_relaxed) == kWaiting;
  }
  /// Whether the wait succeeded. Only the waiter, after it was woken.
  bool claimed() const noexcept {
    // relaxed: the wakeup that ended the wait happened after the winning
    // CAS and synchronizes with us (a Note's mutex, or a scheduler's
    // release of the goroutine's status and its run queue), so the final
    // value is visible.
    return claim->load(std::memory_order_relaxed) == kClaimed;
  }

 private:
  bool try_move_to(State to) noexcept {
    State expected = kWaiting;
    // relaxed: the CAS only decides who wins. The data the winner hands to
    // the waiter (elem, success, fired) is published by the wakeup that
    // follows.
    if (!claim->compare_exchange_strong(expected, to,
                                        std::memory_order_relaxed)) {
      return false;
    }
    fired = true;
    return true;
  }
};

}  // namespace gmp
