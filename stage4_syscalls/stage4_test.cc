// Stage 4's tests: the behaviour every stage must have (testing/), then
// what stage 4 adds to the scheduler: blocking calls that hand their P off
// (the three ways back of exitsyscall), the thread limit, and misuse.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "stage3_gmp/gmp_suite.h"
#include "stage4_syscalls/api.h"
#include "stage4_syscalls/test_config.h"
#include "testing/api_death_suite.h"
#include "testing/api_suite.h"
#include "testing/context_suite.h"
#include "testing/lock_os_thread_suite.h"
#include "testing/select_suite.h"
#include "testing/time_suite.h"
#include "testing/helpers.h"

namespace gmp::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(Stage4, ApiSuite, stage4::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage4, SelectSuite, stage4::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage4, TimeSuite, stage4::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage4, ContextSuite, stage4::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage4, LockOSThreadSuite, stage4::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage4, LockOSThreadDeathTest, stage4::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage4, SelectDeathTest, stage4::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage4, ApiDeathTest, stage4::Api);

}  // namespace gmp::testing

namespace gmp::stage3 {

INSTANTIATE_TYPED_TEST_SUITE_P(Stage4, GmpSuite, stage4::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage4, GmpDeathTest, stage4::Api);

}  // namespace gmp::stage3

