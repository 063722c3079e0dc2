// Lab "grq": what stage 3's tests cannot see of the global run queue. A
// globrunqget that takes another share, or ignores `max`, still runs
// every goroutine exactly once; so these tests call the GRQ's functions
// directly, with sched_ held, from main of a run of 4 Ps (GOMAXPROCS is
// the run's), on Gs that only the test uses and a P of no run; and check
// the contract of labs/grq/README.md: FIFO, the head, globrunqget's share
// min(len/GOMAXPROCS + 1, len, max, 128) in order, and the counters.
// Built with stage3_gmp/grq.cc, or with --define=lab=grq with
// labs/grq/grq.cc (labs/README.md).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

#include "labs/lab_probe.h"
#include "stage3_gmp/runtime.h"

namespace gmp::stage3 {
namespace {

using labs::lab_config;
using labs::LabProbe;

class GrqTest : public ::testing::Test {
 protected:
  LabProbe rt_{lab_config(4)};
  P p_{90};  // a P of no run: nobody steals from it
  std::vector<G> gs_ = std::vector<G>(600);

  // globrunqget(p_, max): the batch, the returned one first, then p_'s
  // local queue in order (which must come from the ring, not runnext).
  std::vector<G*> take(std::uint32_t max) {
    std::vector<G*> batch;
    G* first = rt_.globrunqget(&p_, max);
    if (first == nullptr) return batch;
    batch.push_back(first);
    for (;;) {
      auto [gp, inherit] = p_.runq.owner().get();
      if (gp == nullptr) break;
      EXPECT_FALSE(inherit) << "the batch goes to the tail, not runnext";
      batch.push_back(gp);
    }
    return batch;
  }
  // gs_[from, from + n).
  std::vector<G*> gs(int from, int n) {
    std::vector<G*> v;
    for (int i = from; i < from + n; ++i) v.push_back(&gs_[i]);
    return v;
  }
};

// Go 1.19's globrunqget: n = min(len/GOMAXPROCS + 1, len), in GRQ order.
// 10 at 4 Ps: batches of 3, 2, 2, 1, 1, 1.
TEST_F(GrqTest, EachBatchIsLenOverGomaxprocsPlusOne) {
  rt_.with_sched([&] {
    for (int i = 0; i < 10; ++i) rt_.globrunqput(&gs_[i]);
    int from = 0;
    for (int n : {3, 2, 2, 1, 1, 1}) {
      EXPECT_EQ(take(0), gs(from, n)) << "the batch from G " << from;
      from += n;
    }
    EXPECT_TRUE(take(0).empty());
    EXPECT_TRUE(rt_.grq_empty());
    EXPECT_EQ(p_.counters.grq_takes.load(), 6u);
    EXPECT_EQ(p_.counters.grq_goroutines.load(), 10u);
  });
}

// The share is capped at half the local queue (128) and by `max`.
TEST_F(GrqTest, ABatchIsAtMostHalfALocalQueueAndAtMostMax) {
  rt_.with_sched([&] {
    for (int i = 0; i < 600; ++i) rt_.globrunqput(&gs_[i]);
    EXPECT_EQ(take(0), gs(0, 128)) << "600/4 + 1 = 151, capped at 128";
    EXPECT_EQ(take(1), gs(128, 1)) << "max = 1: the 61st tick's check";
    EXPECT_EQ(take(5), gs(129, 5)) << "max = 5";
  });
}

// globrunqputhead puts at the head (a removed P's goroutines run first);
// the size counts it (the next batch's share is computed from it), and
// so does Stats::max_queue_len.
TEST_F(GrqTest, PutHeadPutsAtTheHead) {
  rt_.with_sched([&] {
    rt_.globrunqput(&gs_[0]);
    rt_.globrunqput(&gs_[1]);
    rt_.globrunqput(&gs_[2]);
    rt_.globrunqputhead(&gs_[3]);
    EXPECT_EQ(take(0), (std::vector<G*>{&gs_[3], &gs_[0]}))
        << "4 queued at 4 Ps: a batch of 2, the head first";
    EXPECT_EQ(take(0), (std::vector<G*>{&gs_[1]}));
    EXPECT_EQ(take(0), (std::vector<G*>{&gs_[2]}));
    EXPECT_TRUE(take(0).empty());
  });
  EXPECT_EQ(rt_.stats().max_queue_len, 4u) << "the 4th was put at the head";
}

// A goroutine put on the GRQ may carry a stale schedlink (a G reused from
// the free list, one that yielded): globrunqput clears it, or the queue
// runs on into a goroutine that is not in it once the last one is taken.
TEST_F(GrqTest, PutClearsAStaleLink) {
  rt_.with_sched([&] {
    gs_[0].schedlink = &gs_[7];  // stale
    rt_.globrunqput(&gs_[0]);
    EXPECT_EQ(take(0), (std::vector<G*>{&gs_[0]}));
    rt_.globrunqput(&gs_[1]);
    EXPECT_EQ(take(0), (std::vector<G*>{&gs_[1]}))
        << "after the stale-linked G, the queue must hold only the new one";
    EXPECT_TRUE(take(0).empty());
  });
}

// globrunqputhead on an empty GRQ makes that goroutine both head and tail:
// a globrunqput after it goes behind it.
TEST_F(GrqTest, PutHeadOnAnEmptyQueueIsAlsoItsTail) {
  rt_.with_sched([&] {
    rt_.globrunqputhead(&gs_[0]);
    rt_.globrunqput(&gs_[1]);
    EXPECT_EQ(take(0), (std::vector<G*>{&gs_[0]}))
        << "2 queued at 4 Ps: a batch of 1, the head";
    EXPECT_EQ(take(0), (std::vector<G*>{&gs_[1]}));
    EXPECT_TRUE(take(0).empty());
  });
}

// A batch (a full local queue's spill) goes to the tail in one splice, in
// order, its last link cleared (whatever schedlink held before);
// Stats::max_queue_len follows every put.
TEST_F(GrqTest, ABatchGoesToTheTailAndCountsInMaxQueueLen) {
  rt_.with_sched([&] {
    rt_.globrunqput(&gs_[0]);
    std::vector<G*> batch = gs(1, 129);
    for (G* gp : batch) gp->schedlink = &gs_[599];  // stale links
    LabProbe::link_batch(batch.data(), 129);
    rt_.globrunqputbatch(batch.front(), batch.back(), 129);
    int from = 0;
    for (int n : {33, 25, 19, 14, 10, 8, 6, 4, 3, 3, 2, 1, 1, 1}) {
      EXPECT_EQ(take(0), gs(from, n)) << "the batch from G " << from;
      from += n;
    }
    EXPECT_TRUE(take(0).empty());
    rt_.globrunqput(&gs_[598]);  // after the batch's last: the GRQ is empty
    EXPECT_EQ(take(0), gs(598, 1));
  });
  EXPECT_EQ(rt_.stats().max_queue_len, 130u);
}

// Through the runtime, at one P: main makes 258 goroutines without
// blocking. The first goes to runnext; each next one pushes the one
// before to the ring; the 258th finds the ring full (256), and half of it
// plus the one displaced (129) go to the GRQ in one batch.
TEST(GrqRunTest, AFullLocalQueueSpillsHalfOfItPlusOneToTheGrq) {
  constexpr int kGoroutines = 258;
  Runtime rt(lab_config(1));
  rt.run([] {
    WaitGroup wg;
    wg.add(kGoroutines);
    for (int i = 0; i < kGoroutines; ++i) go([&] { wg.done(); });
    wg.wait();
  });
  Stats s = rt.stats();
  EXPECT_EQ(s.runq_overflows, 1u);
  EXPECT_EQ(s.max_queue_len, 129u) << "128 + 1 in one batch";
  EXPECT_EQ(s.goroutines_finished, 1u + kGoroutines);
}

}  // namespace
}  // namespace gmp::stage3
