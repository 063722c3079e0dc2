// Go's own tests of runtime.LockOSThread (runtime/proc_test.go,
// runtime/testdata/testprog/lockosthread.go and deadlock.go), ported to
// the course's API, for the stages that have it (2-5: stage 1's goroutine
// keeps its worker thread from start to end anyway). A stage instantiates
// it with its Api type:
//
//   INSTANTIATE_TYPED_TEST_SUITE_P(Stage3, LockOSThreadSuite, stage3::Api);
//
// A thread is told by its kernel id (gettid): a locked goroutine sees the
// same id after every wait, no other goroutine sees it meanwhile, and once
// the goroutine ends locked, /proc/self/task has no such thread any more.
#pragma once

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/errors.h"
#include "testing/helpers.h"

namespace gmp::testing {

/// The calling thread's kernel id.
inline int thread_id() { return static_cast<int>(::gettid()); }

/// Whether thread `tid` of this process still exists (Go's tidExists).
inline bool thread_exists(int tid) {
  struct stat st;
  std::string path = "/proc/self/task/" + std::to_string(tid);
  return ::stat(path.c_str(), &st) == 0;
}

/// The calling thread's working directory.
inline std::string working_dir() {
  char buf[4096];
  return ::getcwd(buf, sizeof buf) != nullptr ? std::string(buf) : "";
}

/// From a goroutine: thread `tid`, whose locked goroutine has ended, ends
/// within a second (sleeping a millisecond at a time, as Go's test), and
/// the caller never runs on it meanwhile (it is not reused).
template <class Api>
void expect_thread_ends(int tid) {
  bool gone = false;
  for (int i = 0; i < 1000 && !gone; ++i) {
    Api::sleep_for(std::chrono::milliseconds(1));
    EXPECT_NE(thread_id(), tid) << "goroutine migrated to locked thread";
    gone = !thread_exists(tid);
  }
  EXPECT_TRUE(gone) << "sub thread " << tid << " still running";
}

template <class Api>
class LockOSThreadSuite : public ::testing::Test {};

TYPED_TEST_SUITE_P(LockOSThreadSuite);

// proc_test.go TestLockOSThreadNesting: every lock is counted, and only
// the last unlock frees the goroutine; an unlock without a lock does
// nothing.
TYPED_TEST_P(LockOSThreadSuite, NestingIsCounted) {
  run_with<TypeParam>(2, [] {
    EXPECT_EQ(TypeParam::lock_os_count(), 0u);
    TypeParam::unlock_os_thread();  // nothing to undo
    EXPECT_EQ(TypeParam::lock_os_count(), 0u);
    TypeParam::lock_os_thread();
    TypeParam::lock_os_thread();
    TypeParam::unlock_os_thread();
    EXPECT_EQ(TypeParam::lock_os_count(), 1u);
    TypeParam::unlock_os_thread();
    EXPECT_EQ(TypeParam::lock_os_count(), 0u);
  });
}

// A locked goroutine waits in every way the runtime has (a sleep, a
// channel, a yield) and comes back on its own thread each time, while
// other goroutines run on the other threads and never on its own.
TYPED_TEST_P(LockOSThreadSuite, ALockedGoroutineKeepsItsThreadAlone) {
  for (int procs : {1, 2}) {
    SCOPED_TRACE("procs " + std::to_string(procs));
    run_with<TypeParam>(procs, [] {
      std::atomic<int> locked_tid{0};
      std::atomic<bool> done{false};
      std::atomic<int> others_on_it{0}, other_turns{0};
      typename TypeParam::template Chan<int> ping, pong;
      typename TypeParam::WaitGroup wg;
      wg.add(4);
      TypeParam::go([&] {
        TypeParam::lock_os_thread();
        locked_tid.store(thread_id());
        for (int i = 0; i < 50; ++i) {
          TypeParam::sleep_for(std::chrono::microseconds(50));
          EXPECT_EQ(thread_id(), locked_tid.load());
          ping.send(i);
          EXPECT_EQ(pong.recv().value_or(-1), i);
          EXPECT_EQ(thread_id(), locked_tid.load());
          TypeParam::yield();
          EXPECT_EQ(thread_id(), locked_tid.load());
        }
        TypeParam::unlock_os_thread();
        done.store(true);
        wg.done();
      });
      TypeParam::go([&] {  // its partner
        for (int i = 0; i < 50; ++i) pong.send(ping.recv().value_or(-1));
        wg.done();
      });
      for (int k = 0; k < 2; ++k) {
        TypeParam::go([&] {  // others, looking at their thread often
          while (!done.load()) {
            int tid = thread_id();
            if (tid == locked_tid.load()) others_on_it.fetch_add(1);
            other_turns.fetch_add(1);
            TypeParam::yield();
          }
          wg.done();
        });
      }
      wg.wait();
      EXPECT_EQ(others_on_it.load(), 0);
      EXPECT_GT(other_turns.load(), 0);
    });
  }
}

// Locked goroutines take turns with the others, but never more goroutines
// run at once than procs: an M that waits for its locked goroutine leaves
// its place (its P) to another, and takes one back to run it.
TYPED_TEST_P(LockOSThreadSuite, NoMoreGoroutinesRunAtOnceThanProcs) {
  for (int procs : {1, 2}) {
    SCOPED_TRACE("procs " + std::to_string(procs));
    std::atomic<int> running{0}, most{0};
    run_with<TypeParam>(procs, [&] {
      typename TypeParam::WaitGroup wg;
      constexpr int kGoroutines = 6;
      wg.add(kGoroutines);
      for (int g = 0; g < kGoroutines; ++g) {
        TypeParam::go([&, g] {
          if (g % 2 == 0) TypeParam::lock_os_thread();  // half of them
          for (int i = 0; i < 200; ++i) {
            int now = running.fetch_add(1) + 1;
            int seen = most.load();
            while (now > seen && !most.compare_exchange_weak(seen, now)) {
            }
            auto until = std::chrono::steady_clock::now() +
                         std::chrono::microseconds(10);  // running a while
            while (std::chrono::steady_clock::now() < until) {
            }
            running.fetch_sub(1);
            if (i % 3 == 0) {
              TypeParam::sleep_for(std::chrono::microseconds(20));
            } else {
              TypeParam::yield();
            }
          }
          wg.done();
        });
      }
      wg.wait();
    });
    EXPECT_LE(most.load(), procs);
    EXPECT_GE(most.load(), 1);
  }
}

// lockosthread.go LockOSThreadMain: a goroutine that ends locked takes
// its thread with it; the goroutine that waited for it runs on elsewhere.
TYPED_TEST_P(LockOSThreadSuite, AGoroutineEndingLockedEndsItsThread) {
  run_with<TypeParam>(1, [] {
    int sub_tid = 0;
    typename TypeParam::template Chan<bool> ready(1);
    TypeParam::go([&] {
      TypeParam::lock_os_thread();
      sub_tid = thread_id();
      ready.send(true);
      // Ends with the thread locked: the thread ends too.
    });
    (void)ready.recv();
    expect_thread_ends<TypeParam>(sub_tid);
  });
}

// lockosthread.go LockOSThreadAlt: main, locked itself, waits for a
// goroutine that ends locked, then unlocks; its thread is never reused.
TYPED_TEST_P(LockOSThreadSuite, ALockedThreadIsNeverReused) {
  run_with<TypeParam>(2, [] {
    TypeParam::lock_os_thread();
    const int main_tid = thread_id();
    int sub_tid = 0;
    typename TypeParam::template Chan<bool> ready(1);
    TypeParam::go([&] {
      TypeParam::lock_os_thread();
      sub_tid = thread_id();
      ready.send(true);
    });
    (void)ready.recv();
    EXPECT_EQ(thread_id(), main_tid);
    TypeParam::unlock_os_thread();
    expect_thread_ends<TypeParam>(sub_tid);
  });
}

// lockosthread.go LockOSThreadAvoidsStatePropagation: a locked goroutine
// changes its thread's state (its own working directory, after
// unshare(CLONE_FS)) and ends locked; no thread made afterwards inherits
// that state (Go's template thread makes them, not the tainted one).
TYPED_TEST_P(LockOSThreadSuite, ThreadStateDoesNotPropagate) {
  const std::string cwd = working_dir();
  bool unshare_denied = false;
  run_with<TypeParam>(1, [&] {
    TypeParam::lock_os_thread();
    typename TypeParam::template Chan<bool> ready(1);
    TypeParam::go([&] {
      TypeParam::lock_os_thread();
      if (::unshare(CLONE_FS) != 0) {
        unshare_denied = errno == EPERM;  // as Go's: then nothing to test
        EXPECT_TRUE(unshare_denied) << "unshare: errno " << errno;
      } else {
        EXPECT_EQ(::chdir("/tmp"), 0);
        EXPECT_EQ(working_dir(), "/tmp");
      }
      ready.send(true);
      // Ends locked: its thread, tainted, ends too.
    });
    (void)ready.recv();
    typename TypeParam::template Chan<bool> done;
    for (int k = 0; k < 4; ++k) {  // new goroutines, on whatever threads
      TypeParam::go([&] {
        TypeParam::lock_os_thread();
        EXPECT_EQ(working_dir(), cwd)
            << "bad state from old thread propagated after it should have died";
        (void)done.recv();
        TypeParam::unlock_os_thread();
      });
      TypeParam::sleep_for(std::chrono::milliseconds(1));
    }
    for (int k = 0; k < 4; ++k) done.send(true);
    TypeParam::unlock_os_thread();
  });
  EXPECT_EQ(working_dir(), cwd);
  if (unshare_denied) GTEST_SKIP() << "unshare(CLONE_FS) not permitted";
}

// lockosthread.go LockOSThreadTemplateThreadRace (Go issue 38931): stops
// of the world (here GOMAXPROCS changes, on stages 3-5) race with
// goroutines that queue work, lock their thread and yield; all of them
// finish.
TYPED_TEST_P(LockOSThreadSuite, LockingRacesWithStopsOfTheWorld) {
  run_with<TypeParam>(2, [] {
    std::atomic<bool> stop{false};
    typename TypeParam::WaitGroup stw_done;
    stw_done.add(1);
    TypeParam::go([&] {
      for (int i = 0; !stop.load(); ++i) {
        if constexpr (requires { TypeParam::gomaxprocs(2); }) {
          TypeParam::gomaxprocs(i % 2 == 0 ? 2 : 3);  // a stop of the world
        }  // (stage 2 has none: there the race is with a yielding loop)
        TypeParam::yield();
      }
      stw_done.done();
    });
    for (int round = 0; round < 5; ++round) {
      typename TypeParam::WaitGroup wg;
      wg.add(2);
      auto start = std::chrono::steady_clock::now() +
                   std::chrono::microseconds(200);
      for (int i = 0; i < 2; ++i) {
        TypeParam::go([&] {
          while (std::chrono::steady_clock::now() < start) {
          }
          TypeParam::go([] {});  // work on the local queue for a hand-off
          TypeParam::lock_os_thread();
          TypeParam::yield();
          wg.done();
        });  // ends locked
      }
      wg.wait();
    }
    stop.store(true);
    stw_done.wait();
  });
}

// Many goroutines lock and unlock at seeded random moments while they
// pass values around a ring and sleep: nothing lost, none duplicated, and
// each locked stretch stays on one thread.
TYPED_TEST_P(LockOSThreadSuite, StressLockUnlockInARing) {
  for (unsigned seed : {1u, 7u, 42u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    run_with<TypeParam>(2, [seed] {
      constexpr int kRing = 8, kLaps = 200;
      std::vector<typename TypeParam::template Chan<int>> links(kRing);
      std::atomic<long> sum{0};
      std::atomic<int> moved{0};
      typename TypeParam::WaitGroup wg;
      wg.add(kRing);
      for (int r = 0; r < kRing; ++r) {
        TypeParam::go([&, r] {
          std::mt19937 rng(seed * 100 + static_cast<unsigned>(r));
          int tid = 0;
          for (int lap = 0; lap < kLaps; ++lap) {
            if (r == 0) {
              links[1].send(lap);
            }
            auto v = links[static_cast<std::size_t>(r)].recv();
            if (r != 0) {
              links[static_cast<std::size_t>((r + 1) % kRing)].send(*v);
            } else {
              sum.fetch_add(*v);
            }
            if (TypeParam::lock_os_count() > 0 && thread_id() != tid) {
              moved.fetch_add(1);
            }
            switch (rng() % 4) {
              case 0:
                TypeParam::lock_os_thread();
                tid = thread_id();
                break;
              case 1: TypeParam::unlock_os_thread(); break;
              case 2: TypeParam::sleep_for(std::chrono::microseconds(rng() % 30)); break;
              default: TypeParam::yield(); break;
            }
          }
          wg.done();  // some end locked: their threads end
        });
      }
      wg.wait();
      EXPECT_EQ(sum.load(), static_cast<long>(kLaps) * (kLaps - 1) / 2);
      EXPECT_EQ(moved.load(), 0);
    });
  }
}

// Main may end locked, or lock and unlock many times: the run ends as
// usual, every goroutine accounted for.
TYPED_TEST_P(LockOSThreadSuite, MainEndingLockedEndsTheRun) {
  auto stats = run_with<TypeParam>(2, [] {
    TypeParam::lock_os_thread();
    typename TypeParam::WaitGroup wg;
    wg.add(10);
    for (int i = 0; i < 10; ++i) TypeParam::go([&] { wg.done(); });
    wg.wait();
  });
  EXPECT_TRUE(conserved(stats));
  EXPECT_EQ(stats.goroutines_finished, 11u);
}

// From a plain thread: a UsageError, as every runtime call.
TYPED_TEST_P(LockOSThreadSuite, OutsideAGoroutineIsAUsageError) {
  EXPECT_THROW(TypeParam::lock_os_thread(), UsageError);
  EXPECT_THROW(TypeParam::unlock_os_thread(), UsageError);
}

REGISTER_TYPED_TEST_SUITE_P(LockOSThreadSuite, NestingIsCounted,
                            ALockedGoroutineKeepsItsThreadAlone,
                            NoMoreGoroutinesRunAtOnceThanProcs,
                            AGoroutineEndingLockedEndsItsThread,
                            ALockedThreadIsNeverReused,
                            ThreadStateDoesNotPropagate,
                            LockingRacesWithStopsOfTheWorld,
                            StressLockUnlockInARing,
                            MainEndingLockedEndsTheRun,
                            OutsideAGoroutineIsAUsageError);

template <class Api>
class LockOSThreadDeathTest : public ::testing::Test {};

TYPED_TEST_SUITE_P(LockOSThreadDeathTest);

// deadlock.go LockedDeadlock: main locks its thread and waits forever.
TYPED_TEST_P(LockOSThreadDeathTest, LockedMainWaitingForeverIsADeadlock) {
  auto program = [] {
    run_with<TypeParam>(2, [] {
      TypeParam::lock_os_thread();
      TypeParam::block();
    });
  };
  EXPECT_EXIT(program(), ::testing::ExitedWithCode(2),
              "fatal error: all goroutines are asleep - deadlock!");
}

// deadlock.go LockedDeadlock2: a locked goroutine and main both wait
// forever.
TYPED_TEST_P(LockOSThreadDeathTest, LockedGoroutineAndMainWaitingIsADeadlock) {
  auto program = [] {
    run_with<TypeParam>(2, [] {
      TypeParam::go([] {
        TypeParam::lock_os_thread();
        TypeParam::block();
      });
      TypeParam::sleep_for(std::chrono::milliseconds(1));
      TypeParam::block();
    });
  };
  EXPECT_EXIT(program(), ::testing::ExitedWithCode(2),
              "fatal error: all goroutines are asleep - deadlock!");
}

REGISTER_TYPED_TEST_SUITE_P(LockOSThreadDeathTest,
                            LockedMainWaitingForeverIsADeadlock,
                            LockedGoroutineAndMainWaitingIsADeadlock);

}  // namespace gmp::testing
