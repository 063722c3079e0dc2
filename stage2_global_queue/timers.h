/// \file
/// Timers: the goroutines asleep in sleep_for, earliest first.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

#include "common/sudog.h"

namespace gmp::stage2 {

struct G;

/// A min-heap of sleeping goroutines by wake time. Not thread-safe: the
/// runtime's sched lock protects it.
class Timers {
 public:
  using Clock = std::chrono::steady_clock;  ///< the timers' clock

  /// Whether no goroutine sleeps.
  bool empty() const noexcept { return heap_.empty(); }
  /// How many goroutines sleep.
  std::size_t size() const noexcept { return heap_.size(); }

  /// The earliest wake time; only when not empty.
  Clock::time_point earliest() const noexcept { return heap_.front().when; }

  /// Adds goroutine `s` to wake at `when`; returns whether it is now the
  /// earliest.
  bool push(Clock::time_point when, Sudog<G*>* s) {
    heap_.push_back(Entry{when, s});
    std::push_heap(heap_.begin(), heap_.end(), later);
    return heap_.front().s == s;
  }

  /// Removes and returns the earliest sudog; only when not empty.
  Sudog<G*>* pop() noexcept {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    Sudog<G*>* s = heap_.back().s;
    heap_.pop_back();
    return s;
  }

  /// Removes `s` wherever it is (a cancelled sleep). Linear: exit only.
  void remove(Sudog<G*>* s) {
    auto it = std::find_if(heap_.begin(), heap_.end(),
                           [s](const Entry& e) { return e.s == s; });
    if (it == heap_.end()) return;
    heap_.erase(it);
    std::make_heap(heap_.begin(), heap_.end(), later);
  }

 private:
  struct Entry {
    Clock::time_point when;
    Sudog<G*>* s;
  };
  static bool later(const Entry& a, const Entry& b) noexcept {
    return a.when > b.when;
  }
  std::vector<Entry> heap_;
};

}  // namespace gmp::stage2
