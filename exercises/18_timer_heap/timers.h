// Exercise 18: a P's timers (Go 1.14's per-P timer heap, runtime/time.go,
// Go 1.19): a 4-ary min-heap ordered by `when`, deletion marked and left
// for later, due timers run by the P's own M. See README.md.
//
// Given here: the Timer and the P (its heap as a vector, its counts) and
// `less`, the one comparison of two timers' deadlines, which counts its
// calls. Write the six functions of timers.cc. One thread: the P's lock
// (pp.timersLock in Go) is held by the caller throughout.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace gmp::exercises::timers {

/// A timer's state, as far as this exercise goes (Go's timerWaiting,
/// timerDeleted, timerRemoved; Go has more for timers moving between Ps).
enum class Status : std::uint8_t {
  kWaiting,  ///< in the heap, will fire at `when`
  kDeleted,  ///< stopped, still in the heap until cleaned out
  kRemoved,  ///< not in any heap: never added, fired (one-shot), or cleaned
};

/// A timer (Go's runtime timer).
struct Timer {
  int id = 0;               ///< a test's label
  std::int64_t when = 0;    ///< deadline, nanoseconds; > 0 while in a heap
  std::int64_t period = 0;  ///< > 0: fires again every period
  std::function<void(Timer&)> f;  ///< run when it fires (may be empty)
  Status status = Status::kRemoved;
};

/// A processor's timers. Protected by the P's timers lock (held by every
/// caller here).
struct P {
  /// The heap: a 4-ary min-heap by `when`: the parent of index i is
  /// (i - 1) / 4, its children 4i + 1 .. 4i + 4.
  std::vector<Timer*> timers;
  int deleted = 0;  ///< kDeleted timers still in `timers` (Go's deletedTimers)
  /// timers[0]->when, or 0 if empty (Go's timer0When).
  std::int64_t timer0_when = 0;
  std::uint64_t comparisons = 0;  ///< calls of less() on this P (for the tests)
};

/// The one comparison of deadlines: whether a fires before b. Counts.
inline bool less(P& pp, const Timer* a, const Timer* b) {
  ++pp.comparisons;
  return a->when < b->when;
}

// ---- Yours: timers.cc
// ----------------------------------------------------------

/// Go's siftupTimer: the timer at index i moves up while it fires before
/// its parent.
void siftup(P& pp, std::size_t i);
/// Go's siftdownTimer: the timer at index i moves down while one of its (up
/// to four) children fires before it, swapping with the earliest.
void siftdown(P& pp, std::size_t i);

/// Go's addtimer (doaddtimer): t (kRemoved, when > 0) joins pp's heap,
/// kWaiting; timer0_when follows the earliest. Throws std::logic_error
/// ("addtimer called with initialized timer") if t is not kRemoved,
/// ("timer when must be positive") if when <= 0, or ("timer period must be
/// non-negative") if period < 0.
void addtimer(P& pp, Timer& t);

/// Go's deltimer: stops t. A kWaiting timer becomes kDeleted and stays in
/// the heap where it is (no heap operation: O(1)); pp.deleted counts it.
/// Returns whether t was waiting (it will not fire now); false for a timer
/// that already fired, was deleted or was never added.
bool deltimer(P& pp, Timer& t);

/// Go's checkTimers and runtimer, for one P at time `now`: runs every
/// kWaiting timer with when <= now, earliest first. A one-shot timer leaves
/// the heap (kRemoved) before its f runs; a periodic one gets its next
/// deadline, the first `when + k * period` after now, and moves down. A
/// kDeleted timer met at the top is taken out (kRemoved) without running.
/// Afterwards, if more than a quarter of the heap is deleted timers, all of
/// them are cleared at once (clearDeletedTimers). timer0_when follows.
/// Returns how many timers ran.
int check_timers(P& pp, std::int64_t now);

/// Go's clearDeletedTimers: removes every kDeleted timer (kRemoved) and
/// rebuilds the heap from the rest in O(n) (timerHeapify: siftdown from
/// the last parent up to the root).
void clear_deleted_timers(P& pp);

}  // namespace gmp::exercises::timers
