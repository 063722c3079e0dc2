/// \file
/// RuntimeTimer and TimerHeap: the runtime's timers (Go's runtime/time.go
/// timer), a sleeping goroutine's and a program's (time.h's Timer, Ticker,
/// after_func), earliest first.
///
/// ```unparsed
/// A timer is a time and what to do then. Go's runtime has one kind: a
/// function f(arg, seq, due) that the runtime calls at `when` (and every
/// `period` after, for a ticker). time.Sleep is a timer whose f readies the
/// sleeping goroutine; time.After's f sends on a channel; time.AfterFunc's
/// starts a goroutine. The course keeps the sleeper's case apart (f null,
/// arg its Sudog): the scheduler readies it under its own lock, as before
/// timers were values, and only the program's timers call a function.
///
/// f runs on the runtime's own thread of control (a timer thread, or an M
/// on its way to schedule), never on a goroutine and never under the
/// scheduler's lock: it must not block. It may do what a channel's
/// non-blocking send does, and ready goroutines (Scheduler::ready).
///
/// seq is how a stop or reset cancels a firing already under way: the
/// runtime reads seq when it takes the timer off the heap, under its lock,
/// and passes it to f (with the time it was due: a late firing still
/// reports its own time, as Go's sendTime does); a stop removes the timer
/// under that lock and then increments seq, so an f that was already
/// taken sees a seq that is no longer the timer's and does nothing
/// (time.h).
/// ```
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

namespace gmp {

/// `t + d`, saturated at the clock's ends instead of overflowing: a time
/// too far away to be represented becomes time_point::max(), which never
/// comes (Go's timers saturate at maxWhen, its Time.Add keeps the sign).
/// Every duration the API takes goes through here or timer_when.
constexpr std::chrono::steady_clock::time_point saturating_add(
    std::chrono::steady_clock::time_point t,
    std::chrono::nanoseconds d) noexcept {
  using Clock = std::chrono::steady_clock;
  static_assert(std::is_same_v<Clock::duration, std::chrono::nanoseconds>);
  Clock::rep sum = 0;
  if (__builtin_add_overflow(t.time_since_epoch().count(), d.count(), &sum)) {
    return d > std::chrono::nanoseconds::zero() ? Clock::time_point::max()
                                                : Clock::time_point::min();
  }
  return Clock::time_point(std::chrono::nanoseconds(sum));
}

/// When a timer of `d` made at `now` fires (Go's time.when): now if d <= 0,
/// else now + d, or time_point::max() (never) if that overflows.
constexpr std::chrono::steady_clock::time_point timer_when(
    std::chrono::steady_clock::time_point now,
    std::chrono::nanoseconds d) noexcept {
  return d > std::chrono::nanoseconds::zero() ? saturating_add(now, d) : now;
}

/// One timer. The fields marked "heap" are protected by the lock of the
/// heap that holds it (a scheduler's lock); the rest belong to its owner.
struct RuntimeTimer {
  using Clock = std::chrono::steady_clock;  ///< the timers' clock
  /// index's value while the timer is in no heap.
  static constexpr std::size_t kNotInHeap =
      std::numeric_limits<std::size_t>::max();

  /// `t` in nanoseconds of the clock, at least 1 (0 can then mean "no
  /// time" in an atomic); max() stays the largest value.
  static std::int64_t ns(Clock::time_point t) noexcept {
    auto n = std::chrono::duration_cast<std::chrono::nanoseconds>(
                 t.time_since_epoch())
                 .count();
    return n > 0 ? n : 1;
  }

