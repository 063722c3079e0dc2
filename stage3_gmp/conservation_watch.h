/// \file
/// A test-only watch over stage 3's promise of work conservation: while a
/// goroutine waits in a run queue, no P stays idle with no M looking for
/// work. For the tests of stages 3-5 (stage3_gmp/gmp_suite.h).
///
/// ```unparsed
/// A lost wake-up leaves the runtime in one recognisable state: a P idle,
/// no M spinning, no stop of the world under way, and yet a runnable
/// goroutine in the GRQ or in the queue of a running P. The scheduler
/// passes through that state for a moment every time it submits work (the
/// goroutine is queued a few instructions before wakep starts an M), so
/// one sighting proves nothing; a run that stays there is broken for good
/// (the goroutine waits until its P's busy goroutine schedules, forever if
/// that one spins on it). The watch samples the state every millisecond,
/// under the sched lock, and ends the program with the schedtrace when it
/// has seen it in every sample for longer than its bound.
/// ```
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>

#include "common/check.h"
#include "common/note.h"
#include "stage3_gmp/export_test.h"
#include "stage3_gmp/runtime.h"

namespace gmp::stage3 {

/// A runtime of stage 3 or of a later stage built on it (`Base`) whose
/// runs are watched for lost
/// wake-ups. Test code only: it samples Runtime::idle_p_with_queued_work
/// and holds the sched lock at random moments.
template <class Base>
class WatchedRuntime : public Base {
 public:
  using Base::Base;

  /// Base::run(main), with a watcher thread that ends the program (a fatal
  /// error with the schedtrace) if a P stays idle, with no M spinning,
  /// while goroutines wait in a run queue, for longer than `bound`. One
  /// plain thread at a time, as Base::run.
  ///
  /// With `jitter_seed` nonzero a second thread holds the sched lock for a
  /// few microseconds at random moments (seeded): an M that needs the lock
  /// while it holds its P (to give it up, to take from the GRQ) waits
  /// there, which widens the windows in which wake-ups can be lost.
  void run(std::function<void()> main,
           std::chrono::milliseconds bound = std::chrono::seconds(2),
           unsigned jitter_seed = 0) {
    Note stop;
    std::atomic<bool> stopping{false};
    std::thread watcher([this, &stop, bound] { watch(stop, bound); });
    std::thread jitter;
    if (jitter_seed != 0) {
      jitter = std::thread([this, &stopping, jitter_seed] {
        hold_lock_at_random(stopping, jitter_seed);
      });
    }
    auto end = [&] {
      stopping.store(true);
      if (jitter.joinable()) jitter.join();
      stop.wakeup();
      watcher.join();
    };
    try {
      Base::run(std::move(main));
    } catch (...) {
      end();
      throw;
    }
    end();
  }

  /// One sample (Runtime::idle_p_with_queued_work). Any thread.
  bool idle_p_with_queued_work() const {
    return ExportTest::idle_p_with_queued_work(*this);
  }

 private:
  // The jitter thread: the sched lock for 0-20 us, then 0-100 us off.
  void hold_lock_at_random(const std::atomic<bool>& stopping, unsigned seed) {
    std::mt19937 rng(seed);
    using Clock = std::chrono::steady_clock;
    while (!stopping.load()) {
      {
        std::lock_guard lk(this->sched_);
        auto until = Clock::now() + std::chrono::microseconds(rng() % 20);
        while (Clock::now() < until) {
        }
      }
      std::this_thread::sleep_for(std::chrono::microseconds(rng() % 100));
    }
  }

  void watch(Note& stop, std::chrono::milliseconds bound) {
    using Clock = std::chrono::steady_clock;
    Clock::time_point since{};  // first sample of the current streak
    while (!stop.tsleep(std::chrono::milliseconds(1))) {
      if (!idle_p_with_queued_work()) {
        since = Clock::time_point{};
        continue;
      }
      Clock::time_point now = Clock::now();
      if (since == Clock::time_point{}) since = now;
      if (now - since > bound) {
        fatal("work conservation broken for " +
              std::to_string(std::chrono::duration_cast<
                                 std::chrono::milliseconds>(now - since)
                                 .count()) +
              " ms: a P is idle and no M spins while goroutines wait in a "
              "run queue (a lost wake-up)\n" +
              this->schedtrace(/*detailed=*/true));
      }
    }
  }
};

}  // namespace gmp::stage3
