// Lab "gfree": what stage 3's tests cannot see of gfget and gfput. A
// runtime that never reuses a dead G, or spills and refills in other
// batches, still runs every goroutine exactly once; so these tests call
// gfget and gfput directly, on Ps of no run (only the test touches them),
// and check the lists' contract of labs/gfree/README.md: LIFO reuse,
// the spill at 64 down to 31, the refill of up to 32, nothing lost or
// handed out twice; and, through a real run, that go() reuses dead Gs.
// Built with stage3_gmp/gfree.cc, or with --define=lab=gfree with
// labs/gfree/gfree.cc (labs/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "labs/lab_probe.h"
#include "stage3_gmp/runtime.h"

namespace gmp::stage3 {
namespace {

using labs::lab_config;
using labs::LabProbe;

class GfreeTest : public ::testing::Test {
 protected:
  LabProbe rt_{lab_config(1)};  // never run: its global list only
  P p_{90};                  // two Ps of no run
  P q_{91};
  std::vector<G> gs_ = std::vector<G>(64);  // dead Gs: addresses only

  // gfget on pp until it answers null; what it handed out, in order.
  std::vector<G*> drain(P* pp) {
    std::vector<G*> got;
    while (G* gp = rt_.gfget(pp)) got.push_back(gp);
    return got;
  }
  // Each of gs_ exactly once in `got`.
  void expect_each_once(std::vector<G*> got) {
    std::vector<G*> want;
    for (G& g : gs_) want.push_back(&g);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << "a dead G lost, or handed out twice";
  }
};

TEST_F(GfreeTest, TheLastGPutIsTheFirstReused) {
  EXPECT_EQ(rt_.gfget(&p_), nullptr) << "nothing to reuse yet";
  rt_.gfput(&p_, &gs_[0]);
  rt_.gfput(&p_, &gs_[1]);
  EXPECT_EQ(p_.gfreecnt.load(), 2);
  EXPECT_EQ(rt_.gfget(&p_), &gs_[1]) << "LIFO: the last one put (warm)";
  EXPECT_EQ(p_.gfreecnt.load(), 1);
  EXPECT_EQ(rt_.gfget(&p_), &gs_[0]);
  EXPECT_EQ(p_.gfreecnt.load(), 0);
  EXPECT_EQ(rt_.gfget(&p_), nullptr);
}

// Go's gfput: a P's list spills when it reaches 64, in one batch, down to
// 31; gfget on an empty P refills up to 32 from the global list.
TEST_F(GfreeTest, AFullListSpillsDownTo31AndAnEmptyOneRefillsUpTo32) {
  for (int i = 0; i < 63; ++i) {
    rt_.gfput(&p_, &gs_[i]);
    ASSERT_EQ(p_.gfreecnt.load(), i + 1) << "no spill below 64";
  }
  rt_.gfput(&p_, &gs_[63]);
  EXPECT_EQ(p_.gfreecnt.load(), 31) << "64 spills 33 to the global list";
  std::vector<G*> got{rt_.gfget(&p_)};
  EXPECT_EQ(p_.gfreecnt.load(), 30) << "a P with Gs does not refill";

  // q is empty: its first gfget refills 32 from the 33, and takes one.
  got.push_back(rt_.gfget(&q_));
  ASSERT_NE(got.back(), nullptr) << "the 33 spilled Gs are not reused";
  EXPECT_EQ(q_.gfreecnt.load(), 31) << "a refill takes up to 32";
  std::vector<G*> more = drain(&q_);  // its 31, then the global list's last
  EXPECT_EQ(more.size(), 32u);
  EXPECT_EQ(q_.gfreecnt.load(), 0);
  got.insert(got.end(), more.begin(), more.end());
  more = drain(&p_);
  EXPECT_EQ(more.size(), 30u);
  EXPECT_EQ(p_.gfreecnt.load(), 0);
  got.insert(got.end(), more.begin(), more.end());
  expect_each_once(got);
}

// Through the runtime: go() takes a dead G when there is one. One P, 20
// rounds of 50 goroutines; each ends (gfput) before main, which its send
// readied, runs again: so every go() after the first round reuses a G.
TEST(GfreeRunTest, GoReusesTheGsOfDeadGoroutines) {
  constexpr int kRounds = 20, kPerRound = 50;
  Runtime rt(lab_config(1));
  rt.run([] {
    Chan<int> ended(kPerRound);
    for (int r = 0; r < kRounds; ++r) {
      for (int i = 0; i < kPerRound; ++i) go([&ended] { ended.send(1); });
      for (int i = 0; i < kPerRound; ++i) (void)ended.recv();
    }
  });
  Stats s = rt.stats();
  EXPECT_EQ(s.goroutines_finished, 1u + kRounds * kPerRound);
  EXPECT_EQ(s.gs_reused, std::uint64_t{kRounds - 1} * kPerRound)
      << "go() made new Gs while dead ones waited on the free lists";
}

}  // namespace
}  // namespace gmp::stage3
