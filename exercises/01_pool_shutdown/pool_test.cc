// Exercise 01's tests: the pool's life (workers, order, shutdown, failures)
// and its starvation count on a manual clock, then submit() racing
// shutdown() on seeded, randomized interleavings.
#include "exercises/01_pool_shutdown/pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "exercises/testing/harness.h"

namespace gmp::exercises::pool {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

// A clock that moves only when a test moves it: starvation counts then
// depend on the test's steps, never on the machine's speed.
class ManualClock final : public Clock {
 public:
  nanoseconds now() const override {
    // acquire: pairs with set()/advance() (release): a thread that reads a
    // time also sees what the test did before it set that time.
    return nanoseconds(ns_.load(std::memory_order_acquire));
  }
  void set(nanoseconds t) { ns_.store(t.count(), std::memory_order_release); }
  void advance(nanoseconds d) {
    ns_.fetch_add(d.count(), std::memory_order_acq_rel);
  }

 private:
  std::atomic<std::int64_t> ns_{0};
};

// Tasks that block on a gate hold their workers until the test opens it.
class Gate {
 public:
  void open() {
    {
      std::lock_guard lk(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [this] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Opens a gate when it goes out of scope. Declared after the pool, it opens
// the gate before the pool's destructor waits for the blocked tasks, also
// when a failed ASSERT leaves the test early.
struct OpenOnExit {
  Gate& gate;
  ~OpenOnExit() { gate.open(); }
};

// Gives a wrong implementation time to do what a correct one never does
// (return too early, start one task too many). Never fails by itself.
void let_a_wrong_pool_misbehave() {
  std::this_thread::sleep_for(milliseconds(50));
}

TEST(ThreadPool, RejectsFewerThanOneWorker) {
  Watchdog dog("RejectsFewerThanOneWorker", 30);
  ManualClock clock;
  for (int n : {0, -3}) {
    try {
      ThreadPool pool(n, clock);
      ADD_FAILURE() << "ThreadPool(" << n << ", clock) must throw "
                    << "std::invalid_argument";
    } catch (const std::invalid_argument& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("workers"), std::string::npos)
          << "the message should name the parameter: " << what;
      EXPECT_NE(what.find(std::to_string(n)), std::string::npos)
          << "the message should name the value " << n << ": " << what;
    }
  }
  ThreadPool smallest(1, clock);
  EXPECT_EQ(smallest.queued(), 0u);
}

TEST(ThreadPool, RunsTasksOldestFirst) {
  Watchdog dog("RunsTasksOldestFirst", 30);
  ManualClock clock;
  Gate gate;
  std::atomic<bool> started{false};
  std::vector<int> order;  // written by the one worker, read after the join
  {
    ThreadPool pool(1, clock);
    OpenOnExit opener{gate};
    ASSERT_TRUE(pool.submit([&] {
      started = true;
      gate.wait();
    }));
    ASSERT_TRUE(eventually([&] { return started.load(); }, 10))
        << "the worker never started the first task";
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(pool.submit([&order, i] { order.push_back(i); }));
    }
    EXPECT_EQ(pool.queued(), 20u) << "20 tasks wait behind the blocked one";
    gate.open();
    // The destructor shuts the pool down: the 20 queued tasks still run.
  }
  std::vector<int> want;
  for (int i = 0; i < 20; ++i) want.push_back(i);
  EXPECT_EQ(order, want) << "one worker must run its tasks in submit order, "
                            "all of them before the pool is gone";
}

TEST(ThreadPool, RunsAsManyTasksAtOnceAsItHasWorkers) {
  Watchdog dog("RunsAsManyTasksAtOnceAsItHasWorkers", 30);
  ManualClock clock;
  Gate gate;
  std::atomic<int> running{0};
  std::atomic<int> done{0};
  ThreadPool pool(3, clock);
  OpenOnExit opener{gate};
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(pool.submit([&] {
      running.fetch_add(1);
      gate.wait();
      done.fetch_add(1);
    }));
  }
  ASSERT_TRUE(eventually([&] { return running.load() >= 3; }, 10))
      << "3 workers must run 3 blocking tasks at once; only "
      << running.load() << " started";
  let_a_wrong_pool_misbehave();
  EXPECT_EQ(running.load(), 3) << "a pool of 3 workers started a 4th task "
                                  "while its 3 workers were all blocked";
  EXPECT_EQ(pool.queued(), 1u) << "the 4th task waits for a free worker";
  gate.open();
  pool.shutdown();
  EXPECT_EQ(done.load(), 4);
  EXPECT_EQ(pool.queued(), 0u);
}

TEST(ThreadPool, ShutdownRunsEveryQueuedTaskThenRefuses) {
  Watchdog dog("ShutdownRunsEveryQueuedTaskThenRefuses", 30);
  ManualClock clock;
  Gate gate;
  std::atomic<bool> started{false};
  std::atomic<int> ran{0};
  std::atomic<int> inside_submit{-1};  // what the blocked task's submit says
  ThreadPool pool(1, clock);
  OpenOnExit opener{gate};
  ASSERT_TRUE(pool.submit([&] {
    started = true;
    gate.wait();  // opened only after shutdown() has begun
    inside_submit = pool.submit([&] { ran.fetch_add(1000); }) ? 1 : 0;
    ran.fetch_add(1);
  }));
  ASSERT_TRUE(eventually([&] { return started.load(); }, 10));
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(pool.submit([&] { ran.fetch_add(1); }));
  }

