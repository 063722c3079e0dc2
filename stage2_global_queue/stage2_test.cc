// Stage 2's tests: the behaviour every stage must have (testing/), then
// what stage 2 adds: stacks (overflow, reuse, exhaustion), 100,000 parked
// goroutines, migration between Ms, and the global lock's counters.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <string>
#include <chrono>
#include <system_error>
#include <thread>
#include <vector>

#include "stage2_global_queue/api.h"
#include "stage2_global_queue/m.h"
#include "stage2_global_queue/tls.h"
#include "testing/api_death_suite.h"
#include "testing/api_suite.h"
#include "testing/context_suite.h"
#include "testing/lock_os_thread_suite.h"
#include "testing/select_suite.h"
#include "testing/time_suite.h"
#include "testing/helpers.h"

namespace gmp::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(Stage2, ApiSuite, stage2::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage2, SelectSuite, stage2::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage2, TimeSuite, stage2::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage2, ContextSuite, stage2::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage2, LockOSThreadSuite, stage2::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage2, LockOSThreadDeathTest, stage2::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage2, SelectDeathTest, stage2::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage2, ApiDeathTest, stage2::Api);

}  // namespace gmp::testing

namespace gmp::stage2 {
namespace {

using gmp::testing::wait_until_blocked;

Config procs(int n) {
  Config c;
  c.procs = n;
  return c;
}

#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer counts every goroutine (a fiber) as a thread, and dies
// past 8128 of them alive at once.
constexpr int kManyGoroutines = 4'000;
#else
constexpr int kManyGoroutines = 100'000;
#endif

// What stage 1 cannot do: 100,000 goroutines blocked at once, on 2 Ms.
// Go's LockOSThread panics past 2^32 - 1 nested locks, changing nothing
// (the count cannot get there in a test run: set on an M directly).
TEST(Stage2Test, LockOSThreadNestingOverflowPanicsAsGo) {
  MCore m;
  G g;
  m.curg = &g;
  m.locked_ext = UINT32_MAX;
  try {
    m.lock_os_thread();
    ADD_FAILURE() << "no panic";
  } catch (const Panic& p) {
    EXPECT_STREQ(p.what(), "LockOSThread nesting overflow");
  }
  EXPECT_EQ(m.locked_ext, UINT32_MAX);
  EXPECT_EQ(m.lockedg, nullptr);
  m.locked_ext = 1;
  m.lockedg = &g;
  g.lockedm = &m;
  m.unlock_os_thread();
  EXPECT_EQ(m.locked_ext, 0u);
  EXPECT_EQ(g.lockedm, nullptr);
}

TEST(Stage2Test, HundredThousandGoroutinesParkOnOneChannel) {
  Runtime rt(procs(2));
  rt.run([&] {
    Chan<int> ch;
    WaitGroup wg;
    wg.add(kManyGoroutines);
    for (int i = 0; i < kManyGoroutines; ++i) {
      go([&] {
        (void)ch.recv();
        wg.done();
      });
    }
    wait_until_blocked<Api>(rt, kManyGoroutines);
    ch.close();  // wakes all of them
    wg.wait();
  });
  Stats s = rt.stats();
  EXPECT_EQ(s.threads_created, 2u);
  EXPECT_EQ(s.goroutines_finished, kManyGoroutines + 1u);
  EXPECT_GE(s.stacks_mapped, static_cast<std::uint64_t>(kManyGoroutines));
}

TEST(Stage2Test, DeadGoroutinesStacksAreReused) {
  constexpr int kRounds = 20, kPerRound = 500;
  Runtime rt(procs(2));
  rt.run([&] {
    for (int r = 0; r < kRounds; ++r) {
      WaitGroup wg;
      wg.add(kPerRound);
      for (int i = 0; i < kPerRound; ++i) go([&] { wg.done(); });
      wg.wait();
    }
  });
  Stats s = rt.stats();
  EXPECT_EQ(s.goroutines_created, 1u + kRounds * kPerRound);
  // At most two rounds' worth alive at once (a round's goroutines may not
  // be dead yet when the next starts), rounded up to whole slabs.
  EXPECT_LE(s.stacks_mapped, 2u * kPerRound + 2 * StackPool::kStacksPerSlab);
}

// The TLS hazard (tls.h): a goroutine that parks may resume on another M;
// getm() must then return that M, never the one it left.
TEST(Stage2Test, GoroutinesMoveBetweenMsAndAlwaysSeeTheirOwnM) {
  constexpr int kGoroutines = 8;
  std::atomic<int> moves{0}, wrong{0};
  // Until 50 moves are seen: how soon depends on when the kernel runs the
  // other Ms (late on a loaded machine); 10 s is only a give-up bound.
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  Runtime rt(procs(4));
  rt.run([&] {
    WaitGroup wg;
    wg.add(kGoroutines);
    for (int g = 0; g < kGoroutines; ++g) {
      go([&] {
        G* self = Sched::current_g("test");
        int last = getm()->id;
        while (moves.load() < 50 && std::chrono::steady_clock::now() < give_up) {
          yield();
          M* m = getm();
          if (m->curg != self) wrong.fetch_add(1);
          if (m->id != last) {
            moves.fetch_add(1);
            last = m->id;
          }
        }
        wg.done();
      });
    }
    wg.wait();
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE(moves.load(), 1) << "no goroutine ever resumed on another M";
}

// A sleeper must wake even when the M on timer duty is handed other work
// and every other M is busy. (Bound: give up after 10 s; it takes 50 ms.)
TEST(Stage2Test, ASleeperWakesWhileEveryOtherMIsBusy) {
  using std::chrono::milliseconds;
  std::atomic<bool> woke{false}, gave_up{false};
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto busy_until_woken = [&] {
    while (!woke.load()) {
      if (std::chrono::steady_clock::now() > give_up) {
        gave_up.store(true);  // the sleeper did not wake while Ms were busy
        return;
      }
    }
  };
  Runtime rt(procs(3));
  rt.run([&] {
    WaitGroup wg;
    wg.add(2);
    go([&] {  // the sleeper: its M goes idle on timer duty
      sleep_for(milliseconds(50));
      woke.store(true);
      wg.done();
    });
    std::this_thread::sleep_for(milliseconds(10));  // main keeps its M busy
    go([&] {  // wakes an idle M, likely the one on timer duty, for work
      busy_until_woken();
      wg.done();
    });
    busy_until_woken();
    wg.wait();
  });
  EXPECT_FALSE(gave_up.load()) << "the sleeper's timer was not run";
}

TEST(Stage2Test, TheGlobalLockCountsItsContention) {
  Runtime rt(procs(4));
  rt.run([&] {
    WaitGroup wg;
    wg.add(4);
    for (int g = 0; g < 4; ++g) {
      go([&] {
        for (int i = 0; i < 2000; ++i) yield();  // each one takes the lock
        wg.done();
      });
    }
    wg.wait();
  });
  LockCounters c = rt.stats().sched_lock;
  EXPECT_GE(c.acquisitions, 4u * 2000);
  EXPECT_LE(c.contended, c.acquisitions);
  EXPECT_EQ(c.contended == 0, c.wait_ns == 0);
}

TEST(Stage2Test, ConfigRejectsBadStackSizes) {
  for (std::size_t bad : {std::size_t{0}, std::size_t{4096},
                          kDefaultStackSize + 1, kMaxStackSize * 2}) {
    Config c;
    c.stack_size = bad;
    try {
      Runtime rt(c);
      ADD_FAILURE() << "stack_size " << bad << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("stack_size = " +
                                           std::to_string(bad)),
                std::string::npos)
          << e.what();
    }
  }
}

// ---- Deaths ------------------------------------------------------------------

// Recurses `depth` levels; a depth larger than any stack overflows it.
[[gnu::noinline]] int recurse(int depth) {
  volatile char frame[512];
  frame[0] = static_cast<char>(depth);
  if (depth == 0) return frame[0];
  return recurse(depth - 1) + frame[0];
}

void overflow_a_goroutine() {
  Runtime rt(procs(1));
  rt.run([] {
    WaitGroup wg;
    wg.add(1);
    go([&] {
      volatile int depth = 1 << 30;
      recurse(depth);
      wg.done();
    });
    wg.wait();
  });
}

TEST(Stage2DeathTest, StackOverflowIsReportedNotSilent) {
  EXPECT_EXIT(overflow_a_goroutine(), ::testing::ExitedWithCode(2),
              "fatal error: goroutine 2 stack overflow\n\\(it used all of its "
              "[0-9]+-byte stack");
}

// One frame larger than the whole stack: without -fstack-clash-protection
// (set in .bazelrc) its first access would land below the guard page, in
// whatever lies there; with it, the frame's pages are probed from the top
// and the probe faults in the guard.
[[gnu::noinline]] int touch_a_huge_frame() {
  volatile char frame[256 * 1024];
  frame[0] = 1;
  return frame[0];
}

void overflow_with_one_big_frame() {
  Runtime rt(procs(1));
  rt.run([] {
    WaitGroup wg;
    wg.add(1);
    go([&] {
      touch_a_huge_frame();
      wg.done();
    });
    wg.wait();
  });
}

TEST(Stage2DeathTest, AFrameBiggerThanTheStackStillHitsTheGuard) {
  EXPECT_EXIT(overflow_with_one_big_frame(), ::testing::ExitedWithCode(2),
              "fatal error: goroutine 2 stack overflow");
}

TEST(Stage2DeathTest, OverflowIsCaughtByMprotectGuardsToo) {
  auto with_old_style_guards = [] {
    StackPool::use_mprotect_guards();  // as on a kernel before 6.13
    overflow_a_goroutine();
  };
  EXPECT_EXIT(with_old_style_guards(), ::testing::ExitedWithCode(2),
              "fatal error: goroutine 2 stack overflow");
}

long count_mappings() {
  FILE* f = std::fopen("/proc/self/maps", "r");
  long n = 0;
  for (int c; (c = std::fgetc(f)) != EOF;) n += c == '\n';
  std::fclose(f);
  return n;
}

// What the guard costs in kernel mappings (vm.max_map_count): two per
// stack with mprotect, almost nothing with guard regions.
void count_mappings_of_one_slab(bool mprotect_guards) {
  if (mprotect_guards) StackPool::use_mprotect_guards();
  StackPool pool(64 * 1024);
  std::vector<Stack> stacks;
  long before = count_mappings();
  for (std::size_t i = 0; i < StackPool::kStacksPerSlab; ++i) {
    stacks.push_back(pool.alloc());
  }
  long added = count_mappings() - before;
  for (Stack s : stacks) pool.free(s);
  // Guard regions: the slab's one mapping, plus a few a sanitizer may add
  // for its shadow memory; far below two per stack either way.
  bool expected = mprotect_guards
                      ? added >= 2 * long{StackPool::kStacksPerSlab} - 1
                      : added < 16 || !StackPool::guard_regions_supported();
  std::fprintf(stderr, "mappings added: %ld\n", added);
  _exit(expected ? 0 : 3);
}

// Whether the page at `addr` is in memory (mincore), without touching it.
bool resident(void* addr) {
  unsigned char v = 0;
  EXPECT_EQ(mincore(addr, 1, &v), 0);
  return (v & 1) != 0;
}

TEST(Stage2Test, ANewStacksTopPageIsAlreadyInMemory) {
  StackPool pool(64 * 1024);
  Stack s = pool.alloc();  // a new slab: nothing has written to it
  const long page = sysconf(_SC_PAGESIZE);
  char* top = static_cast<char*>(s.lo) + s.size - page;
  if (StackPool::populates_tops()) {
    EXPECT_TRUE(resident(top));  // faulted in by the pool
    EXPECT_FALSE(resident(top - page));  // only that one (MAP_NORESERVE)
  } else {
    EXPECT_FALSE(resident(top));  // a kernel before 5.14: the first write
  }
  pool.free(s);
}

TEST(Stage2DeathTest, GuardRegionsSaveMappingsWhereTheKernelHasThem) {
  EXPECT_EXIT(count_mappings_of_one_slab(false), ::testing::ExitedWithCode(0),
              "mappings added");
  EXPECT_EXIT(count_mappings_of_one_slab(true), ::testing::ExitedWithCode(0),
              "mappings added");
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// With the process out of memory mappings, spawns goroutines until a new
// stack slab cannot be mapped: the error names the limit, and the
// goroutines already started still run to the end. (Not under sanitizers,
// which need mappings of their own.)
void exhaust_memory_mappings() {
  Runtime rt(procs(1));
  int started = 0;
  std::atomic<int> ran{0};
  bool failed = false;
  rt.run([&] {
    Chan<int> gate;
    WaitGroup wg;
    auto spawn = [&] {
      wg.add(1);
      go([&] {
        (void)gate.recv();
        ran.fetch_add(1);
        wg.done();
      });
      ++started;
    };
    spawn();  // maps the first slab of stacks
    std::vector<void*> maps = testing::use_up_memory_mappings();
    try {
      for (;;) spawn();  // the next slab needs a mapping
    } catch (const std::system_error& e) {
      wg.done();
      std::fprintf(stderr, "%s\n", e.what());
      failed = true;
    }
    testing::release_memory_mappings(maps);
    gate.close();
    wg.wait();
  });
  _exit(failed && started > 0 && ran.load() == started ? 0 : 3);
}

TEST(Stage2DeathTest, RunningOutOfMappingsIsReportedAndLosesNothing) {
  EXPECT_EXIT(exhaust_memory_mappings(), ::testing::ExitedWithCode(0),
              "go: cannot allocate a goroutine stack \\([0-9]+ bytes and a "
              "guard\\): the process has [0-9]+ memory mappings, the "
              "kernel's limit \\(vm.max_map_count = [0-9]+\\)");
}
#endif

}  // namespace
}  // namespace gmp::stage2
