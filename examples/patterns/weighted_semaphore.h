/// \file
/// A weighted semaphore (Go's golang.org/x/sync/semaphore.Weighted, the
/// notes' "Semaphore" pattern, note 003 in docs/course/notes.md): goroutines
/// are created freely, but the operations they run are limited to a total
/// weight at once.
#pragma once

#include <cstdint>
#include <algorithm>
#include <deque>
#include <optional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/context.h"
#include "common/errors.h"
#include "common/select.h"
#include "common/stage_api.h"

namespace gmp::patterns {

/// Limits concurrent work to a total weight `size`: acquire(n) takes n
/// units, waiting (the goroutine parks) until they are free; release(n)
/// gives them back. Waiters are served first come, first served, as in
/// x/sync: a large request at the head is not starved by small ones behind
/// it. acquire(ctx, n) is x/sync's Acquire: it gives up when the context
/// is done; acquire(n) waits as long as it takes (Go's with Background).
///
/// Errors (nothing is taken or given back when one is thrown):
/// - the constructor: std::invalid_argument if size < 1;
/// - acquire, try_acquire: std::invalid_argument if n < 1 or n > size (it
///   could never be granted; Go's would wait for its context forever);
/// - release: std::invalid_argument if n < 1;
///   gmp::Panic("semaphore: released more than held") if n is more than is
///   held, Go's panic.
///
/// Every call must be made from a goroutine of a running runtime of stage
/// `A` (gmp::UsageError otherwise).
template <StageApi A>
class WeightedSemaphore {
 public:
  /// A semaphore of `size` units, all free.
  explicit WeightedSemaphore(std::int64_t size) : size_(size) {
    if (size < 1) {
      throw std::invalid_argument("WeightedSemaphore: size must be at least "
                                  "1, got " + std::to_string(size));
    }
  }
  WeightedSemaphore(const WeightedSemaphore&) = delete;
  WeightedSemaphore& operator=(const WeightedSemaphore&) = delete;

  // [weighted acquire]
  /// Takes `n` units, parking until they are free and every earlier
  /// waiter has been served.
  void acquire(std::int64_t n) {
    check_weight(n);
    std::unique_lock lk(mu_);
    if (size_ - cur_ >= n && waiters_.empty()) {  // free, nobody ahead
      cur_ += n;
      return;
    }
    Waiter me{n};  // lives on this goroutine's stack until it is granted
    waiters_.push_back(&me);
    lk.unlock();
    me.granted.recv();  // release() has added n to cur_ for us
  }
  // [weighted acquire]

  // [weighted acquire ctx]
  /// x/sync's Acquire(ctx, n): acquire(n), unless `ctx` is done first (or
  /// already): then nothing is taken, and ctx's error is returned
  /// (ContextErr::kNone: the units are held). A grant that races with the
  /// cancellation is given back, as in x/sync.
  ContextErr acquire(const typename A::Context::Ptr& ctx, std::int64_t n) {
    check_weight(n);
    std::unique_lock lk(mu_);
    if (ContextErr e = ctx->err(); e != ContextErr::kNone) return e;
    if (size_ - cur_ >= n && waiters_.empty()) {
      cur_ += n;
      return ContextErr::kNone;
    }
    Waiter me{n};
    waiters_.push_back(&me);
    lk.unlock();
    if (select(recv_case(me.granted), recv_case(ctx->done())) == 0) {
      return ContextErr::kNone;
    }
    lk.lock();
    std::optional<bool> granted;
    if (me.granted.try_recv(granted)) {  // granted after all: give it back
      cur_ -= n;
    } else {
      std::erase(waiters_, &me);
    }
    grant_waiters();  // what we leave may fit the next ones
    return ctx->err();
  }
  // [weighted acquire ctx]

  /// Takes `n` units if they are free and nobody waits; never parks.
  bool try_acquire(std::int64_t n) {
    check_weight(n);
    std::lock_guard lk(mu_);
    if (size_ - cur_ < n || !waiters_.empty()) return false;
    cur_ += n;
    return true;
  }

  // [weighted release]
  /// Gives back `n` units and grants waiters, in order, while they fit.
  void release(std::int64_t n) {
    if (n < 1) {
      throw std::invalid_argument("WeightedSemaphore: cannot release " +
                                  std::to_string(n));
    }
    std::lock_guard lk(mu_);
    if (n > cur_) throw Panic("semaphore: released more than held");
    cur_ -= n;
    grant_waiters();
  }
  // [weighted release]

  /// Units currently held (a snapshot, for tests and monitoring).
  std::int64_t held() {
    std::lock_guard lk(mu_);
    return cur_;
  }

 private:
  struct Waiter {
    std::int64_t n;
    typename A::template Chan<bool> granted{1};  // one value: the grant
  };

  // Grants waiters, in order, while they fit. mu_ held.
  void grant_waiters() {
    while (!waiters_.empty() && size_ - cur_ >= waiters_.front()->n) {
      Waiter* w = waiters_.front();
      waiters_.pop_front();
      cur_ += w->n;
      w->granted.send(true);  // buffered: never parks under mu_
    }
  }

  void check_weight(std::int64_t n) const {
    if (n < 1 || n > size_) {
      throw std::invalid_argument(
          "WeightedSemaphore: cannot acquire " + std::to_string(n) +
          " of a semaphore of size " + std::to_string(size_));
    }
  }

  const std::int64_t size_;       // immutable
  typename A::Mutex mu_;          // a goroutine mutex: waiting for it parks
  std::int64_t cur_ = 0;          // units held; under mu_
  std::deque<Waiter*> waiters_;   // FIFO; under mu_
};

/// The notes' processWithLimit: `process(item)` for every item, each in
/// its own goroutine, at most `limit` at once; an item whose acquire fails
/// because `ctx` is done is skipped (the note's `continue`). Waits for the
/// goroutines it started; returns how many items were processed. Must be
/// called from a goroutine; `process` must not throw.
template <StageApi A, class Item, class F>
std::size_t process_with_limit(const typename A::Context::Ptr& ctx,
                               const std::vector<Item>& items,
                               std::int64_t limit, F process) {
  WeightedSemaphore<A> sem(limit);
  typename A::WaitGroup wg;
  std::size_t started = 0;
  // [process with limit]
  for (const Item& item : items) {
    if (sem.acquire(ctx, 1) != ContextErr::kNone) continue;  // ctx is done
    wg.add(1);
    ++started;
    A::go([&sem, &wg, &process, &item] {
      process(item);
      sem.release(1);
      wg.done();
    });
  }
  wg.wait();
  // [process with limit]
  return started;
}

}  // namespace gmp::patterns
