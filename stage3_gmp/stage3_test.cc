// Stage 3's tests: the behaviour every stage must have (testing/), then
// what stage 3 adds: fairness, stealing, no lost wake-ups, GOMAXPROCS
// changes, and the schedtrace format.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "stage3_gmp/api.h"
#include "stage3_gmp/gmp_suite.h"
#include "testing/api_death_suite.h"
#include "testing/api_suite.h"
#include "testing/context_suite.h"
#include "testing/lock_os_thread_suite.h"
#include "testing/select_suite.h"
#include "testing/time_suite.h"
#include "testing/helpers.h"

namespace gmp::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(Stage3, ApiSuite, stage3::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage3, SelectSuite, stage3::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage3, TimeSuite, stage3::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage3, ContextSuite, stage3::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage3, LockOSThreadSuite, stage3::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage3, LockOSThreadDeathTest, stage3::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage3, SelectDeathTest, stage3::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage3, ApiDeathTest, stage3::Api);

}  // namespace gmp::testing

namespace gmp::stage3 {

INSTANTIATE_TYPED_TEST_SUITE_P(Stage3, GmpSuite, stage3::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage3, GmpDeathTest, stage3::Api);

}  // namespace gmp::stage3

namespace gmp::stage3 {
namespace {

using Clock = std::chrono::steady_clock;

Config procs(int n) {
  Config c;
  c.procs = n;
  c.debug = "";  // no schedtrace, whatever GMP_DEBUG says
  return c;
}

// What a goroutine that has not run yet costs from this stage on: its G
// alone (its stack comes when it first runs). Printed for the course
// text, which quotes the bounds checked here (docs/course/stage3.md); a
// larger struct is a change the text must follow.
TEST(Stage3Test, SizesOfTheSchedulersObjects) {
  std::printf("sizeof: G %zu, P %zu, M %zu, Sudog %zu bytes\n",
              sizeof(stage2::G), sizeof(P), sizeof(M),
              sizeof(Sudog<stage2::G*>));
  EXPECT_LE(sizeof(stage2::G), 512u) << "a queued goroutine's whole cost";
  EXPECT_LE(sizeof(Sudog<stage2::G*>), 128u) << "one per channel wait";
}

// Fairness (the 61-tick rule): goroutines that overflowed to the GRQ run
// even though the local queue is never empty. Without the rule they would
// wait until the busy goroutines stop (here: until they give up, 10 s).
TEST(Stage3Test, TheGlobalQueueRunsWhileTheLocalQueueStaysBusy) {
  constexpr int kBusy = 4, kMarkers = 300;  // > 256: the queue overflows
  std::atomic<int> markers_run{0};
  std::atomic<bool> gave_up{false};
  auto deadline = Clock::now() + std::chrono::seconds(10);
  Runtime rt(procs(1));
  rt.run([&] {
    WaitGroup wg;
    wg.add(kBusy);
    for (int b = 0; b < kBusy; ++b) {
      go([&] {  // always runnable: the local queue is never empty
        while (markers_run.load() < kMarkers) {
          if (Clock::now() > deadline) {
            gave_up.store(true);
            break;
          }
          yield();
        }
        wg.done();
      });
    }
    for (int i = 0; i < kMarkers; ++i) go([&] { markers_run.fetch_add(1); });
    wg.wait();
  });
  EXPECT_FALSE(gave_up.load()) << "goroutines in the GRQ starved";
  EXPECT_EQ(markers_run.load(), kMarkers);
  Stats s = rt.stats();
  EXPECT_GE(s.runq_overflows, 1u);
  EXPECT_GE(s.grq_takes, 1u);
}

// What the 61-tick rule does not do: two goroutines readying each other
// through runnext share one time slice (execute does not advance the
// schedtick for a runnext goroutine), so the 61st tick never comes, and
// runqget takes runnext before the queue. 100,000 hand-offs later not one
// of the goroutines queued on the P or in the GRQ has run; they run when
// the chain ends. (The last stage's sysmon preempts such a chain after
// 10 ms: stage5_test.cc, RunnextChainsShareOneSliceAndArePreempted.)
TEST(Stage3Test, ARunnextChainStarvesTheLocalQueueAndTheGrq) {
  constexpr int kMarkers = 300;  // > 256: some overflow to the GRQ
  constexpr int kHandOffs = 100'000;
  std::atomic<int> markers_run{0};
  int run_during_chain = -1;
  Runtime rt(procs(1));
  rt.run([&] {
    WaitGroup wg;
    wg.add(kMarkers + 1);
    for (int i = 0; i < kMarkers; ++i) {
      go([&] {
        markers_run.fetch_add(1);
        wg.done();
      });
    }
    Chan<int> a, b;
    go([&] {  // main's partner: each hand-off readies the other as runnext
      while (std::optional<int> v = a.recv()) b.send(*v + 1);
      wg.done();
    });
    int v = 0;
    for (int i = 0; i < kHandOffs; ++i) {
      a.send(v);
      v = *b.recv();
    }
    run_during_chain = markers_run.load();
    a.close();
    wg.wait();
  });
  EXPECT_EQ(run_during_chain, 0) << "the chain let queued goroutines run";
  EXPECT_EQ(markers_run.load(), kMarkers);  // once the chain ended
  Stats s = rt.stats();
  EXPECT_GE(s.runq_overflows, 1u);  // the GRQ did hold some
  EXPECT_GE(s.runnext_hits, static_cast<std::uint64_t>(2 * kHandOffs));
}

// One P loaded, the other idle: the idle one steals from it. Every
// goroutine starts on main's P and, once running, holds its P (it makes no
// call into the runtime) until goroutines have run on both Ps: so the
// first one to run keeps main's P, and the others can only run if the
// idle P's M steals them. (Busy for a fixed time instead, the loaded P
// could run all of them before a loaded machine gave the other M a CPU:
// nothing left to steal.) A runtime that never steals would hold them
// forever: after 10 s they give up, and the test fails saying so.
TEST(Stage3Test, AnIdlePStealsFromALoadedOne) {
  constexpr int kGoroutines = 64;
  std::vector<std::atomic<int>> ran_on(kGoroutines);
  std::atomic<unsigned> ps_seen{0};  // bit i: a goroutine ran on P i
  Runtime rt(procs(2));
  rt.run([&] {
    WaitGroup wg;
    wg.add(kGoroutines);
    for (int i = 0; i < kGoroutines; ++i) {
      go([&, i] {  // all start on main's P
        int p = getm()->p->id;
        ran_on[i].store(p);
        ps_seen.fetch_or(1u << p);
        auto give_up =
            std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (ps_seen.load() != 0b11 &&
               std::chrono::steady_clock::now() < give_up) {
          std::this_thread::yield();  // the thread's, not the goroutine's
        }
        wg.done();
      });
    }
    wg.wait();
  });
  std::set<int> ps;
  for (auto& p : ran_on) ps.insert(p.load());
  EXPECT_EQ(ps.size(), 2u) << "all goroutines ran on one P (for 10 s the "
                              "idle P stole none of them: is steal broken?)";
  Stats s = rt.stats();
  EXPECT_GE(s.steals, 1u);
  EXPECT_GE(s.stolen, s.steals);
  EXPECT_GE(s.steal_attempts, s.steals);
}

// No lost wake-ups: a goroutine made runnable while every M is parking or
// parked always runs. Many rounds with random timing; a lost one would
// hang the round (bounded here) or trip checkdead's invariant check.
TEST(Stage3StressTest, AGoroutineReadiedWhileMsParkAlwaysRuns) {
  unsigned seed = static_cast<unsigned>(
      ::testing::UnitTest::GetInstance()->random_seed());
  std::mt19937 rng(seed + 17);
  for (int round = 0; round < 200; ++round) {
    int nprocs = 1 + static_cast<int>(rng() % 4);
    auto pause = std::chrono::microseconds(rng() % 200);
    std::atomic<int> ran{0};
    Runtime rt(procs(nprocs));
    rt.run([&] {
      Chan<int> ch;
      WaitGroup wg;
      wg.add(3);
      for (int g = 0; g < 3; ++g) {
        go([&, pause] {
          sleep_for(pause);      // every M may park meanwhile
          ch.send(1);            // readies main, or parks
          ran.fetch_add(1);
          wg.done();
        });
      }
      for (int g = 0; g < 3; ++g) (void)ch.recv();
      wg.wait();
    });
    ASSERT_EQ(ran.load(), 3) << "round " << round;
  }
}

// GOMAXPROCS changes while goroutines run: the world stops, Ps come and
// go, and no goroutine is lost or run twice.
TEST(Stage3Test, GomaxprocsChangesWhileRunningLoseNothing) {
  constexpr int kGoroutines = 2000;
  std::vector<std::atomic<int>> runs(kGoroutines);
  std::vector<int> seen;
  Runtime rt(procs(4));
  rt.run([&] {
    WaitGroup wg;
    wg.add(kGoroutines);
    for (int i = 0; i < kGoroutines; ++i) {
      go([&, i] {
        yield();
        runs[i].fetch_add(1);
        wg.done();
      });
      if (i == 500) seen.push_back(gomaxprocs(1));   // 4 -> 1
      if (i == 1000) seen.push_back(gomaxprocs(3));  // 1 -> 3
      if (i == 1500) seen.push_back(gomaxprocs(2));  // 3 -> 2
    }
    wg.wait();
    seen.push_back(gomaxprocs());
  });
  EXPECT_EQ(seen, (std::vector<int>{4, 1, 3, 2}));
  for (int i = 0; i < kGoroutines; ++i) ASSERT_EQ(runs[i].load(), 1) << i;
  Stats s = rt.stats();
  EXPECT_EQ(s.stw_pauses, 3u);
  EXPECT_GT(s.stw_max_pause_ns, 0u);
  EXPECT_TRUE(gmp::testing::conserved(s));
}

// As Go's runtime.GOMAXPROCS: n <= 0 only asks, a value above the
// maximum is capped.
TEST(Stage3Test, GomaxprocsTreatsOutOfRangeValuesAsGoDoes) {
  Runtime rt(procs(2));
  rt.run([&] {
    EXPECT_EQ(gomaxprocs(-1), 2);
    EXPECT_EQ(gomaxprocs(0), 2);
    EXPECT_EQ(gomaxprocs(kMaxProcs + 1), 2);  // the old value ...
    EXPECT_EQ(gomaxprocs(), kMaxProcs);       // ... and now the cap
    EXPECT_EQ(gomaxprocs(2), kMaxProcs);
  });
  EXPECT_THROW(gomaxprocs(2), UsageError);  // not from a plain thread
}

// Two goroutines changing GOMAXPROCS at once, and main returning while one
// does: stops of the world queue behind each other instead of deadlocking.
TEST(Stage3Test, ConcurrentStopsOfTheWorldTakeTurns) {
  // Small: each stop waits for every M to be scheduled by the OS, which
  // takes long on a loaded machine (tests run in parallel).
  for (int round = 0; round < 3; ++round) {
    Runtime rt(procs(2));
    rt.run([] {
      WaitGroup wg;
      wg.add(2);
      for (int k = 0; k < 2; ++k) {
        go([&wg, k] {
          for (int i = 0; i < 10; ++i) gomaxprocs(2 + (i + k) % 3);
          wg.done();
        });
      }
      wg.wait();
      std::atomic<bool> started{false};
      go([&started] {  // still changing GOMAXPROCS when main returns
        started.store(true);
        for (int i = 0;; ++i) gomaxprocs(1 + i % 3);  // until Goexit
      });
      while (!started.load()) yield();
    });
    EXPECT_GT(rt.stats().stw_pauses, 0u);  // some calls keep the value
  }
}

// A runtime used for many runs keeps starting Ms: nothing (a spinning
// count, goroutine ids) leaks from one run into the next.
TEST(Stage3Test, ManyRunsOfOneRuntimeStayIndependent) {
  Runtime rt(procs(2));
  for (int round = 0; round < 300; ++round) {
    std::vector<std::uint64_t> ids;
    Mutex mu;
    rt.run([&] {
      WaitGroup wg;
      wg.add(20);
      for (int i = 0; i < 20; ++i) {
        go([&] {
          std::lock_guard lk(mu);
          ids.push_back(Sched::current_g("test")->goid);
          wg.done();
        });
      }
      wg.wait();
    });
    std::sort(ids.begin(), ids.end());
    ASSERT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end())
        << "a goroutine id repeats in round " << round;
  }
  // After all those runs, a goroutine that needs a second M still gets one:
  // main busy-waits for it without ever yielding its P.
  std::atomic<bool> ran{false};
  auto give_up = Clock::now() + std::chrono::seconds(10);
  rt.run([&] {
    go([&] { ran.store(true); });
    while (!ran.load() && Clock::now() < give_up) {
    }
  });
  EXPECT_TRUE(ran.load()) << "no second M was started";
}

// Timer duty passes on when the M holding it is woken for other work:
// a sleeper wakes while every other M is busy (bound: 10 s; it takes 30 ms).
TEST(Stage3Test, SleepersWakeWhenTheTimerMGoesToWork) {
  using std::chrono::milliseconds;
  for (int round = 0; round < 5; ++round) {
    std::atomic<bool> woke{false}, gave_up{false};
    auto give_up = Clock::now() + std::chrono::seconds(10);
    auto busy_until_woken = [&] {
      while (!woke.load()) {
        if (Clock::now() > give_up) {
          gave_up.store(true);
          return;
        }
      }
    };
    Runtime rt(procs(3));
    rt.run([&] {
      WaitGroup wg;
      wg.add(2);
      go([&] {  // its M may be the timer M, woken for this work
        sleep_for(milliseconds(10));
        busy_until_woken();
        wg.done();
      });
      go([&] {
        sleep_for(milliseconds(30));
        woke.store(true);
        wg.done();
      });
      busy_until_woken();
      wg.wait();
    });
    ASSERT_FALSE(gave_up.load()) << "round " << round;
  }
}

// ---- Stacks: taken at a goroutine's first run -----------------------------------

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// With the process out of memory mappings, goroutines blocked on a gate
// hold the stacks the first slab gave; the next goroutine's first run
// needs a new slab. go() returned long before, so the error cannot reach
// it: as in Go (where a stack that cannot be had is "out of memory"), the
// program ends with the reason (stage 2, which allocates at go(), throws
// there instead: Stage2DeathTest.RunningOutOfMappingsIsReportedAndLosesNothing).
void exhaust_memory_mappings_at_first_run() {
  Runtime rt(procs(1));
  rt.run([] {
    Chan<int> gate;
    go([&] { (void)gate.recv(); });  // maps the first slab
    yield();
    std::vector<void*> maps = testing::use_up_memory_mappings();
    for (std::size_t i = 0; i <= stage2::StackPool::kStacksPerSlab; ++i) {
      go([&] { (void)gate.recv(); });
    }
    yield();  // they run, and one of them finds no stack
    testing::release_memory_mappings(maps);
    gate.close();
  });
  _exit(0);
}

TEST(Stage3DeathTest, NoStackForAGoroutinesFirstRunIsAFatalError) {
  EXPECT_EXIT(exhaust_memory_mappings_at_first_run(),
              ::testing::ExitedWithCode(2),
              "fatal error: go: cannot allocate a goroutine stack \\([0-9]+ "
              "bytes and a guard\\): the process has [0-9]+ memory "
              "mappings, the kernel's limit \\(vm.max_map_count = [0-9]+\\)"
              ".*\\(for goroutine [0-9]+'s first run: from stage 3 a "
              "goroutine gets its stack then\\)");
}
#endif

// ---- schedtrace ---------------------------------------------------------------

// dump_goroutines reads the P of `first` from stage 3's GWithP, which only
// this runtime's Gs are: another's G (here a plain stage 2 G, which has no
// P field to read: AddressSanitizer's stack-buffer-overflow before) is
// left out of the dump, not read past its end.
TEST(Stage3Test, DumpGoroutinesLeavesOutAnotherRuntimesFirst) {
  Runtime rt(procs(1));
  stage2::G foreign;
  foreign.goid = 77;
  foreign.atomicstatus = GStatus::kWaiting;
  std::string dump;
  rt.run([&] { dump = rt.dump_goroutines(&foreign); });
  EXPECT_EQ(dump.find("goroutine 77"), std::string::npos) << dump;
  EXPECT_NE(dump.find("goroutine 1 [running]:\n\tlast ran on M 0, P 0\n"),
            std::string::npos)
      << dump;
}

TEST(Stage3Test, SchedtraceLinesHaveGosFormat) {
  Runtime rt(procs(2));
  std::string summary, detail;
  rt.run([&] {
    Chan<int> ch;
    go([&] { (void)ch.recv(); });
    gmp::testing::wait_until_blocked<Api>(rt, 1);
    summary = rt.schedtrace(false);
    detail = rt.schedtrace(true);
    ch.send(1);
  });
  EXPECT_TRUE(std::regex_match(
      summary,
      std::regex("SCHED [0-9]+ms: gomaxprocs=2 idleprocs=[0-9]+ threads=[0-9]+ "
                 "spinningthreads=[0-9]+ idlethreads=[0-9]+ runqueue=[0-9]+ "
                 "\\[[0-9]+ [0-9]+\\]\n")))
      << summary;
  std::regex lines(
      "SCHED [0-9]+ms: gomaxprocs=2 .* gcwaiting=0 nmidlelocked=0 "
      "stopwait=[0-9]+ sysmonwait=0\n"
      "(  P[0-9]+: status=[0-9] schedtick=[0-9]+ syscalltick=0 m=([0-9]+|nil) "
      "runqsize=[0-9]+ gfreecnt=[0-9]+ timerslen=0\n){2}"
      "(  M[0-9]+: p=([0-9]+|nil) curg=([0-9]+|nil) mallocing=0 throwing=0 "
      "preemptoff= locks=0 dying=0 spinning=(true|false) "
      "blocked=(true|false) lockedg=nil\n)+"
      "(  G[0-9]+: status=[0-9]\\([a-z .A-Z]*\\) m=([0-9]+|nil) "
      "lockedm=nil\n)+");
  EXPECT_TRUE(std::regex_match(detail, lines)) << detail;
  EXPECT_NE(detail.find("status=4(chan receive)"), std::string::npos)
      << detail;
}

TEST(Stage3Test, GmpDebugPrintsSchedtraceEveryPeriod) {
  Config c = procs(2);
  c.debug = "schedtrace=5";
  Runtime rt(c);
  ::testing::internal::CaptureStderr();
  rt.run([] { sleep_for(std::chrono::milliseconds(60)); });
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("SCHED "), std::string::npos) << err;
  EXPECT_NE(err.find("gomaxprocs=2"), std::string::npos) << err;
}

}  // namespace
}  // namespace gmp::stage3
