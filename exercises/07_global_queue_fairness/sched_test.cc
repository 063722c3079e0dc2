// Exercise 07's tests: the batch formula, Go's order of sources, the
// 1-in-61 rule, and a seeded property: while the global queue has work, it
// is served at least once every 61 schedules.
#include "exercises/07_global_queue_fairness/sched.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "exercises/testing/harness.h"

namespace gmp::exercises::fairness {
namespace {

using Got = std::pair<G*, bool>;

// Goroutines that stay put for the whole test.
struct Pool {
  std::vector<std::unique_ptr<G>> all;
  G* make() {
    all.push_back(std::make_unique<G>());
    all.back()->id = static_cast<int>(all.size()) - 1;
    return all.back().get();
  }
};

TEST(Globrunqget, TakesLenOverProcsPlusOneWithinItsLimits) {
  struct Case {
    int len, procs, max, want;
  };
  for (Case c : {Case{100, 4, 0, 26}, Case{10, 1, 0, 10}, Case{1000, 1, 0, 128},
                 Case{1000, 8, 0, 126}, Case{100, 4, 1, 1}, Case{7, 2, 3, 3},
                 Case{1, 8, 0, 1}}) {
    SCOPED_TRACE(::testing::Message() << "len " << c.len << ", gomaxprocs "
                                      << c.procs << ", max " << c.max);
    Pool pool;
    Sched sched;
    sched.gomaxprocs = c.procs;
    for (int i = 0; i < c.len; ++i) sched.grq.push_back(pool.make());
    P pp;
    EXPECT_EQ(globrunqget(sched, pp, c.max), pool.all[0].get());
    EXPECT_EQ(pp.runq.size(), static_cast<std::size_t>(c.want - 1));
    EXPECT_EQ(sched.grq.size(), static_cast<std::size_t>(c.len - c.want));
  }
}

TEST(Globrunqget, KeepsTheGlobalOrderAndReturnsNullWhenEmpty) {
  Pool pool;
  Sched sched;
  for (int i = 0; i < 5; ++i) sched.grq.push_back(pool.make());
  P pp;
  EXPECT_EQ(globrunqget(sched, pp, 0), pool.all[0].get());
  ASSERT_EQ(pp.runq.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(pp.runq[i], pool.all[i + 1].get());
  EXPECT_EQ(globrunqget(sched, pp, 0), nullptr);
}

TEST(Pick, LocalWorkBeforeGlobalWork) {
  Pool pool;
  Sched sched;
  P pp;
  pp.schedtick = 1;
  G* local = pool.make();
  G* global = pool.make();
  runqput(pp, local, false);
  sched.grq.push_back(global);
  EXPECT_EQ(pick(sched, pp), Got(local, false));
  EXPECT_EQ(pick(sched, pp), Got(global, false)) << "then the global queue";
  EXPECT_EQ(pick(sched, pp), Got(nullptr, false));
}

TEST(Pick, EmptyLocalQueueTakesABatch) {
  Pool pool;
  Sched sched;
  sched.gomaxprocs = 2;
  for (int i = 0; i < 9; ++i) sched.grq.push_back(pool.make());
  P pp;
  pp.schedtick = 5;
  EXPECT_EQ(pick(sched, pp), Got(pool.all[0].get(), false));
  EXPECT_EQ(pp.runq.size(), 4u) << "9 / 2 + 1 = 5: one to run, 4 queued";
  EXPECT_EQ(sched.grq.size(), 4u);
}

TEST(Pick, Every61stScheduleLooksAtTheGlobalQueueFirst) {
  Pool pool;
  Sched sched;
  P pp;
  // At a multiple of 61 with nothing global, the local work still runs.
  pp.schedtick = 61;
  G* alone = pool.make();
  runqput(pp, alone, false);
  ASSERT_EQ(pick(sched, pp), Got(alone, false))
      << "tick 61, empty global queue: the local goroutine must run";
  pp.schedtick = 1;
  // Two goroutines that yield forever keep the local queue busy.
  runqput(pp, pool.make(), false);
  runqput(pp, pool.make(), false);
  G* waiting = pool.make();
  sched.grq.push_back(waiting);
  for (int i = 0; i < 200; ++i) {
    Got got = pick(sched, pp);
    ASSERT_NE(got.first, nullptr);
    std::uint32_t tick = pp.schedtick;
    execute(pp, got.second);
    if (got.first == waiting) {
      EXPECT_EQ(tick, 61u) << "the global goroutine runs at the 61st schedule";
      return;
    }
    ASSERT_LT(tick, 61u) << "local work while schedtick % 61 != 0";
    runqput(pp, got.first, false);  // it yields: back to the tail
  }
  FAIL() << "the global queue's goroutine never ran: the local pair starved it";
}

// The 61st tick only keeps the global queue from starving: the P is busy,
// so it takes one goroutine (Go's globrunqget(pp, 1)), not its share of a
// batch, which would move global work in front of its own queue.
TEST(Pick, The61stScheduleTakesExactlyOneFromTheGlobalQueue) {
  Pool pool;
  Sched sched;
  P pp;
  G* local = pool.make();
  runqput(pp, local, false);
  for (int i = 0; i < 10; ++i) sched.grq.push_back(pool.make());
  G* head = sched.grq.front();
  pp.schedtick = 122;  // 2 x 61
  ASSERT_EQ(pick(sched, pp), Got(head, false))
      << "tick 122, 10 goroutines global: the global queue's head runs";
  EXPECT_EQ(sched.grq.size(), 9u)
      << "the 61st-tick check took more than one goroutine from the global "
         "queue (a batch is for an empty local queue: Go calls "
         "globrunqget(pp, 1) here)";
  ASSERT_EQ(pp.runq.size(), 1u)
      << "the local queue changed on the 61st-tick check: it must hold only "
         "the goroutine that was there";
  EXPECT_EQ(pp.runq.front(), local);
}

// The check is step (1), before runqget: at every multiple of 61, zero
// included (0 % 61 == 0), the global queue's head runs even when runnext
// and the local queue hold goroutines, and they stay where they were.
TEST(Pick, TheGlobalCheckComesBeforeRunnextAtEveryMultipleOf61) {
  for (std::uint32_t tick : {0u, 61u, 183u}) {
    SCOPED_TRACE(::testing::Message() << "schedtick " << tick);
    Pool pool;
    Sched sched;
    P pp;
    G* local = pool.make();
    G* next = pool.make();
    runqput(pp, local, false);
    runqput(pp, next, true);
    G* global = pool.make();
    sched.grq.push_back(global);
    pp.schedtick = tick;
    EXPECT_EQ(pick(sched, pp), Got(global, false))
        << "at a multiple of 61 the global queue comes first, before "
           "runnext and the local queue";
    EXPECT_EQ(pp.runnext, next) << "runnext is left for the next pick";
    EXPECT_EQ(pp.runq.size(), 1u);
  }
}

TEST(Execute, InheritedTimeSliceIsNotANewSchedule) {
  Pool pool;
  Sched sched;
  P pp;
  pp.schedtick = 3;
  G* a = pool.make();
  runqput(pp, a, true);
  Got got = pick(sched, pp);
  EXPECT_EQ(got, Got(a, true));
  execute(pp, got.second);
  EXPECT_EQ(pp.schedtick, 3u);
  execute(pp, false);
  EXPECT_EQ(pp.schedtick, 4u);
}

// Random local and global work, goroutines readied as runnext or at the
// tail, some finishing: as long as the global queue has goroutines, no
// more than 61 schedules pass without taking one.
void global_queue_is_never_starved(std::uint64_t seed) {
  Chaos rng(seed);
  Pool pool;
  Sched sched;
  sched.gomaxprocs = 1 + static_cast<int>(rng.below(8));
  P pp;
  pp.schedtick = rng.below(1000);
  std::uint32_t since_global = 0;  // schedules since the GRQ was last served
  for (int step = 0; step < 5000; ++step) {
    if (rng.below(8) == 0) sched.grq.push_back(pool.make());
    if (pp.runq.size() < 120 && rng.below(2) == 0) {
      runqput(pp, pool.make(), rng.below(4) == 0);
    }
    std::size_t before = sched.grq.size();
    bool work = !sched.grq.empty() || !pp.runq.empty() || pp.runnext != nullptr;
    Got got = pick(sched, pp);
    if (got.first == nullptr) {
      ASSERT_FALSE(work) << "step " << step << ": no pick while work waits";
      continue;
    }
    execute(pp, got.second);
    if (sched.grq.size() < before || sched.grq.empty()) {
      since_global = 0;
    } else if (!got.second) {
      ASSERT_LE(++since_global, 61u) << "step " << step;
    }
    if (rng.below(3) != 0) runqput(pp, got.first, false);  // yields
  }
}

TEST(PickProperty, GlobalQueueIsServedEvery61Schedules) {
  for (std::uint64_t seed : stress_seeds(50, "fairness.never_starved")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    global_queue_is_never_starved(seed);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace gmp::exercises::fairness
