/// \file
/// A buffered channel as a semaphore (the notes' simplest pattern, no
/// library needed; note 003 in docs/course/notes.md): the buffer's capacity is
/// the limit; a send takes a slot, a receive gives it back.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/context.h"
#include "common/errors.h"
#include "common/select.h"
#include "common/stage_api.h"

namespace gmp::patterns {

/// At most `limit` holders at once (Go's `type Semaphore chan struct{}`).
/// acquire() parks while `limit` goroutines hold it. No weights: for those,
/// see WeightedSemaphore. The notes' "no context out of the box (add it
/// with select)" is acquire_for and acquire(ctx): a select of the send
/// against a timer's channel or the context's done channel.
///
/// Errors: the constructor throws std::invalid_argument if limit is 0 (a
/// semaphore nobody can take); release() without a matching acquire()
/// throws gmp::Panic("ChanSemaphore: release without acquire") where Go's
/// `<-s` would block forever. Every call must be made from a goroutine of a
/// running runtime of stage `A`.
template <StageApi A>
class ChanSemaphore {
 public:
  /// A semaphore that `limit` goroutines may hold at once.
  explicit ChanSemaphore(std::size_t limit) : slots_(checked(limit)) {}

  // [chan semaphore]
  /// Takes a slot: `s <- struct{}{}`, which parks while the buffer is full.
  void acquire() { slots_.send(Token{}); }
  /// Takes a slot unless `timeout` passes first: `select { case s <-
  /// struct{}{}: case <-time.After(timeout): }`. Whether it took one.
  bool acquire_for(std::chrono::nanoseconds timeout) {
    auto timer = A::Timer::after(timeout);
    bool took = select(send_case(slots_, Token{}), recv_case(timer.c())) == 0;
    timer.stop();  // what Go 1.23's GC does for an After nobody reads
    return took;
  }
  /// Takes a slot unless `ctx` is done first (or already: a select picks
  /// among the ready cases at random, so a done context is checked first).
  /// ContextErr::kNone if it took one, else the context's error.
  ContextErr acquire(const typename A::Context::Ptr& ctx) {
    if (ContextErr e = ctx->err(); e != ContextErr::kNone) return e;
    if (select(send_case(slots_, Token{}), recv_case(ctx->done())) == 0) {
      return ContextErr::kNone;
    }
    return ctx->err();
  }
  /// Gives the slot back: `<-s`.
  void release() {
    if (slots_.len() == 0) throw Panic("ChanSemaphore: release without acquire");
    slots_.recv();
  }
  // [chan semaphore]

 private:
  struct Token {};  // Go's struct{}: carries nothing

  static std::size_t checked(std::size_t limit) {
    if (limit == 0) {
      throw std::invalid_argument("ChanSemaphore: limit must be at least 1");
    }
    return limit;
  }

  typename A::template Chan<Token> slots_;  // thread-safe: a channel
};

/// Runs `process(item)` for every item, each in its own goroutine, with at
/// most `limit` running at once (the notes' processWithChannelSem). The
/// caller waits for all of them. Must be called from a goroutine; `process`
/// must not throw.
template <StageApi A, class Item, class F>
void for_each_limited(const std::vector<Item>& items, std::size_t limit,
                      F process) {
  ChanSemaphore<A> sem(limit);
  typename A::WaitGroup wg;
  // [for each limited]
  for (const Item& item : items) {
    wg.add(1);
    sem.acquire();  // parks here while `limit` goroutines run
    A::go([&sem, &wg, &process, &item] {
      process(item);
      sem.release();
      wg.done();
    });
  }
  wg.wait();
  // [for each limited]
}

}  // namespace gmp::patterns