  std::atomic<bool> returned{false};
  std::thread owner([&] {
    pool.shutdown();
    returned = true;
  });
  // Probe until shutdown() has begun; a probe accepted before must run.
  int accepted_probes = 0;
  bool refused = eventually([&] {
    if (!pool.submit([&] { ran.fetch_add(1); })) return true;
    ++accepted_probes;
    return false;
  }, 10);
  if (!refused) {
    gate.open();  // let the owner thread finish before failing
    owner.join();
    FAIL() << "submit() still accepts tasks after shutdown() began";
  }
  let_a_wrong_pool_misbehave();
  EXPECT_FALSE(returned.load())
      << "shutdown() returned while a task was still running and 50 were "
         "queued";
  EXPECT_EQ(ran.load(), 0) << "the only worker is blocked: nothing can run";

  gate.open();
  owner.join();
  EXPECT_EQ(ran.load(), 1 + 50 + accepted_probes)
      << "shutdown() must run every task accepted before it, then return";
  EXPECT_EQ(inside_submit.load(), 0)
      << "a task's submit() after shutdown() began must be refused";
  EXPECT_EQ(pool.queued(), 0u);
  EXPECT_FALSE(pool.submit([&] { ran.fetch_add(1000); }));
  pool.shutdown();  // a second call does nothing
  EXPECT_EQ(ran.load(), 1 + 50 + accepted_probes);
}

// Eight workers that never had a task all sleep on the pool's condition
// variable; shutdown() must wake every one of them, or the join waits for
// the sleepers for ever (the watchdog then ends the test).
TEST(ThreadPool, ShutdownWakesEveryIdleWorker) {
  Watchdog dog("ShutdownWakesEveryIdleWorker", 30);
  ManualClock clock;
  ThreadPool pool(8, clock);
  // Time for the eight threads to start and go to sleep: a worker that
  // starts after the flag is set never sleeps, so a pool that wakes only
  // one sleeper would pass if none had gone to sleep yet.
  std::this_thread::sleep_for(milliseconds(100));
  pool.shutdown();
  EXPECT_FALSE(pool.submit([] {})) << "a shut-down pool refuses tasks";
  EXPECT_EQ(pool.queued(), 0u);
}

// A task submitted while the only worker sleeps wakes it, 300 times in a
// row: the wake-up follows the task into the queue (notified after the
// unlock, or under the lock). A notify that comes before the task is queued
// can find the worker awake and the queue still empty: the worker sleeps
// again, and the task waits for the next submit (a lost wake-up).
TEST(ThreadPool, ATaskSubmittedWhileTheWorkerSleepsWakesIt) {
  Watchdog dog("ATaskSubmittedWhileTheWorkerSleepsWakesIt", 30);
  ManualClock clock;
  ThreadPool pool(1, clock);
  std::atomic<int> ran{0};
  for (int i = 1; i <= 300; ++i) {
    // Time for the worker to go back to sleep after the last task.
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    ASSERT_TRUE(pool.submit([&ran] { ran.fetch_add(1); }));
    ASSERT_TRUE(eventually([&] { return ran.load() == i; }, 10))
        << "task " << i << " was queued while the worker slept, and the "
        << "worker never woke for it (" << pool.queued() << " queued)";
  }
}

// An empty std::function is a task that throws (std::bad_function_call)
// when called: it counts as failed, as pool.h says, and the worker goes on.
TEST(ThreadPool, AnEmptyTaskCountsAsFailed) {
  Watchdog dog("AnEmptyTaskCountsAsFailed", 30);
  ManualClock clock;
  std::atomic<int> ran{0};
  ThreadPool pool(1, clock);
  ASSERT_TRUE(pool.submit(std::function<void()>{}));
  ASSERT_TRUE(pool.submit([&] { ran.fetch_add(1); }));
  pool.shutdown();
  EXPECT_EQ(pool.failed(), 1u) << "an empty task is a failed one";
  EXPECT_EQ(ran.load(), 1);
}

// A clock for two submitters: once armed, its first two reads are 1 ms
// and 2 ms, and the first reader is held until the second has submitted
// (200 ms at most: a pool that reads the clock under its lock keeps the
// second submitter out meanwhile, and the hold ends by itself). Other
// reads say the time set().
class TwoSubmittersClock final : public Clock {
 public:
  nanoseconds now() const override {
    if (!armed_.load()) return nanoseconds(now_.load());
    int n = reads_.fetch_add(1);
    if (n == 0) {
      first_waiting_.store(true);
      std::unique_lock lk(mu_);
      cv_.wait_for(lk, milliseconds(200), [this] { return released_; });
      return milliseconds(1);
    }
    if (n == 1) return milliseconds(2);
    return nanoseconds(now_.load());
  }
  void arm() { armed_.store(true); }
  void release() {
    {
      std::lock_guard lk(mu_);
      released_ = true;
    }
    cv_.notify_all();
  }
  bool first_waiting() const { return first_waiting_.load(); }
  void set(nanoseconds t) { now_.store(t.count()); }

