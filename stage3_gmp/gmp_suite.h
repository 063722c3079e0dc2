// The behaviour every G-M-P stage (3, 4 and 5) must have, written once:
// no lost wake-up (work conservation, watched by conservation_watch.h) and
// no goroutine starved by stops of the world. A stage instantiates it:
//
//   INSTANTIATE_TYPED_TEST_SUITE_P(Stage3, GmpSuite, gmp::stage3::Api);
//
// The tests check behaviour, not time; the seeded ones take gtest's seed
// (--gtest_shuffle or --gtest_random_seed=N vary it; ./course test --stress).
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "stage3_gmp/conservation_watch.h"
#include "stage3_gmp/runtime.h"

namespace gmp::stage3 {

template <class Api>
class GmpSuite : public ::testing::Test {
 protected:
  using Runtime = WatchedRuntime<typename Api::Runtime>;

  static typename Api::Config config(int procs) {
    typename Api::Config c;
    c.procs = procs;
    c.debug = "";  // whatever GMP_DEBUG says
    return c;
  }

  static unsigned seed() {
    return static_cast<unsigned>(
        ::testing::UnitTest::GetInstance()->random_seed());
  }
};

TYPED_TEST_SUITE_P(GmpSuite);

// Go's TestGoroutineParallelism (runtime/proc_test.go): P goroutines on P
// Ps take turns on one counter, each spinning (no runtime call) until its
// turn comes. It ends only if all P run at once: a goroutine left in a
// queue while a P sits idle (a lost wake-up) would wait for a spinner that
// never schedules. Rounds vary who starts the goroutines and when, by
// seed; the watch turns a hang into a report.
TYPED_TEST_P(GmpSuite, GoroutineParallelism) {
  using Api = TypeParam;
  std::mt19937 rng(this->seed() + 3);
  // With 4 Ps on a 2-core machine the spinners take turns on the cores
  // (the kernel's time slice): fewer rounds.
  for (auto [procs, rounds] : {std::pair{2, 40}, std::pair{4, 8}}) {
    typename TestFixture::Runtime rt(this->config(procs));
    for (int round = 0; round < rounds; ++round) {
      const unsigned round_seed = static_cast<unsigned>(rng());
      SCOPED_TRACE("procs " + std::to_string(procs) + ", round seed " +
                   std::to_string(round_seed));
      rt.run(
          [&] {
        std::mt19937 r(round_seed);
        for (int attempt = 0; attempt < 10; ++attempt) {
          typename Api::template Chan<bool> done;
          std::atomic<std::uint32_t> x{0};
          auto player = [&, procs](int p, int yields) {
            for (int y = 0; y < yields; ++y) Api::yield();
            for (int i = 0; i < 3; ++i) {
              auto expected = static_cast<std::uint32_t>(procs * i + p);
              while (x.load() != expected) {
              }
              x.store(expected + 1);
            }
            done.send(true);
          };
          // Start them from main, or from a helper goroutine (another P).
          bool from_helper = r() % 2 == 0;
          std::vector<int> yields(static_cast<std::size_t>(procs));
          for (int& y : yields) y = static_cast<int>(r() % 3);
          auto start_all = [&] {
            for (int p = 0; p < procs; ++p) {
              Api::go([&player, p, y = yields[static_cast<std::size_t>(p)]] {
                player(p, y);
              });
            }
          };
          if (from_helper) {
            Api::go(start_all);
          } else {
            start_all();
          }
          for (int p = 0; p < procs; ++p) EXPECT_TRUE(done.recv().value());
        }
          },
          std::chrono::seconds(2), /*jitter_seed=*/round_seed | 1);
    }
  }
}

// A goroutine whose sleep is over runs although four goroutines stop the
// world in a loop (each gomaxprocs change is a stop and a start): the
// sleeper's wake-up is not starved by the stops, nor by the goroutines
// that hand the stop to each other through runnext. Counted in stops of
// the world, not in time: the sleeper may wait through kMaxStopsPerSleep
// of them at most, where a starved one waits for as long as they go on.
TYPED_TEST_P(GmpSuite, ASleeperRunsWhileGoroutinesStopTheWorld) {
  using Api = TypeParam;
  constexpr std::uint64_t kMaxStopsPerSleep = 1000;
  typename TestFixture::Runtime rt(this->config(2));
  std::uint64_t worst = 0;
  rt.run([&] {
    std::atomic<bool> stop{false};
    typename Api::WaitGroup wg;
    for (int i = 0; i < 4; ++i) {
      wg.add(1);
      Api::go([&, i] {
        for (int k = i; !stop.load(); ++k) gomaxprocs(1 + k % 2);
        wg.done();
      });
    }
    for (int s = 0; s < 50; ++s) {
      std::uint64_t before = rt.stats().stw_pauses;
      Api::sleep_for(std::chrono::milliseconds(1));
      worst = std::max(worst, rt.stats().stw_pauses - before);
    }
    stop.store(true);
    wg.wait();
  });
  EXPECT_LT(worst, kMaxStopsPerSleep)
      << "the sleeper waited through " << worst << " stops of the world";
  EXPECT_GT(rt.stats().stw_pauses, 0u);
}

// A goroutine in a loop of calls into the runtime that never block (a
// wait group raised and lowered) does not hold up a stop of the world: the
// stop asks it to yield at its next call (Go's preemptall), and it does.
// Before, the stop waited for its M's next scheduling point: forever.
TYPED_TEST_P(GmpSuite, AStopOfTheWorldStopsALoopOfRuntimeCalls) {
  using Api = TypeParam;
  typename TestFixture::Runtime rt(this->config(2));
  rt.run([&] {
    std::atomic<bool> stop{false}, looping{false};
    typename Api::WaitGroup busy, done;
    done.add(1);
    Api::go([&] {
      while (!stop.load()) {
        busy.add(1);
        busy.done();
        looping.store(true);
      }
      done.done();
    });
    while (!looping.load()) Api::sleep_for(std::chrono::microseconds(100));
    // Each change is a stop. Never one P: gomaxprocs yields after a change,
    // and on one P the looping goroutine, which never yields, would keep it
    // (stages 3 and 4 have no preemption); with two an idle P takes main.
    for (int i = 0; i < 20; ++i) gomaxprocs(3 - i % 2);
    stop.store(true);
    done.wait();
  });
  EXPECT_GE(rt.stats().preemptions, 1u);
  EXPECT_GE(rt.stats().stw_pauses, 20u);
}

// Spins (no runtime call: its P stays busy) until `flag` is set, or for
// at most a minute (a hang guard, not a timing check): whether it was set.
inline bool spin_until(const std::atomic<bool>& flag) {
  auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
  }
  return true;
}