namespace gmp::stage4 {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The notes' (docs/course/notes.md) hand-off picture: with one P, goroutines
// blocked in system calls do not stop the others. A counter goroutine keeps
// counting while four goroutines sleep in the kernel, and they all overlap:
// each stays in its call until all four are in theirs, which happens only if
// each hand-off let the next goroutine run (it gives up after 10 s).
TEST(Stage4Test, BlockingCallsHandTheirPOff) {
  Runtime rt(procs(1));
  std::atomic<int> in_call{0}, max_in_call{0};
  std::atomic<long> counted{0};
  rt.run([&] {
    std::atomic<bool> stop{false};
    WaitGroup wg;
    wg.add(4);
    for (int i = 0; i < 4; ++i) {
      go([&] {
        blocking([&] {
          int now = in_call.fetch_add(1) + 1;
          int prev = max_in_call.load();
          while (now > prev && !max_in_call.compare_exchange_weak(prev, now)) {
          }
          auto give_up = Clock::now() + std::chrono::seconds(10);
          while (max_in_call.load() < 4 && Clock::now() < give_up) {
            ::usleep(1'000);
          }
          in_call.fetch_sub(1);
        });
        wg.done();
      });
    }
    WaitGroup counter_done;
    counter_done.add(1);
    go([&] {
      while (!stop.load()) {
        counted.fetch_add(1);
        yield();
      }
      counter_done.done();
    });
    wg.wait();
    stop.store(true);
    counter_done.wait();
  });
  Stats s = rt.stats();
  EXPECT_EQ(max_in_call.load(), 4) << "the calls did not overlap";
  EXPECT_GT(counted.load(), 0) << "the counter never ran";
  EXPECT_EQ(s.syscalls, 4u);
  EXPECT_EQ(s.exitsyscall_oldp + s.exitsyscall_otherp + s.exitsyscall_grq, 4u);
  EXPECT_GE(s.threads_created, 5u) << "one M per blocked call, plus one";
}

// Waits (in a plain or blocked thread, polling the trace) until `rt` has
// `n` idle Ps; false after 10 s.
bool wait_idleprocs(const Runtime& rt, int n) {
  std::string want = "idleprocs=" + std::to_string(n) + " ";
  auto give_up = Clock::now() + std::chrono::seconds(10);
  while (rt.schedtrace(false).find(want) == std::string::npos) {
    if (Clock::now() > give_up) return false;
    ::usleep(100);
  }
  return true;
}

template <class Pred>
bool wait_for(Pred pred) {
  auto give_up = Clock::now() + std::chrono::seconds(10);
  while (!pred()) {
    if (Clock::now() > give_up) return false;
    ::usleep(100);
  }
  return true;
}

// exitsyscall's first way back: nothing else wanted the P (it went idle
// while the call lasted), so the goroutine takes its old P back.
TEST(Stage4Test, ExitsyscallTakesTheOldPBackWhenIdle) {
  Runtime rt(procs(1));
  bool idle = false;
  rt.run([&] { blocking([&] { idle = wait_idleprocs(rt, 1); }); });
  ASSERT_TRUE(idle);
  Stats s = rt.stats();
  EXPECT_EQ(s.exitsyscall_oldp, 1u);
  EXPECT_EQ(s.exitsyscall_otherp + s.exitsyscall_grq, 0u);
}

// The second: the old P is gone (GOMAXPROCS went from 2 to 1 during the
// call), another is idle: the goroutine takes that one.
TEST(Stage4Test, ExitsyscallTakesAnotherIdlePWhenTheOldOneIsGone) {
  Runtime rt(procs(2));
  std::atomic<bool> entered{false}, go_back{false}, back{false};
  bool steps_ok = true;
  rt.run([&] {
    go([&] {  // runs on P1: main is running on P0
      blocking([&] {
        entered.store(true);
        wait_for([&] { return go_back.load(); });
      });
      back.store(true);
    });
    steps_ok &= wait_for([&] { return entered.load(); });
    gomaxprocs(1);  // P1, the blocked goroutine's old P, is removed
    blocking([&] {  // P0 goes idle while main is in this call
      steps_ok &= wait_idleprocs(rt, 1);
      go_back.store(true);
      steps_ok &= wait_for([&] { return back.load(); });
    });
  });
  ASSERT_TRUE(steps_ok);
  EXPECT_GE(rt.stats().exitsyscall_otherp, 1u);
}

// The third: every P is busy, so the goroutine goes to the GRQ and its M
// parks; it still finishes (a busy M finds it in the GRQ).
TEST(Stage4Test, ExitsyscallQueuesTheGoroutineWhenNoPIsFree) {
  Runtime rt(procs(1));
  std::atomic<bool> returned{false};
  rt.run([&] {
    std::atomic<bool> entered{false};
    go([&] {
      blocking([&] {
        entered.store(true);
        ::usleep(20'000);
      });
      returned.store(true);
    });
    while (!entered.load()) yield();
    // Main holds the only P, yielding (the GRQ is checked every 61 ticks
    // and whenever the local queue is empty), until the goroutine is back.
    while (!returned.load()) yield();
  });
  Stats s = rt.stats();
  EXPECT_TRUE(returned.load());
  EXPECT_EQ(s.exitsyscall_grq, 1u);
}

// A locked goroutine's blocking call: its M keeps only it, as any M in a
// call does, and it comes back on its own thread by each of exitsyscall's
// paths: its old P, or (main holding the only P) the GRQ, where main's M
// finds it and hands it its P (startlockedm) while its own M waits for it
// alone (exitsyscall0's stoplockedm).
TEST(Stage4Test, ALockedGoroutineReturnsFromACallOnItsOwnThread) {
  Runtime rt(procs(1));
  int before = 0, after_idle = 0, after_busy = 0;
  rt.run([&] {
    std::atomic<bool> entered{false}, returned{false};
    go([&] {
      lock_os_thread();
      before = static_cast<int>(::gettid());
      blocking([] { ::usleep(1'000); });  // main sleeps: the P is idle
      after_idle = static_cast<int>(::gettid());
      blocking([&] {
        entered.store(true);
        ::usleep(20'000);  // main holds the only P meanwhile
      });
      after_busy = static_cast<int>(::gettid());
      returned.store(true);
      unlock_os_thread();
    });
    sleep_for(std::chrono::milliseconds(5));
    while (!entered.load()) yield();
    while (!returned.load()) yield();
  });
  EXPECT_NE(before, 0);
  EXPECT_EQ(after_idle, before);
  EXPECT_EQ(after_busy, before);
  EXPECT_GE(rt.stats().exitsyscall_grq, 1u);
}

// Exceptions from the call pass through, with the P back.
TEST(Stage4Test, ExceptionsFromABlockingCallPassThrough) {
  Runtime rt(procs(1));
  bool caught = false;
  rt.run([&] {
    try {
      blocking([]() -> int { throw std::runtime_error("disk on fire"); });
    } catch (const std::runtime_error& e) {
      caught = std::string(e.what()) == "disk on fire";
    }
    yield();  // the goroutine holds a P again
  });
  EXPECT_TRUE(caught);
  EXPECT_EQ(rt.stats().syscalls, 1u);
}

TEST(Stage4Test, BlockingReturnsTheCallsValue) {
  Runtime rt(procs(1));
  int got = 0;
  rt.run([&] { got = blocking([] { return 42; }); });
  EXPECT_EQ(got, 42);
}

// Misuse: outside a goroutine, nested, and runtime calls inside.
TEST(Stage4Test, BlockingMisuseIsAClearError) {
  EXPECT_THROW(blocking([] {}), UsageError);
  Runtime rt(procs(1));
  std::string nested, inside;
  rt.run([&] {
    blocking([&] {
      try {
        blocking([] {});
      } catch (const UsageError& e) {
        nested = e.what();
      }
      try {
        yield();
      } catch (const UsageError& e) {
        inside = e.what();
      }
    });
  });
  EXPECT_NE(nested.find("inside another blocking call"), std::string::npos) << nested;
  EXPECT_NE(inside.find("inside a blocking system call"), std::string::npos) << inside;
}

TEST(Stage4Test, ConfigRejectsBadThreadLimits) {
  Config c = procs(2);
  c.max_threads = 1;
  EXPECT_THROW(Runtime{c}, ConfigError);
  c.max_threads = kMaxThreadsLimit + 1;
  EXPECT_THROW(Runtime{c}, ConfigError);
  c.procs = 8;
  c.max_threads = 4;
  try {
    Runtime rt(c);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("at least GOMAXPROCS"), std::string::npos)
        << e.what();
  }
}

// Go's "thread exhaustion": more goroutines in blocking calls than the
// thread limit allows ends the program with a clear message.
TEST(Stage4DeathTest, ExceedingTheThreadLimitIsFatal) {
  EXPECT_EXIT(
      {
        Config c = procs(1);
        c.max_threads = 4;
        Runtime rt(c);
        rt.run([] {
          WaitGroup wg;
          wg.add(8);
          for (int i = 0; i < 8; ++i) {
            go([&] {
              blocking([] { ::usleep(200'000); });
              wg.done();
            });
          }
          wg.wait();
        });
      },
      ::testing::ExitedWithCode(2),
      "fatal error: thread exhaustion: program exceeds 4-thread limit");
}

// Stress: many goroutines mixing blocking calls, channel hand-offs and
// GOMAXPROCS changes, over seeds; everything finishes and is counted.
TEST(Stage4Test, StressBlockingCallsWithChannelsAndResizes) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    Runtime rt(procs(1 + static_cast<int>(seed % 3)));
    std::atomic<long> sum{0};
    rt.run([&] {
      Chan<int> ch(static_cast<std::size_t>(seed % 3));
      WaitGroup wg;
      constexpr int kWorkers = 16, kItems = 50;
      wg.add(kWorkers);
      for (int w = 0; w < kWorkers; ++w) {
        go([&, w] {
          for (int i = 0; i < kItems; ++i) {
            if ((i + w + static_cast<int>(seed)) % 7 == 0) {
              blocking([] { ::usleep(100); });
            }
            ch.send(1);
          }
          wg.done();
        });
      }
      go([&] {
        for (int i = 0; i < 5; ++i) gomaxprocs(1 + (i + static_cast<int>(seed)) % 3);
      });
      for (int i = 0; i < kWorkers * kItems; ++i) sum += *ch.recv();
      wg.wait();
    });
    EXPECT_EQ(sum.load(), 16 * 50) << "seed " << seed;
    Stats s = rt.stats();
    EXPECT_EQ(s.goroutines_created, s.goroutines_finished + s.goroutines_exited +
                                        s.goroutines_never_started);
  }
}

}  // namespace
}  // namespace gmp::stage4