  /// heap: when it fires next (copied into its heap slot by push: set it
  /// only while in no heap)
  Clock::time_point when{};
  Clock::duration period{};     ///< heap: 0, or the interval of a ticker
  /// What it does (null: a sleeping goroutine, whose Sudog is arg). Set by
  /// its owner before it enters a heap; immutable while in one.
  void (*f)(void* arg, std::uint64_t seq, Clock::time_point due) = nullptr;
  void* arg = nullptr;  ///< f's argument, or the sleeper's Sudog
  /// Incremented by its owner's stop and reset; read by the runtime as it
  /// takes the timer off the heap (relaxed: the heap's lock orders the
  /// read against a stop's removal, which comes before its increment).
  std::atomic<std::uint64_t> seq{0};
  /// Firings taken off the heap whose f has not returned: incremented by
  /// the runtime under its lock as it takes the timer, before the timer
  /// leaves the heap (take_due), and
  /// decremented by f as its very last step (release), so that an owner
  /// about to free the timer waits (acquire) until it is 0.
  std::atomic<int> firing{0};
  std::size_t index = kNotInHeap;  ///< heap: its position, or kNotInHeap
  /// The owner of the heap that holds it (a runtime, or a P where each P
  /// has a heap), or null: written by the heap under its lock (push,
  /// remove, drain_into); read without it by a stop, to find the lock
  /// (acquire, pairing with the push's release: a stop that sees the owner
  /// finds the timer's place written; it then checks under the lock).
  std::atomic<void*> owner{nullptr};
};

/// A function timer taken off a heap to fire: call it as f(arg, seq),
/// without the heap's lock.
struct TimerFiring {
  /// The timer's function.
  void (*f)(void* arg, std::uint64_t seq, RuntimeTimer::Clock::time_point due);
  void* arg;          ///< its argument
  std::uint64_t seq;  ///< its seq when taken
  RuntimeTimer::Clock::time_point due;  ///< when it was due (Go's delta)
  /// Fires it. The timer may be freed once f has returned.
  void operator()() const { f(arg, seq, due); }
};

/// A binary min-heap of timers by `when`, each knowing its position, so
/// that removal is O(log n) (Go's timers are a 4-ary heap; two children
/// keep the code short). Each slot holds the timer's `when` beside its
/// pointer (Go 1.23's timerWhen): a sift compares times read from the
/// array, not from timers scattered over memory (a sleeper's timer lies in
/// its G, a program's Timer often on its goroutine's stack, one page per
/// goroutine). Not thread-safe: the owner's lock protects it.
class TimerHeap {
 public:
  using Clock = RuntimeTimer::Clock;  ///< the timers' clock

  /// An empty heap whose timers record `owner` (RuntimeTimer::owner).
  explicit TimerHeap(void* owner) noexcept : owner_(owner) {}
  TimerHeap(const TimerHeap&) = delete;
  TimerHeap& operator=(const TimerHeap&) = delete;

  /// Whether no timer waits.
  bool empty() const noexcept { return heap_.empty(); }
  /// How many timers wait.
  std::size_t size() const noexcept { return heap_.size(); }
  /// The earliest timer's time; only when not empty.
  Clock::time_point earliest() const noexcept { return heap_[0].when; }

  /// Adds t, in no heap, at t->when; returns whether it is now the
  /// earliest (the one on timer duty must wake earlier).
  bool push(RuntimeTimer* t) {
    t->index = heap_.size();
    heap_.push_back(Slot{t->when, t});
    up(t->index);
    t->owner.store(owner_, std::memory_order_release);
    return heap_[0].t == t;
  }

  /// Removes t if it is in this heap; whether it was.
  bool remove(RuntimeTimer* t) noexcept {
    std::size_t i = t->index;
    if (i >= heap_.size() || heap_[i].t != t) return false;
    std::size_t last = heap_.size() - 1;
    if (i != last) {
      place(i, heap_[last]);
      heap_.pop_back();
      if (!up(i)) down(i);
    } else {
      heap_.pop_back();
    }
    t->index = RuntimeTimer::kNotInHeap;
    // release: a firing counted before (take_due) is seen by whoever sees
    // the timer in no heap (BasicTimer's destructor).
    t->owner.store(nullptr, std::memory_order_release);
    return true;
  }

  /// Removes and returns the earliest timer; only when not empty.
  RuntimeTimer* pop() noexcept {
    RuntimeTimer* t = heap_[0].t;
    remove(t);
    return t;
  }