// Go 1.14's per-P timers: a timer lives on the P of the goroutine that set
// it. Here that goroutine then keeps its P busy without a call into the
// runtime until the timer has fired, so the P's own M never looks at its
// timers: another M must (the idle M on duty wakes at the timer's time,
// takes the idle P, and runs the busy P's due timers in steal_work). A
// stage whose timers only their own P runs hangs here (the guard fails).
TYPED_TEST_P(GmpSuite, ATimerOnABusyPFiresOnAnother) {
  using Api = TypeParam;
  typename TestFixture::Runtime rt(this->config(2));
  rt.run([&] {
    for (int i = 0; i < 20; ++i) {
      std::atomic<bool> fired{false};
      auto t = Api::Timer::after_func(std::chrono::microseconds(200 * i),
                                      [&] { fired.store(true); });
      ASSERT_TRUE(spin_until(fired)) << "after_func " << i << " never ran";
    }
    // A sleeper, readied by the timer's M: main's goroutine starts it on
    // this P (runnext) and yields to it; then main keeps the P.
    for (int i = 0; i < 20; ++i) {
      std::atomic<bool> woke{false};
      Api::go([&] {
        Api::sleep_for(std::chrono::microseconds(100 * (i + 1)));
        woke.store(true);
      });
      Api::yield();
      ASSERT_TRUE(spin_until(woke)) << "sleeper " << i << " never woke";
    }
  });
  auto st = rt.stats();
  EXPECT_GE(st.timers_run + st.timers_stolen, 40u);
  EXPECT_GE(st.timers_lock.acquisitions, 40u);
}

