/// \file
/// WaitQ: the FIFO of sudogs waiting on one object (Go's waitq, chan.go).
#pragma once

#include <mutex>
#include <string>

#include "common/check.h"
#include "common/runtime_lock.h"
#include "common/sudog.h"
#include "common/wait_reason.h"

namespace gmp {

/// A first-in first-out list of waiting goroutines, linked through the
/// sudogs themselves. Not thread-safe: every call must hold the lock of the
/// object that owns the queue (a channel's, a mutex's, a wait group's).
template <class G>
class WaitQ {
 public:
  using Sudog = gmp::Sudog<G>;  ///< the entries: one per waiting goroutine

  WaitQ() = default;
  WaitQ(const WaitQ&) = delete;
  WaitQ& operator=(const WaitQ&) = delete;

  /// True when nobody waits (cancelled sudogs not yet unlinked count).
  bool empty() const noexcept { return first_ == nullptr; }

  /// The oldest sudog, or null; it may be cancelled (see dequeue).
  const Sudog* front() const noexcept { return first_; }

  /// Appends `s`, which must not be in any queue, for a goroutine of
  /// runtime `runtime` (null: not said).
  void enqueue(Sudog* s, const void* runtime = nullptr) noexcept {
    GMP_CHECK(s->prev == nullptr && s->next == nullptr,
              "sudog already in a wait queue");
    s->prev = last_;
    if (last_ != nullptr) {
      last_->next = s;
      if (runtime != runtime_) runtime_ = nullptr;  // mixed, or not said
    } else {
      first_ = s;
      runtime_ = runtime;
    }
    last_ = s;
  }

  /// The runtime that every goroutine queued since the queue was last
  /// empty belongs to, if enqueue was told and it is one; else null. Lets
  /// a waker check "all mine" without walking the queue (close of a
  /// channel that 100,000 goroutines wait on).
  const void* sole_runtime() const noexcept { return runtime_; }

  /// Removes and returns the oldest sudog that this call could claim
  /// (Sudog::try_claim), or nullptr. Cancelled sudogs are skipped and left
  /// in place: the runtime that cancelled them unlinks them.
  Sudog* dequeue() noexcept {
    for (Sudog* s = first_; s != nullptr; s = s->next) {
      if (s->try_claim()) {
        remove(s);
        return s;
      }
    }
    return nullptr;
  }

  /// Claims and removes every claimable sudog; returns them oldest first as
  /// a chain linked through `next` (the queue no longer uses the links), for
  /// waking all waiters at once after unlocking (close, WaitGroup at zero).
  Sudog* dequeue_all() noexcept {
    Sudog* head = nullptr;
    Sudog** tail = &head;
    while (Sudog* s = dequeue()) {
      *tail = s;
      tail = &s->next;
    }
    return head;
  }

  /// Calls f(s) for each sudog still waiting (neither claimed nor
  /// cancelled), oldest first, until f returns false.
  template <class F>
  void for_each_waiting(F&& f) const {
    for (const Sudog* s = first_; s != nullptr; s = s->next) {
      if (s->waiting() && !f(*s)) {
        return;
      }
    }
  }

  /// Unlinks `s`, which must be in this queue.
  void remove(Sudog* s) noexcept {
    (s->prev != nullptr ? s->prev->next : first_) = s->next;
    (s->next != nullptr ? s->next->prev : last_) = s->prev;
    s->prev = s->next = nullptr;
    if (first_ == nullptr) runtime_ = nullptr;
  }

  /// Appends "goroutine N [reason]" for the queued sudogs, oldest first,
  /// separated by ", " (for the fatal error of an object destroyed while
  /// goroutines wait on it); after `limit` of them, how many more there are.
  void describe(WaitReason why, std::string& out, int limit = 20) const {
    int n = 0;
    for (const Sudog* s = first_; s != nullptr; s = s->next, ++n) {
      if (n == limit) {
        int more = 0;
        for (; s != nullptr; s = s->next) ++more;
        out += " and " + std::to_string(more) + " more";
        return;
      }
      if (!out.empty()) out += ", ";
      out += "goroutine " + std::to_string(s->goid) + " [" +
             std::string(to_string(why)) + "]";
    }
  }


 private:
  Sudog* first_ = nullptr;  // oldest waiter
  Sudog* last_ = nullptr;   // newest waiter
  const void* runtime_ = nullptr;  // see sole_runtime()
};

/// For a runtime that cancelled `s` (Sudog::try_cancel): unlinks it, and
/// the other cases of its select (the waitlink chain), from the queues
/// they wait in, each under its object's lock. Call with no object lock
/// held (lock order: object lock, then runtime lock), and for every
/// cancelled sudog before waking any of their goroutines.
template <class G>
void unlink_cancelled(Sudog<G>& s) {
  for (Sudog<G>* c = &s; c != nullptr; c = c->waitlink) {
    if (c->queue == nullptr) continue;  // a wait in no queue (a sleep)
    std::lock_guard lk(*c->lock);
    c->queue->remove(c);
  }
}

/// For a runtime that cancelled `s` before it parked, while the objects'
/// locks are still held (the park's own check for an exit under way):
/// unlinks it and the other cases of its select from their queues.
template <class G>
void unlink_cancelled_locked(Sudog<G>& s) noexcept {
  for (Sudog<G>* c = &s; c != nullptr; c = c->waitlink) {
    if (c->queue != nullptr) c->queue->remove(c);
  }
}

}  // namespace gmp
