/// \file
/// A goroutine wait group (Go's sync.WaitGroup), written once for every stage.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "common/errors.h"
#include "common/runtime_lock.h"
#include "common/scheduler.h"

namespace gmp {

/// Waits for a collection of goroutines to finish (Go's sync.WaitGroup).
/// Each stage exports it as `WaitGroup`. add(n) before starting n
/// goroutines, done() as each finishes, wait() parks until the counter is 0.
///
/// Every call must be made from a goroutine of a running runtime
/// (gmp::UsageError otherwise).
///
/// Reuse (Go's rule): once the counter reaches zero, the goroutines it
/// wakes must all have returned from wait() before add() raises it again.
/// A waiter that finds it raised on its way out of wait() panics "sync:
/// WaitGroup is reused before previous Wait has returned", as in Go. How
/// it finds out without touching the WaitGroup again (which its owner may
/// destroy as soon as it has returned from its own wait): each release
/// (zero reached with waiters) has a small record, shared by the waiters it
/// wakes (through their sudogs) and by the WaitGroup (add() marks it while
/// it is the latest), freed by the last of them to let go.
///
/// The counter is one atomic word, as Go's: add() changes it with a
/// compare-and-swap, without the lock, when the count stays above zero
/// before and after (every done() but the last); only a change that
/// touches zero takes the lock, under which wait() decides to park. So
/// 100,000 goroutines calling done() from two Ps wait for no lock.
template <Scheduler S>
class BasicWaitGroup {
 public:
  BasicWaitGroup() = default;
  BasicWaitGroup(const BasicWaitGroup&) = delete;
  BasicWaitGroup& operator=(const BasicWaitGroup&) = delete;

  /// Fatal error if goroutines are still in wait().
  ~BasicWaitGroup() {
    std::string waiters;
    std::lock_guard lk(lock_);
    waiters_.describe(WaitReason::kSyncWaitGroupWait, waiters);
    check_not_waited_on("WaitGroup", waiters);
    Release::drop(last_release_);
  }

  /// Adds `delta` (may be negative) to the counter; when it reaches zero,
  /// every goroutine in wait() is readied. Throws gmp::Panic("sync: negative
  /// WaitGroup counter"), leaving it unchanged, if it would go below zero,
  /// or past INT64_MAX (Go's 32-bit counter wraps to negative there).
  void add(std::int64_t delta) {
    G g = S::current_g("WaitGroup::add");
    // The fast path, like Go's one atomic add: a change between two positive
    // counts wakes nobody and needs no lock. Only the changes that touch
    // zero (and the invalid ones) take the lock, where wait() looks.
    std::int64_t count = count_.load(std::memory_order_relaxed);
    std::int64_t next = 0;
    while (count > 0 && !__builtin_add_overflow(count, delta, &next) &&
           next > 0) {
      // acq_rel: a done() happens before the wait() that returns at zero
      // (the change to zero, under the lock, reads this one's value).
      if (count_.compare_exchange_weak(count, next, std::memory_order_acq_rel,
                                       std::memory_order_relaxed)) {
        return;
      }
    }
    add_locked(g, delta);
  }

  /// add(-1): one goroutine finished.
  void done() { add(-1); }

  /// Parks the calling goroutine until the counter is zero; returns at once
  /// if it already is. Throws gmp::Panic("sync: WaitGroup is reused before
  /// previous Wait has returned") if add() raised the counter again before
  /// this wait returned (see the class comment).
  void wait() {
    G g = S::current_g("WaitGroup::wait");
    std::unique_lock lk(lock_);
    // acquire: pairs with the acq_rel changes, so the done()s that brought
    // the counter to zero happen before we return.
    if (count_.load(std::memory_order_acquire) == 0) return;
    OwnSudog<S> me(g);
    park_on<S>(waiters_, *me, lk, WaitReason::kSyncWaitGroupWait);
    // Woken by the release that brought the counter to zero; its record
    // came with the wakeup.
    auto* release = static_cast<Release*>(me->elem);
    bool reused = release->reused.load(std::memory_order_relaxed);
    Release::drop(release);
    if (reused) {
      throw Panic("sync: WaitGroup is reused before previous Wait has returned");
    }
  }

 private:
  using G = typename S::G;

  // add's slow path: a change from or to zero, or one that would take the
  // counter below zero or past INT64_MAX (a panic that changes nothing).
  void add_locked(G g, std::int64_t delta) {
    std::unique_lock lk(lock_);
    Release* release = nullptr;  // zero reached with waiters: a release
    std::int64_t count = count_.load(std::memory_order_relaxed);
    std::int64_t next = 0;
    for (;;) {
      if (__builtin_add_overflow(count, delta, &next) || next < 0) {
        lk.unlock();
        delete release;
        throw Panic("sync: negative WaitGroup counter");
      }
      if (next == 0 && !waiters_.empty() && release == nullptr) {
        check_same_runtime<S>(waiters_, g, "WaitGroup::add", /*all=*/true);
        release = new Release{};  // may throw: nothing has changed yet
      }
      // acq_rel: see add(). A failed exchange means a fast-path add
      // changed the counter (between two positive values): look again.
      if (count_.compare_exchange_weak(count, next, std::memory_order_acq_rel,
                                       std::memory_order_relaxed)) {
        break;
      }
    }
    // Raised from zero: waiters of the last release that have not yet
    // returned from wait() will see it (relaxed: a flag, no data; a waiter
    // returning while this add runs may miss it, as in Go).
    if (count == 0 && delta > 0 && last_release_ != nullptr) {
      last_release_->reused.store(true, std::memory_order_relaxed);
    }
    if (next != 0 || waiters_.empty()) {
      delete release;  // made for a zero that a retried exchange missed
      return;
    }
    Sudog<G>* waiters = waiters_.dequeue_all();
    release->attach(waiters);  // one reference per waiter, and ours
    Release::drop(last_release_);
    last_release_ = release;
    lk.unlock();
    ready_all<S>(waiters);
  }

  // One release: the waiters it woke, and whether add() raised the counter
  // before they all returned. Shared by those waiters and the WaitGroup.
  struct Release {
    std::atomic<int> refs{0};        // acq_rel: the last one frees it
    std::atomic<bool> reused{false};  // set under the WaitGroup's lock

    // The record of the chain of woken `waiters`: each sudog's elem points
    // to it (the claimer owns the sudog until it wakes the goroutine, whose
    // wakeup publishes elem). A reference for each, and the WaitGroup's.
    void attach(Sudog<G>* waiters) noexcept {
      int n = 1;
      for (Sudog<G>* s = waiters; s != nullptr; s = s->next, ++n) {
        s->elem = this;
      }
      refs.store(n, std::memory_order_relaxed);
    }
    static void drop(Release*& r) noexcept {
      // acq_rel: every holder's reads happen before the free.
      if (r != nullptr && r->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        delete r;
      }
      r = nullptr;
    }
  };

  /// Goroutines still to call done(). Changed by compare-and-swap: without
  /// lock_ between two positive values (add's fast path), under it when a
  /// change touches zero, so that wait(), under lock_, sees every zero.
  std::atomic<std::int64_t> count_{0};
  RuntimeLock lock_;          // guards the fields below
  WaitQ<G> waiters_;         // goroutines parked in wait()
  Release* last_release_ = nullptr;  // the latest release, or null
};

}  // namespace gmp