// A resize that removes Ps hands their timers to a P that stays (Go's
// moveTimers): goroutines sleeping on the removed Ps all wake, a stopped
// timer stays stopped, and one left running fires, once.
TYPED_TEST_P(GmpSuite, TimersOfRemovedPsMoveToAP) {
  using Api = TypeParam;
  typename TestFixture::Runtime rt(this->config(4));
  rt.run([&] {
    constexpr int kSleepers = 64;
    typename Api::WaitGroup wg, asleep;
    std::atomic<int> fired{0};
    std::vector<typename Api::Timer> timers;
    for (int i = 0; i < kSleepers; ++i) {
      wg.add(1);
      asleep.add(1);
      Api::go([&, i] {
        asleep.done();
        Api::sleep_for(std::chrono::milliseconds(5 + i % 7));
        wg.done();
      });
    }
    for (int i = 0; i < 8; ++i) {  // set from goroutines on any P
      typename Api::template Chan<typename Api::Timer> made;
      Api::go([&] {
        made.send(Api::Timer::after_func(std::chrono::milliseconds(200),
                                         [&] { fired.fetch_add(1); }));
      });
      timers.push_back(*made.recv());
    }
    asleep.wait();
    gomaxprocs(1);  // three Ps go, with whatever timers they held
    for (int i = 0; i < 8; i += 2) EXPECT_TRUE(timers[i].stop());
    wg.wait();
    // Past their 200 ms: wait for the four kept ones (up to 5 s, for a
    // loaded machine), then a little more, in which a stopped one that
    // fired anyway would show.
    for (int i = 0; i < 1000 && fired.load() < 4; ++i) {
      Api::sleep_for(std::chrono::milliseconds(5));
    }
    Api::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(fired.load(), 4);
    for (int i = 1; i < 8; i += 2) EXPECT_FALSE(timers[i].stop());
  });
}

// A queued goroutine holds no stack: it gets one from its P's cache at its
// first run (gostartcallfn) and gives it back when it dies. Main queues
// 10,000 goroutines on one P without blocking; stage 2 would map 10,000
// stacks for them, here a slab or two serve them all, and every one runs.
TYPED_TEST_P(GmpSuite, QueuedGoroutinesHoldNoStack) {
  using Api = TypeParam;
  constexpr int kGoroutines = 10'000;
  typename TestFixture::Runtime rt(this->config(1));
  std::atomic<int> ran{0};
  std::uint64_t mapped_while_queued = 0;
  rt.run([&] {
    typename Api::WaitGroup wg;
    wg.add(kGoroutines);
    for (int i = 0; i < kGoroutines; ++i) {
      Api::go([&] {
        ran.fetch_add(1, std::memory_order_relaxed);
        wg.done();
      });
    }
    mapped_while_queued = rt.stats().stacks_mapped;
    wg.wait();
  });
  EXPECT_EQ(ran.load(), kGoroutines);
  constexpr std::uint64_t kSlab = stage2::StackPool::kStacksPerSlab;
  // Main's stack, the P's cache (StackCache::kMax): within two slabs.
  EXPECT_LE(mapped_while_queued, 2 * kSlab);
  EXPECT_LE(rt.stats().stacks_mapped, 2 * kSlab);
}

