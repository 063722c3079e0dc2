// Unit tests of the runtime's own locks and events (common/), on plain
// threads: they are used both by goroutines and by scheduler threads.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "common/note.h"
#include "common/runtime_lock.h"

namespace gmp {
namespace {

TEST(RuntimeLockTest, GivesMutualExclusionUnderContention) {
  constexpr int kThreads = 4, kIncrements = 20000;
  RuntimeLock lock;
  long counter = 0;  // protected by lock
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        std::lock_guard lk(lock);
        ++counter;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter, long{kThreads} * kIncrements);
}

TEST(RuntimeLockTest, MayBeUnlockedByAnotherThreadThanTheLocker) {
  RuntimeLock lock;
  lock.lock();
  EXPECT_FALSE(lock.try_lock());
  std::thread other([&] { lock.unlock(); });  // what g0 does after a park
  other.join();
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

TEST(RuntimeLockTest, ASleepingLockerIsWokenByUnlock) {
  RuntimeLock lock;
  std::atomic<bool> got{false};
  lock.lock();
  std::thread waiter([&] {
    lock.lock();  // spins, then sleeps on the key
    got.store(true);
    lock.unlock();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(got.load());
  lock.unlock();
  waiter.join();
  EXPECT_TRUE(got.load());
}

TEST(NoteTest, AWakeupBeforeTheSleepIsNotLost) {
  Note n;
  n.clear();
  n.wakeup();
  n.sleep();  // returns at once
  EXPECT_TRUE(n.tsleep(std::chrono::hours(1)));
}

TEST(NoteTest, TsleepTimesOutAndHugeTimeoutsDoNotOverflow) {
  Note n;
  n.clear();
  EXPECT_FALSE(n.tsleep(std::chrono::milliseconds(1)));
  std::thread waker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    n.wakeup();
  });
  EXPECT_TRUE(n.tsleep(std::chrono::nanoseconds::max()));  // waits for it
  waker.join();
}

TEST(NoteDeathTest, ADoubleWakeupIsFatal) {
  auto twice = [] {
    Note n;
    n.clear();
    n.wakeup();
    n.wakeup();
  };
  EXPECT_EXIT(twice(), ::testing::ExitedWithCode(2),
              "fatal error: wakeup: notewakeup - double wakeup");
}

}  // namespace
}  // namespace gmp
