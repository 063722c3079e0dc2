// Exercise 06's tests: runnext's order, the overflow batch, and the owner
// racing a thief for runnext on seeded, randomized interleavings.
#include "exercises/06_runq_overflow/runq.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "exercises/testing/harness.h"

namespace gmp::exercises::overflow {
namespace {

std::vector<G> make_gs(int n) {
  std::vector<G> gs(n);
  for (int i = 0; i < n; ++i) gs[i].id = i;
  return gs;
}

using Got = std::pair<G*, bool>;

TEST(Runnext, NewestReadiedRunsNextInItsTimeSlice) {
  LocalRunQueue q;
  GlobalRunQueue grq;
  G a, b;
  q.runqput(&a, false, grq);
  q.runqput(&b, true, grq);
  EXPECT_EQ(q.runqget(), Got(&b, true)) << "runnext first, inheriting the slice";
  EXPECT_EQ(q.runqget(), Got(&a, false));
  EXPECT_EQ(q.runqget(), Got(nullptr, false));
}

TEST(Runnext, DisplacedGoroutineGoesToTheTail) {
  LocalRunQueue q;
  GlobalRunQueue grq;
  G x, y, a, b;
  q.runqput(&x, false, grq);
  q.runqput(&y, false, grq);
  q.runqput(&a, true, grq);
  q.runqput(&b, true, grq);  // a is kicked out behind x and y
  EXPECT_EQ(q.ring_size(), 3u);
  EXPECT_EQ(q.runqget(), Got(&b, true));
  EXPECT_EQ(q.runqget(), Got(&x, false));
  EXPECT_EQ(q.runqget(), Got(&y, false));
  EXPECT_EQ(q.runqget(), Got(&a, false));
  EXPECT_EQ(q.runqget(), Got(nullptr, false));
  EXPECT_EQ(grq.size(), 0u);
}

TEST(Overflow, FullRingMovesItsOldestHalfAndTheNewOneToTheGlobalQueue) {
  LocalRunQueue q;
  GlobalRunQueue grq;
  std::vector<G> gs = make_gs(257);
  for (int i = 0; i < 256; ++i) q.runqput(&gs[i], false, grq);
  EXPECT_EQ(grq.size(), 0u) << "256 fit in the ring";
  q.runqput(&gs[256], false, grq);
  ASSERT_EQ(grq.size(), 129u) << "128 oldest + the new one";
  EXPECT_EQ(q.ring_size(), 128u);
  for (int i = 0; i < 128; ++i) ASSERT_EQ(grq.get(), &gs[i]) << i;
  EXPECT_EQ(grq.get(), &gs[256]);
  for (int i = 128; i < 256; ++i) ASSERT_EQ(q.runqget(), Got(&gs[i], false)) << i;
}

TEST(Overflow, TakesTheGlobalLockOncePerBatch) {
  LocalRunQueue q;
  GlobalRunQueue grq;
  std::vector<G> gs = make_gs(257 + 129);
  for (G& g : gs) q.runqput(&g, false, grq);  // two overflows
  EXPECT_EQ(grq.size(), 2u * 129u);
  EXPECT_EQ(grq.lock_acquisitions(), 2u);
}

TEST(Overflow, KickedOutRunnextOverflowsToo) {
  LocalRunQueue q;
  GlobalRunQueue grq;
  std::vector<G> gs = make_gs(256);
  G first, second;
  for (G& g : gs) q.runqput(&g, false, grq);
  q.runqput(&first, true, grq);   // runnext; the ring stays full
  q.runqput(&second, true, grq);  // kicks `first` into a full ring
  ASSERT_EQ(grq.size(), 129u);
  for (int i = 0; i < 128; ++i) ASSERT_EQ(grq.get(), &gs[i]) << i;
  EXPECT_EQ(grq.get(), &first);
  EXPECT_EQ(q.runqget(), Got(&second, true));
}

// The owner readies goroutines (half of them as runnext) and sometimes runs
// one, while a thief keeps stealing runnext. Every goroutine must end up
// taken exactly once: by the owner, by the thief, or from the global queue.
//
// back_to_back: the same race without chaos points. The owner makes every
// goroutine runnext, one right after the other, so that runnext is nearly
// always taken when it puts the next one, while the thief steals runnext
// in a tight loop. The window between reading the old runnext and
// replacing it is a few instructions; many puts in a row put it in front
// of the thief often enough for a load-and-store runqput to queue a
// stolen goroutine again.
void owner_and_runnext_thief(std::uint64_t seed, int n, bool back_to_back) {
  std::vector<G> gs = make_gs(n);
  std::vector<std::atomic<int>> taken(n);
  std::atomic<bool> owner_done{false};
  LocalRunQueue q;
  GlobalRunQueue grq;
  auto take = [&](G* g) { taken[g->id].fetch_add(1, std::memory_order_relaxed); };
  run_threads(2, seed, [&](int who, Chaos& chaos) {
    if (who == 0) {
      for (G& g : gs) {
        q.runqput(&g, back_to_back || chaos.below(2) == 0, grq);
        if (back_to_back) continue;
        chaos.point();
        if (chaos.below(3) == 0) {
          if (G* mine = q.runqget().first) take(mine);
        }
      }
      owner_done.store(true, std::memory_order_release);
      while (G* mine = q.runqget().first) take(mine);
      return;
    }
    while (!owner_done.load(std::memory_order_acquire)) {
      if (G* stolen = q.steal_runnext()) take(stolen);
      if (!back_to_back) chaos.point();
    }
  });
  while (G* g = grq.get()) take(g);
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(taken[i].load(), 1) << "goroutine " << i << " taken "
                                  << taken[i].load() << " times";
  }
}

// The owner writes each goroutine's id (a plain int) just before it makes
// it runnext; a thief that takes it reads the id. Only the exchange's
// release, paired with steal_runnext's acquire, orders the write before
// the read: without it ThreadSanitizer reports a data race on `id`, on
// any machine (x86 hides the missing order from the plain check).
void runnext_publication(std::uint64_t seed, int n) {
  std::vector<G> gs(n);  // ids 0 until the owner writes them
  std::atomic<int> stolen{0}, bad{0};
  std::atomic<bool> owner_done{false};
  LocalRunQueue q;
  GlobalRunQueue grq;
  run_threads(2, seed, [&](int who, Chaos& chaos) {
    if (who == 0) {
      for (int i = 0; i < n; ++i) {
        gs[i].id = i + 1;  // the payload, published by runqput
        q.runqput(&gs[i], /*next=*/true, grq);
        chaos.point();
      }
      // The last one stays in runnext until the thief takes it.
      while (stolen.load(std::memory_order_relaxed) == 0) chaos.point();
      owner_done.store(true, std::memory_order_release);
      return;
    }
    while (!owner_done.load(std::memory_order_acquire)) {
      if (G* g = q.steal_runnext()) {
        if (g->id != static_cast<int>(g - gs.data()) + 1) {
          bad.fetch_add(1, std::memory_order_relaxed);
        }
        stolen.fetch_add(1, std::memory_order_relaxed);
      }
      chaos.point();
    }
  });
  EXPECT_EQ(bad.load(), 0) << "goroutines stolen from runnext before their "
                              "id was visible (a missing release)";
}

// The owner makes a goroutine runnext and at once runs what is next, while
// a thief keeps stealing runnext; a goroutine waits in the ring all along.
// Whoever wins runnext, runqget must return something: runnext, or, if the
// thief took it first, the ring's head. A runqget that returns null while
// its ring holds a goroutine tells the scheduler its P has no work.
void runnext_thief_vs_runqget(std::uint64_t seed, int rounds) {
  std::vector<G> gs = make_gs(rounds + 1);
  G* waiter = &gs[rounds];  // always in the ring, or being run
  std::vector<std::atomic<int>> taken(rounds);
  std::atomic<int> empty{0};
  std::atomic<bool> owner_done{false};
  LocalRunQueue q;
  GlobalRunQueue grq;
  run_threads(2, seed, [&](int who, Chaos& chaos) {
    if (who == 0) {
      q.runqput(waiter, false, grq);
      for (int i = 0; i < rounds; ++i) {
        q.runqput(&gs[i], /*next=*/true, grq);
        G* got = q.runqget().first;
        if (got == nullptr) {
          empty.fetch_add(1, std::memory_order_relaxed);
        } else if (got == waiter) {
          q.runqput(waiter, false, grq);  // it waits again
        } else {
          taken[got->id].fetch_add(1, std::memory_order_relaxed);
        }
        if (chaos.below(16) == 0) chaos.point();
      }
      owner_done.store(true, std::memory_order_release);
      return;
    }
    while (!owner_done.load(std::memory_order_acquire)) {
      if (G* g = q.steal_runnext()) {
        taken[g->id].fetch_add(1, std::memory_order_relaxed);
      }
    }
  });
  while (G* g = q.runqget().first) {
    if (g != waiter) taken[g->id].fetch_add(1, std::memory_order_relaxed);
  }
  EXPECT_EQ(empty.load(), 0)
      << "times runqget returned null while the ring held a goroutine";
  for (int i = 0; i < rounds; ++i) {
    ASSERT_EQ(taken[i].load(), 1) << "goroutine " << i << " taken "
                                  << taken[i].load() << " times";
  }
}

TEST(RunnextStress, AStolenRunnextLeavesTheRingToRun) {
  for (std::uint64_t seed : stress_seeds(10, "overflow.runnext_vs_runqget")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    runnext_thief_vs_runqget(seed, 20000);
    if (HasFailure()) return;
  }
}

TEST(RunnextStress, AThiefSeesWhatTheOwnerWroteBeforeRunnext) {
  for (std::uint64_t seed : stress_seeds(6, "overflow.runnext_publication")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    runnext_publication(seed, 3000);
    if (HasFailure()) return;
  }
}

TEST(RunnextStress, OwnerAndThiefLoseNothing) {
  for (std::uint64_t seed : stress_seeds(20, "overflow.runnext_thief")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    owner_and_runnext_thief(seed, 3000, /*back_to_back=*/false);
    if (HasFatalFailure()) return;
  }
  for (std::uint64_t seed : stress_seeds(16, "overflow.runnext_back_to_back")) {
    SCOPED_TRACE(::testing::Message() << "back to back, seed " << seed);
    owner_and_runnext_thief(seed, 100000, /*back_to_back=*/true);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace gmp::exercises::overflow
