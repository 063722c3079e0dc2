// Exercise 05's tests: the queue's behaviour alone, then the owner and two
// thieves at once on seeded, randomized interleavings.
#include "exercises/05_local_runq/runq.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "exercises/testing/harness.h"

namespace gmp::exercises::runq {
namespace {

std::vector<G> make_gs(int n) {
  std::vector<G> gs(n);
  for (int i = 0; i < n; ++i) gs[i].id = i;
  return gs;
}

TEST(LocalRunQueue, EmptyQueueGivesNothing) {
  LocalRunQueue q, thief;
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.runqget(), nullptr);
  EXPECT_EQ(thief.runqsteal(q), nullptr);
  EXPECT_EQ(thief.size(), 0u);
}

TEST(LocalRunQueue, PutThenGetIsFifo) {
  LocalRunQueue q;
  std::vector<G> gs = make_gs(10);
  for (G& g : gs) ASSERT_TRUE(q.runqput(&g));
  EXPECT_EQ(q.size(), 10u);
  for (G& g : gs) EXPECT_EQ(q.runqget(), &g);
  EXPECT_EQ(q.runqget(), nullptr);
}

TEST(LocalRunQueue, HoldsExactly256) {
  LocalRunQueue q;
  std::vector<G> gs = make_gs(257);
  for (int i = 0; i < 256; ++i) ASSERT_TRUE(q.runqput(&gs[i])) << "put " << i;
  EXPECT_EQ(q.size(), 256u);
  EXPECT_FALSE(q.runqput(&gs[256])) << "a full queue must refuse";
  EXPECT_EQ(q.size(), 256u);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(q.runqget(), &gs[i]) << "get " << i;
  EXPECT_EQ(q.runqget(), nullptr);
}

TEST(LocalRunQueue, WrapsAroundTheRing) {
  LocalRunQueue q;
  std::vector<G> gs = make_gs(200);
  for (int round = 0; round < 20; ++round) {  // 4000 positions: 15 wraps
    for (G& g : gs) ASSERT_TRUE(q.runqput(&g)) << "round " << round;
    for (G& g : gs) ASSERT_EQ(q.runqget(), &g) << "round " << round;
  }
  EXPECT_EQ(q.size(), 0u);
}

TEST(LocalRunQueue, StealTakesTheOldestHalfRoundedUp) {
  for (int n : {1, 2, 3, 7, 200, 256}) {
    SCOPED_TRACE(::testing::Message() << "victim holds " << n);
    LocalRunQueue victim, thief;
    std::vector<G> gs = make_gs(n);
    for (G& g : gs) ASSERT_TRUE(victim.runqput(&g));
    int half = n - n / 2;
    // The oldest `half` move: all but the last into the thief's queue, in
    // order, and the last is returned to run.
    EXPECT_EQ(thief.runqsteal(victim), &gs[half - 1]);
    EXPECT_EQ(thief.size(), static_cast<std::uint32_t>(half - 1));
    EXPECT_EQ(victim.size(), static_cast<std::uint32_t>(n / 2));
    for (int i = 0; i < half - 1; ++i) ASSERT_EQ(thief.runqget(), &gs[i]);
    for (int i = half; i < n; ++i) ASSERT_EQ(victim.runqget(), &gs[i]);
  }
}

// One owner puts kGs goroutines (running one itself whenever the ring is
// full, and sometimes at random), while two thieves steal into queues of
// their own and run what they stole. Every goroutine must be taken exactly
// once, whatever the interleaving.
void owner_and_thieves(std::uint64_t seed, int n) {
  std::vector<G> gs = make_gs(n);
  std::vector<std::atomic<int>> taken(n);
  std::atomic<int> total{0};
  std::atomic<bool> owner_done{false};  // the owner has drained the victim
  LocalRunQueue victim;
  auto take = [&](G* g) {
    taken[g->id].fetch_add(1, std::memory_order_relaxed);
    total.fetch_add(1, std::memory_order_relaxed);
  };
  run_threads(3, seed, [&](int who, Chaos& chaos) {
    if (who == 0) {  // the owner
      for (G& g : gs) {
        while (!victim.runqput(&g)) take(victim.runqget());
        chaos.point();
        if (chaos.below(4) == 0) {
          if (G* mine = victim.runqget()) take(mine);
        }
      }
      while (G* mine = victim.runqget()) take(mine);
      owner_done.store(true, std::memory_order_release);
      return;
    }
    // A thief stops when everything is taken, or when the owner is done
    // and the victim has nothing left for it: then a goroutine that was
    // never taken was lost, which the checks below report (no hang).
    LocalRunQueue own;  // a thief's own queue
    while (total.load(std::memory_order_relaxed) < n) {
      bool finished = owner_done.load(std::memory_order_acquire);
      G* g = own.runqget();
      if (g == nullptr) g = own.runqsteal(victim);
      if (g != nullptr) {
        take(g);
      } else if (finished) {
        break;
      }
      chaos.point();
    }
  });
  EXPECT_EQ(total.load(), n) << "goroutines taken, of " << n;
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(taken[i].load(), 1) << "goroutine " << i << " taken "
                                  << taken[i].load() << " times";
  }
}

TEST(LocalRunQueueStress, OwnerAndThievesTakeEachGoroutineOnce) {
  Watchdog dog("OwnerAndThievesTakeEachGoroutineOnce", 120);
  for (std::uint64_t seed : stress_seeds(12, "runq.owner_and_thieves")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    owner_and_thieves(seed, 5000);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace gmp::exercises::runq