  /// Takes the earliest timer, due at `now`, to fire it, the heap's lock
  /// held: a sleeper (f null) is returned for the caller to ready, and
  /// `*fire` is untouched; a function timer is recorded in `*fire` (its
  /// firing counted) and leaves the heap, or, a ticker, stays in it a
  /// period later; null is returned. Only when not empty and due.
  RuntimeTimer* take_due(Clock::time_point now, TimerFiring* fire) {
    RuntimeTimer* t = heap_[0].t;
    if (t->f == nullptr) return pop();
    // Counted before it leaves the heap: an owner that sees it in no heap
    // (remove's release of owner) sees the firing too. relaxed: ordered by
    // that release; the owner's wait for firing == 0 pairs with f's.
    t->firing.fetch_add(1, std::memory_order_relaxed);
    *fire = TimerFiring{t->f, t->arg, t->seq.load(std::memory_order_relaxed),
                        t->when};
    if (t->period > Clock::duration::zero()) {
      // A ticker moves to its next tick without leaving the heap (Go's
      // runOneTimer sifts it down in place): taken out and pushed back,
      // its owner would be null in between, and a destructor reading it
      // then would free it under the heap.
      t->when = next_tick(t->when, t->period, now);
      heap_[0].when = t->when;
      down(0);
    } else {
      remove(t);
    }
    return nullptr;
  }

  /// Takes every timer due at `now`, the heap's lock held: each sleeper
  /// (f null) is passed to `on_sleeper`, each function timer is appended
  /// to `fire`, for the caller to call once it has unlocked (take_due).
  template <class OnSleeper>
  void take_all_due(Clock::time_point now, std::vector<TimerFiring>& fire,
                    OnSleeper on_sleeper) {
    while (!empty() && earliest() <= now) {
      TimerFiring f;
      if (RuntimeTimer* t = take_due(now, &f)) {
        on_sleeper(t);
      } else {
        fire.push_back(f);
      }
    }
  }

  /// Moves every timer into `to` (Go's moveTimers: a P that goes away
  /// hands its timers on). Each timer's owner changes from this heap's to
  /// to's and is never null in between, so that a stop that read the old
  /// owner finds, under the old lock, that it must look again. Both heaps'
  /// locks held.
  void drain_into(TimerHeap& to) {
    for (const Slot& s : heap_) to.push(s.t);
    heap_.clear();
  }

  /// Empties the heap (a run's end): every timer is in no heap again.
  void clear() noexcept {
    for (const Slot& s : heap_) {
      s.t->index = RuntimeTimer::kNotInHeap;
      s.t->owner.store(nullptr, std::memory_order_relaxed);  // under the lock
    }
    heap_.clear();
  }

 private:
  // One place in the heap: a timer and its when (equal to t->when).
  struct Slot {
    Clock::time_point when;
    RuntimeTimer* t;
  };

  void place(std::size_t i, Slot s) noexcept {
    heap_[i] = s;
    s.t->index = i;
  }
  // Moves heap_[i] up to its place; whether it moved.
  bool up(std::size_t i) noexcept {
    Slot s = heap_[i];
    std::size_t start = i;
    while (i > 0) {
      std::size_t parent = (i - 1) / 2;
      if (heap_[parent].when <= s.when) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, s);
    return i != start;
  }
  // Moves heap_[i] down to its place.
  void down(std::size_t i) noexcept {
    Slot s = heap_[i];
    const std::size_t n = heap_.size();
    for (;;) {
      std::size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && heap_[c + 1].when < heap_[c].when) ++c;
      if (s.when <= heap_[c].when) break;
      place(i, heap_[c]);
      i = c;
    }
    place(i, s);
  }

  // A ticker's next tick after `when`, the first one later than `now`
  // (ticks nobody took are skipped, as Go's runOneTimer does), or max()
  // (never) if it lies beyond the clock: a ticker of the largest period
  // ticks once at most.
  static Clock::time_point next_tick(Clock::time_point when,
                                     Clock::duration period,
                                     Clock::time_point now) noexcept {
    auto missed = (now - when) / period;  // ticks nobody took; when <= now
    Clock::rep step = 0;
    if (__builtin_mul_overflow(period.count(), missed + 1, &step)) {
      return Clock::time_point::max();
    }
    return saturating_add(when, Clock::duration(step));
  }

  void* const owner_;       // what its timers record as owner
  std::vector<Slot> heap_;  // the heap; heap_[i].t->index == i
};

}  // namespace gmp
