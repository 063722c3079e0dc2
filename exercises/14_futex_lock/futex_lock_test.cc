// Exercise 14's tests: the lock's fast path makes no system call and its
// sleepers are always woken, mutual exclusion under ThreadSanitizer (the
// lock's memory orders), then the note's one-shot contract.
#include "exercises/14_futex_lock/futex_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "exercises/testing/harness.h"

namespace gmp::exercises::futex {
namespace {

// Seconds a correct solution needs far less than: a sleeper that is never
// woken fails here instead of hanging the grade.
constexpr double kLiveness = 10;

// Waits until n threads sleep in futexsleep (a spurious first return does
// not count): the lock's or the note's sleeper is really asleep.
bool sleepers_reach(int n) {
  return eventually([n] { return futex_sleepers() >= n; }, kLiveness);
}

TEST(FutexMutex, UncontendedLockAndUnlockMakeNoSystemCall) {
  Mutex mu;
  FutexCounts before = futex_counts();
  for (int i = 0; i < 1000; ++i) {
    mu.lock();
    EXPECT_EQ(mu.key(), 1u) << "held, nobody waiting: the key is 1";
    mu.unlock();
    EXPECT_EQ(mu.key(), 0u);
  }
  FutexCounts after = futex_counts();
  EXPECT_EQ(after.sleeps, before.sleeps) << "nobody else wanted the lock";
  EXPECT_EQ(after.wakeups, before.wakeups)
      << "an unlock that finds the key 1 has nobody to wake: no futexwakeup";
}

TEST(FutexMutex, UnlockOfAnUnlockedLockThrows) {
  Mutex mu;
  try {
    mu.unlock();
    ADD_FAILURE() << "unlock of a free lock returned";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("unlock of unlocked lock"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(mu.key(), 0u) << "the lock stays unlocked";
  mu.lock();  // and usable
  mu.unlock();
}

// The holder keeps the lock until the other thread sleeps on it, then lets
// go: the unlock must wake it (the key was 2), once.
TEST(FutexMutex, ASleeperIsWokenByTheUnlock) {
  Watchdog dog("ASleeperIsWokenByTheUnlock", 3 * kLiveness);
  Mutex mu;
  mu.lock();
  std::atomic<bool> got{false};
  std::thread t([&] {
    mu.lock();
    got.store(true);
    mu.unlock();
  });
  ASSERT_TRUE(sleepers_reach(1)) << "the second locker never went to sleep";
  EXPECT_EQ(mu.key(), 2u) << "a thread sleeps on the lock: the key says so";
  std::uint64_t wakeups = futex_counts().wakeups;
  mu.unlock();
  EXPECT_TRUE(eventually([&] { return got.load(); }, kLiveness))
      << "the sleeper was never woken: did it set the key to 2 before "
         "sleeping?";
  t.join();
  EXPECT_GE(futex_counts().wakeups, wakeups + 1);
}

// Two sleepers: the first one woken takes the lock, and its own unlock must
// wake the second. It can only if it took the lock as 2, not 1: it cannot
// know that nobody else sleeps.
TEST(FutexMutex, AWokenSleeperKeepsTheOthersAnnounced) {
  Watchdog dog("AWokenSleeperKeepsTheOthersAnnounced", 3 * kLiveness);
  Mutex mu;
  mu.lock();
  std::atomic<int> got{0};
  std::vector<std::thread> ts;
  for (int i = 0; i < 2; ++i) {
    ts.emplace_back([&] {
      mu.lock();
      got.fetch_add(1);
      mu.unlock();
    });
  }
  ASSERT_TRUE(sleepers_reach(2)) << "the two lockers never both slept";
  mu.unlock();
  EXPECT_TRUE(eventually([&] { return got.load() == 2; }, kLiveness))
      << got.load() << " of 2 sleepers got the lock: a woken sleeper that "
      << "takes the lock as 1 leaves the other asleep for good";
  for (std::thread& t : ts) t.join();
}

// A plain counter under the lock, from 4 threads with random delays. Under
// ThreadSanitizer (the grader runs it there) a lock without acquire and
// release orders is a data race on the counter.
TEST(FutexMutexStress, MutualExclusionAndNoLostWakeup) {
  Watchdog dog("MutualExclusionAndNoLostWakeup", 6 * kLiveness);
  constexpr int kThreads = 4;
  constexpr int kRounds = 500;
  for (std::uint64_t seed : stress_seeds(20, "FutexMutexStress")) {
    Mutex mu;
    mu.lock();  // the skeleton throws here, on the test's own thread
    mu.unlock();
    long counter = 0;  // protected by mu, not atomic on purpose
    run_threads(kThreads, seed, [&](int, Chaos& chaos) {
      for (int r = 0; r < kRounds; ++r) {
        mu.lock();
        long seen = counter;
        if (chaos.below(8) == 0) chaos.point();  // hold it a while, at times
        counter = seen + 1;
        mu.unlock();
        chaos.point();
      }
    });
    ASSERT_EQ(counter, kThreads * kRounds) << "seed " << seed;
    ASSERT_EQ(mu.key(), 0u) << "seed " << seed;
  }
}

TEST(Note, AWakeupBeforeTheSleepIsKept) {
  Note n;
  n.clear();
  n.wakeup();
  FutexCounts before = futex_counts();
  n.sleep();  // returns at once
  EXPECT_TRUE(n.tsleep(0));
  EXPECT_TRUE(n.tsleep(-1));
  EXPECT_EQ(futex_counts().sleeps, before.sleeps)
      << "the note was woken already: no futexsleep";
}

// The sleeper's first futexsleep returns at once for no reason (futex_lock.h):
// sleep() must check the key again and sleep on.
TEST(Note, SleepLastsUntilTheWakeup) {
  Watchdog dog("SleepLastsUntilTheWakeup", 3 * kLiveness);
  Note n;
  n.clear();
  std::atomic<bool> done{false};
  std::thread t([&] {
    n.sleep();
    done.store(true);
  });
  ASSERT_TRUE(sleepers_reach(1)) << "the sleeper never slept";
  EXPECT_FALSE(done.load()) << "sleep() returned before any wakeup";
  n.wakeup();
  EXPECT_TRUE(eventually([&] { return done.load(); }, kLiveness))
      << "the wakeup did not wake the sleeper";
  t.join();
  EXPECT_EQ(n.key(), 1u) << "a woken note stays woken until clear()";
}

TEST(Note, DoubleWakeupThrowsAndClearRearms) {
  Note n;
  n.clear();
  n.wakeup();
  try {
    n.wakeup();
    ADD_FAILURE() << "a second wakeup returned";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("notewakeup - double wakeup"),
              std::string::npos)
        << e.what();
  }
  n.clear();
  EXPECT_EQ(n.key(), 0u);
  EXPECT_FALSE(n.tsleep(1'000'000)) << "cleared: nothing to wake it";
  n.wakeup();  // allowed again after clear()
  EXPECT_TRUE(n.tsleep(0));
}

// tsleep gives up only once its time has passed, and not before, even
// though its first futexsleep returns early; and a wakeup from another
// thread ends it.
TEST(Note, TimedSleepTimesOutOrIsWoken) {
  Watchdog dog("TimedSleepTimesOutOrIsWoken", 3 * kLiveness);
  constexpr std::int64_t kTimeout = 20'000'000;  // 20 ms
  Note n;
  n.clear();
  std::int64_t start = nanotime();
  EXPECT_FALSE(n.tsleep(kTimeout));
  EXPECT_GE(nanotime() - start, kTimeout) << "tsleep gave up before its time";
  n.clear();
  bool woken = false;
  std::thread t([&] { woken = n.tsleep(600 * std::int64_t{1'000'000'000}); });
  ASSERT_TRUE(sleepers_reach(1)) << "the timed sleeper never slept";
  n.wakeup();
  t.join();
  EXPECT_TRUE(woken) << "woken before its time: tsleep returns true";
}

}  // namespace
}  // namespace gmp::exercises::futex