// Goroutines started one after another on one P: each dead goroutine's G
// (gfput/gfget) and stack (the P's stack cache) serve the next, so a
// thousand goroutines take a few Gs and one batch of stacks.
TYPED_TEST_P(GmpSuite, ADeadGoroutineServesTheNext) {
  using Api = TypeParam;
  constexpr int kGoroutines = 1000;
  typename TestFixture::Runtime rt(this->config(1));
  rt.run([&] {
    for (int i = 0; i < kGoroutines; ++i) {
      typename Api::WaitGroup wg;
      wg.add(1);
      Api::go([&] { wg.done(); });
      wg.wait();
    }
  });
  const auto s = rt.stats();
  // Only the first go() found no dead G (the one before it may still be
  // on its way out when the next go() runs: at most a few more).
  EXPECT_GE(s.gs_reused, static_cast<std::uint64_t>(kGoroutines - 8));
  EXPECT_LE(s.stack_refills, 2u);  // main's first run, and one for them
  EXPECT_LE(s.stacks_mapped, stage2::StackPool::kStacksPerSlab);
}

// Go's Gosched puts the goroutine on the GRQ's tail: every goroutine
// waiting there runs before it runs again. main, on one P, starts more
// goroutines than its P's queue holds (the rest overflow to the GRQ), then
// yields until all have run: twice at most (once behind its P's queue,
// once behind the GRQ). Kept on its P's queue, a lone yielder would run
// again at once, the GRQ one turn in 61: tens of thousands of yields.
TYPED_TEST_P(GmpSuite, AYielderRunsAgainAfterTheGlobalQueue) {
  using Api = TypeParam;
  typename TestFixture::Runtime rt(this->config(1));
  constexpr int kGoroutines = 2000;  // 256 in the P's queue, the rest GRQ
  std::atomic<int> ran{0};
  int yields = 0;
  rt.run([&] {
    for (int i = 0; i < kGoroutines; ++i) {
      Api::go([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
    }
    while (ran.load(std::memory_order_relaxed) < kGoroutines) {
      Api::yield();
      ++yields;
    }
  });
  EXPECT_EQ(ran.load(), kGoroutines);
  EXPECT_LE(yields, 2);
}

// Go's LockOSThreadTemplateThreadRace (runtime/testdata/testprog), with
// more goroutines: one goroutine stops the world in a loop (here by
// changing GOMAXPROCS, which yields after each change) while 100
// goroutines each start 300 goroutines, lock their thread, yield and end
// locked (each end takes its thread, each hand-off of its P makes one, by
// the template thread). All run, and on 1 P the looping one changed
// GOMAXPROCS fewer times than there are goroutines: it yields to them.
// Were its yield kept on its P's queue, it would run again 60 times in 61
// while 30,000 goroutines wait in the GRQ.
TYPED_TEST_P(GmpSuite, LockedGoroutinesEndWhileTheWorldStopsInALoop) {
  using Api = TypeParam;
  constexpr int kLockers = 100;
  constexpr int kEach = 300;
  for (int procs : {1, 2, 4}) {
    typename TestFixture::Runtime rt(this->config(procs));
    std::atomic<int> ran{0};
    std::atomic<int> locked_ran{0};
    std::atomic<int> changes{0};
    rt.run([&] {
      std::atomic<bool> stop{false};
      typename Api::WaitGroup stopper;
      stopper.add(1);
      Api::go([&] {
        for (int i = 0; !stop.load(); ++i) {
          Api::gomaxprocs(i % 2 == 0 ? procs + 1 : procs);
          changes.fetch_add(1, std::memory_order_relaxed);
        }
        stopper.done();
      });
      typename Api::WaitGroup wg;
      wg.add(kLockers);
      for (int i = 0; i < kLockers; ++i) {
        Api::go([&] {
          for (int k = 0; k < kEach; ++k) {
            Api::go([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
          }
          Api::lock_os_thread();
          Api::yield();
          locked_ran.fetch_add(1, std::memory_order_relaxed);
          wg.done();
        });
      }
      wg.wait();
      stop.store(true);
      stopper.wait();
      while (ran.load() < kLockers * kEach) Api::yield();
    });
    EXPECT_EQ(locked_ran.load(), kLockers) << procs << " Ps";
    EXPECT_EQ(ran.load(), kLockers * kEach) << procs << " Ps";
    // With more than one P, each stop waits for other Ms to wake, and how
    // many changes fit meanwhile depends on the machine: the count says
    // little there.
    if (procs == 1) {
      EXPECT_LT(changes.load(), kLockers * kEach) << procs << " Ps";
    }
  }
}

REGISTER_TYPED_TEST_SUITE_P(GmpSuite, GoroutineParallelism,
                            ASleeperRunsWhileGoroutinesStopTheWorld,
                            AStopOfTheWorldStopsALoopOfRuntimeCalls,
                            ATimerOnABusyPFiresOnAnother,
                            TimersOfRemovedPsMoveToAP,
                            QueuedGoroutinesHoldNoStack,
                            ADeadGoroutineServesTheNext,
                            AYielderRunsAgainAfterTheGlobalQueue,
                            LockedGoroutinesEndWhileTheWorldStopsInALoop);

// The reports that list goroutines name the P each last ran on, on every
// G-M-P stage (g_with_p.h): "last ran on M 0, P 1" (stage 2's name the M
// only, having no Ps).
template <class Api>
class GmpDeathTest : public ::testing::Test {
 protected:
  // Runs `main` on a runtime of 2 Ps, with goroutine 2 waiting forever on
  // a channel: each report lists it.
  template <class F>
  static void run_with_a_waiter(F main) {
    typename Api::Config c;
    c.procs = 2;
    c.debug = "";
    typename Api::Runtime rt(c);
    rt.run([main, &rt] {
      typename Api::template Chan<int> never;
      Api::go([&never] { (void)never.recv(); });
      while (rt.stats().goroutines_blocked < 1) {  // until it waits
        Api::sleep_for(std::chrono::microseconds(20));
      }
      main();
      (void)never.recv();
    });
  }
};

TYPED_TEST_SUITE_P(GmpDeathTest);

TYPED_TEST_P(GmpDeathTest, TheDeadlockReportNamesEachGoroutinesP) {
  EXPECT_EXIT(this->run_with_a_waiter([] {}), ::testing::ExitedWithCode(2),
              "all goroutines are asleep - deadlock!\n\n"
              "goroutine 1 \\[chan receive, [0-9]+ ms\\]:\n"
              "\tlast ran on M [0-9]+, P [0-9]+\n[^\n]*\n\n"
              "goroutine 2 \\[chan receive, [0-9]+ ms\\]:\n"
              "\tlast ran on M [0-9]+, P [0-9]+\n");
}

TYPED_TEST_P(GmpDeathTest, TheSigquitDumpNamesEachGoroutinesP) {
  EXPECT_EXIT(this->run_with_a_waiter([] {
                ::raise(SIGQUIT);
                TypeParam::sleep_for(std::chrono::seconds(60));  // it ends us
              }),
              ::testing::ExitedWithCode(2),
              "SIGQUIT: quit\n\n"
              "goroutine 1 \\[[^\n]+\\]:\n"
              "\tlast ran on M [0-9]+, P [0-9]+\n[^\n]*\n\n"
              "goroutine 2 \\[chan receive, [0-9]+ ms\\]:\n"
              "\tlast ran on M [0-9]+, P [0-9]+\n");
}

TYPED_TEST_P(GmpDeathTest, AFaultReportNamesTheGoroutinesP) {
  // A page nobody may touch: a fault in every build, sanitizers included.
  void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  EXPECT_EXIT(this->run_with_a_waiter([page] {
                *static_cast<volatile int*>(page) = 1;
              }),
              ::testing::ExitedWithCode(2),
              "fatal error: fault\n[^\n]*\n\n"
              "goroutine 1 \\[running\\]:\n"
              "\tlast ran on M [0-9]+, P [0-9]+\n");
  ::munmap(page, 4096);
}

REGISTER_TYPED_TEST_SUITE_P(GmpDeathTest,
                            TheDeadlockReportNamesEachGoroutinesP,
                            TheSigquitDumpNamesEachGoroutinesP,
                            AFaultReportNamesTheGoroutinesP);

}  // namespace gmp::stage3
