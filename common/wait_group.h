/// \file
/// A goroutine wait group (Go's sync.WaitGroup), written once for every stage.
#pragma once

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
  }

  /// Adds `delta` (may be negative) to the counter; when it reaches zero,
  /// every goroutine in wait() is readied. Throws gmp::Panic("sync: negative
  /// WaitGroup counter") if it would go below zero, leaving it unchanged.
  void add(std::int64_t delta) {
    G g = S::current_g("WaitGroup::add");
    std::unique_lock lk(lock_);
    if (count_ + delta < 0) {
      lk.unlock();
      throw Panic("sync: negative WaitGroup counter");
    }
    if (count_ + delta == 0) {
      check_same_runtime<S>(waiters_, g, "WaitGroup::add", /*all=*/true);
    }
    count_ += delta;
    if (count_ != 0) return;
    Sudog<G>* waiters = waiters_.dequeue_all();
    lk.unlock();
    ready_all<S>(waiters);
  }

  /// add(-1): one goroutine finished.
  void done() { add(-1); }

  /// Parks the calling goroutine until the counter is zero; returns at once
  /// if it already is.
  void wait() {
    G g = S::current_g("WaitGroup::wait");
    std::unique_lock lk(lock_);
    if (count_ == 0) return;
    Sudog<G> me(g, S::goid(g));
    park_on<S>(waiters_, me, lk, WaitReason::kSyncWaitGroupWait);
  }

 private:
  using G = typename S::G;

  RuntimeLock lock_;          // guards the fields below
  std::int64_t count_ = 0;   // goroutines still to call done()
  WaitQ<G> waiters_;         // goroutines parked in wait()
};

}  // namespace gmp