 private:
  std::atomic<bool> armed_{false};
  mutable std::atomic<int> reads_{0};
  mutable std::atomic<bool> first_waiting_{false};
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool released_ = false;  // guarded by mu_
  std::atomic<std::int64_t> now_{0};
};

// The queue stays in the order of its stamps: submit() takes the time
// under the lock it queues under. Taken before it, a submitter held
// between the two (here by the clock) queues its earlier stamp behind a
// later one, and starving(), which stops at the first task that has not
// waited long enough, misses the task that has.
TEST(ThreadPool, StampsFollowTheQueueOrderSoStarvingCountsEachTask) {
  Watchdog dog("StampsFollowTheQueueOrderSoStarvingCountsEachTask", 30);
  TwoSubmittersClock clock;
  Gate gate;
  std::atomic<bool> started{false};
  ThreadPool pool(1, clock);
  OpenOnExit opener{gate};
  ASSERT_TRUE(pool.submit([&] {  // keeps the only worker: the rest queue
    started = true;
    gate.wait();
  }));
  ASSERT_TRUE(eventually([&] { return started.load(); }, 10));
  clock.arm();
  bool a_ok = false, b_ok = false;
  std::thread a([&] { a_ok = pool.submit([] {}); });  // reads first: 1 ms
  ASSERT_TRUE(eventually([&] { return clock.first_waiting(); }, 10));
  std::thread b([&] {
    b_ok = pool.submit([] {});  // reads second: 2 ms
    clock.release();
  });
  b.join();
  a.join();
  ASSERT_TRUE(a_ok && b_ok);
  clock.set(milliseconds(10));  // the first has waited 9 ms, the second 8
  EXPECT_EQ(pool.starving(nanoseconds(8'500'000)), 1u)
      << "the task stamped at 1 ms has waited longer than 8.5 ms";
  EXPECT_EQ(pool.starving(milliseconds(7)), 2u);
}

TEST(ThreadPool, ThrowingTaskDoesNotKillItsWorker) {
  Watchdog dog("ThrowingTaskDoesNotKillItsWorker", 30);
  ManualClock clock;
  std::atomic<int> ran{0};
  ThreadPool pool(1, clock);  // one worker: it must survive every throw
  EXPECT_EQ(pool.failed(), 0u);
  ASSERT_TRUE(pool.submit([] { throw std::runtime_error("task failed"); }));
  ASSERT_TRUE(pool.submit([&] { ran.fetch_add(1); }));
  ASSERT_TRUE(pool.submit([] { throw 42; }));  // not a std::exception
  ASSERT_TRUE(pool.submit([&] { ran.fetch_add(1); }));
  ASSERT_TRUE(pool.submit([] { throw std::logic_error("another"); }));
  ASSERT_TRUE(pool.submit([&] { ran.fetch_add(1); }));
  pool.shutdown();
  EXPECT_EQ(ran.load(), 3) << "the tasks after a throwing one must still run";
  EXPECT_EQ(pool.failed(), 3u) << "three tasks threw";
}

// Stage 1's starvation: both workers block on something only a queued task
// would provide, so the queue waits and waits; starving() sees it.
TEST(ThreadPool, StarvingCountsTasksQueuedLongerThanTheThreshold) {
  Watchdog dog("StarvingCountsTasksQueuedLongerThanTheThreshold", 30);
  ManualClock clock;
  Gate signal;  // what the blocked tasks wait for; task C would open it
  std::atomic<int> started{0};
  std::atomic<int> ran{0};
  ThreadPool pool(2, clock);
  OpenOnExit opener{signal};
  EXPECT_EQ(pool.starving(nanoseconds(0)), 0u);

  for (int i = 0; i < 2; ++i) {  // A and B, at time 0
    ASSERT_TRUE(pool.submit([&] {
      started.fetch_add(1);
      signal.wait();
      ran.fetch_add(1);
    }));
  }
  ASSERT_TRUE(eventually([&] { return started.load() == 2; }, 10));
  clock.set(milliseconds(1));
  ASSERT_TRUE(pool.submit([&] {  // C: would unblock A and B, never starts
    signal.open();
    ran.fetch_add(1);
  }));
  clock.set(milliseconds(3));
  ASSERT_TRUE(pool.submit([&] { ran.fetch_add(1); }));  // D
  clock.set(milliseconds(6));
  ASSERT_TRUE(pool.submit([&] { ran.fetch_add(1); }));  // E

  clock.set(milliseconds(10));  // C has waited 9 ms, D 7 ms, E 4 ms
  EXPECT_EQ(pool.queued(), 3u);
  EXPECT_EQ(pool.starving(milliseconds(10)), 0u);
  EXPECT_EQ(pool.starving(milliseconds(8)), 1u);
  EXPECT_EQ(pool.starving(milliseconds(7)), 1u)
      << "D has waited exactly 7 ms: not longer than 7 ms";
  EXPECT_EQ(pool.starving(milliseconds(7) - nanoseconds(1)), 2u);
  EXPECT_EQ(pool.starving(milliseconds(4)), 2u);
  EXPECT_EQ(pool.starving(nanoseconds(0)), 3u)
      << "A and B (submitted at 0) are running: they no longer wait";
  clock.set(std::chrono::seconds(10));
  EXPECT_EQ(pool.starving(std::chrono::seconds(1)), 3u)
      << "nothing has moved: the pool is starved";

  signal.open();  // the test rescues the pool
  ASSERT_TRUE(eventually([&] { return pool.queued() == 0; }, 10));
  EXPECT_EQ(pool.starving(nanoseconds(0)), 0u);
  pool.shutdown();
  EXPECT_EQ(ran.load(), 5);
}

// Six submitters (whose tasks sometimes throw, sometimes submit a task of
// their own) race an owner that shuts the pool down at a random moment.
// Every accepted task must run exactly once, and before shutdown() returns;
// every refused one never.
void submit_races_shutdown(std::uint64_t seed) {
  constexpr int kSubmitters = 6;
  constexpr int kPerSubmitter = 200;
  constexpr int kMaxTasks = 2 * kSubmitters * kPerSubmitter;  // + children
  Chaos pick(seed);
  const int workers = 1 + static_cast<int>(pick.below(3));
  const std::uint32_t shut_after = pick.below(kSubmitters * kPerSubmitter);
  SCOPED_TRACE(::testing::Message() << workers << " workers, shutdown after "
                                    << shut_after << " submits");
  ManualClock clock;
  std::vector<std::atomic<int>> ran(kMaxTasks);
  std::vector<std::atomic<bool>> accepted(kMaxTasks);
  std::vector<std::atomic<bool>> throws(kMaxTasks);
  std::atomic<int> next_id{0};
  std::atomic<int> lost_at_shutdown{0};
  ThreadPool pool(workers, clock);

  // Submits one task; `r` decides what it does (1 in 8 throws; 1 in 8,
  // if it may, submits a child that never submits further).
  std::function<void(std::uint64_t, bool)> submit_one =
      [&](std::uint64_t r, bool may_spawn) {
        const int id = next_id.fetch_add(1);
        const bool spawn = may_spawn && r % 8 == 1;
        throws[id] = r % 8 == 0;
        accepted[id] = pool.submit([&, id, r, spawn] {
          ran[id].fetch_add(1);
          if (spawn) submit_one(r >> 3, false);
          if (throws[id]) throw std::runtime_error("a failing task");
        });
      };

  run_threads(kSubmitters + 1, seed, [&](int who, Chaos& chaos) {
    if (who == kSubmitters) {  // the owner
      while (next_id.load() < static_cast<int>(shut_after)) chaos.point();
      pool.shutdown();
      // Every task accepted so far has run (the workers are joined).
      for (int id = 0; id < kMaxTasks; ++id) {
        if (accepted[id].load() && ran[id].load() == 0) lost_at_shutdown++;
      }
      return;
    }
    for (int i = 0; i < kPerSubmitter; ++i) {
      submit_one(chaos.next(), true);
      chaos.point();
      switch (chaos.below(8)) {
        case 0: clock.advance(nanoseconds(chaos.below(1000))); break;
        case 1: (void)pool.starving(nanoseconds(chaos.below(1000))); break;
        case 2: (void)pool.queued(); break;
        case 3: (void)pool.failed(); break;
        default: break;
      }
    }
  });

  EXPECT_EQ(lost_at_shutdown.load(), 0)
      << "shutdown() returned before every accepted task had run";
  std::size_t want_failed = 0;
  for (int id = 0; id < next_id.load(); ++id) {
    const int want = accepted[id].load() ? 1 : 0;
    ASSERT_EQ(ran[id].load(), want)
        << "task " << id << (want ? " (accepted)" : " (refused)") << " ran "
        << ran[id].load() << " times";
    if (want == 1 && throws[id].load()) ++want_failed;
  }
  EXPECT_EQ(pool.failed(), want_failed);
  EXPECT_EQ(pool.queued(), 0u);
}

TEST(ThreadPoolStress, SubmitRacesShutdownNothingLost) {
  for (std::uint64_t seed : stress_seeds(30, "pool.submit_races_shutdown")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Watchdog dog("one iteration of SubmitRacesShutdownNothingLost", 30);
    submit_races_shutdown(seed);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace gmp::exercises::pool
