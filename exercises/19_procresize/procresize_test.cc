// Exercise 19's tests: bad input, growing, shrinking (where the removed Ps'
// goroutines, timers and free Gs go), the caller's own P removed, which Ps
// idle and which get an M, then seeded random resizes that must lose
// nothing.
#include "exercises/19_procresize/procresize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "exercises/testing/harness.h"

namespace gmp::exercises::resize {
namespace {

// n Ps in use, all idle but `mine`, which self holds (running); mine < 0:
// self holds none (start-up).
struct World {
  Sched sched;
  M self{100};
  std::vector<std::unique_ptr<G>> gs;

  World(int n, int mine) {
    for (int i = 0; i < n; ++i) {
      sched.allp.push_back(std::make_unique<P>());
      sched.allp.back()->id = i;
    }
    sched.gomaxprocs = n;
    if (mine < 0) return;
    self.p = sched.allp[static_cast<std::size_t>(mine)].get();
    self.p->status = PStatus::kRunning;
    self.p->m = &self;
  }
  G* g(int id) {
    gs.push_back(std::make_unique<G>());
    gs.back()->id = id;
    return gs.back().get();
  }
};

std::vector<int> ids(const std::deque<G*>& q) {
  std::vector<int> out;
  for (G* g : q) out.push_back(g->id);
  return out;
}

std::vector<int> ids(const std::vector<P*>& ps) {
  std::vector<int> out;
  for (P* p : ps) out.push_back(p->id);
  return out;
}

TEST(Procresize, ABadCountThrowsAndChangesNothing) {
  World w(2, 0);
  for (int n : {0, -3}) {
    try {
      procresize(w.sched, w.self, n);
      ADD_FAILURE() << "procresize(" << n << ") returned";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("procresize: invalid arg"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(w.sched.gomaxprocs, 2);
  EXPECT_EQ(w.sched.allp.size(), 2u);
  EXPECT_TRUE(w.sched.pidle.empty());
}

TEST(Procresize, GrowingMakesIdlePs) {
  World w(2, 1);
  std::vector<P*> runnable = procresize(w.sched, w.self, 4);
  EXPECT_TRUE(runnable.empty()) << "nobody has work";
  ASSERT_EQ(w.sched.allp.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(w.sched.allp[i]->id, i);
  EXPECT_EQ(w.sched.gomaxprocs, 4);
  EXPECT_EQ(w.self.p, w.sched.allp[1].get()) << "the caller keeps its P";
  EXPECT_EQ(w.self.p->status, PStatus::kRunning);
  // pidleput from P 3 down to P 0, skipping the caller's: P 0 comes out first.
  EXPECT_EQ(ids(w.sched.pidle), (std::vector<int>{3, 2, 0}));
  for (int i : {0, 2, 3}) EXPECT_EQ(w.sched.allp[i]->status, PStatus::kIdle);
}

TEST(Procresize, ShrinkingPutsEveryGoroutineAtTheGlobalHeadInOrder) {
  World w(4, 0);
  P& p2 = *w.sched.allp[2];
  P& p3 = *w.sched.allp[3];
  p2.runnext = w.g(20);
  p2.runq = {w.g(21), w.g(22)};
  p3.runq = {w.g(31), w.g(32)};
  w.sched.grq = {w.g(1)};
  procresize(w.sched, w.self, 2);
  // P 2 first: its queue in order with runnext ahead; then P 3's, ahead of
  // that; what the global queue held stays behind.
  EXPECT_EQ(ids(w.sched.grq), (std::vector<int>{31, 32, 20, 21, 22, 1}));
  EXPECT_EQ(w.sched.allp.size(), 2u);
  ASSERT_EQ(w.sched.retired.size(), 2u);
  EXPECT_EQ(w.sched.retired[0]->id, 2);
  EXPECT_EQ(w.sched.retired[1]->id, 3);
  for (auto& p : w.sched.retired) {
    EXPECT_EQ(p->status, PStatus::kDead);
    EXPECT_TRUE(p->runq.empty());
    EXPECT_EQ(p->runnext, nullptr);
  }
}

TEST(Procresize, RemovedPsGiveTheirTimersAndFreeGsAway) {
  World w(3, 1);
  P& p2 = *w.sched.allp[2];
  p2.timers = {500, 300};
  p2.gfree = {w.g(7), w.g(8)};
  w.self.p->timers = {100};
  procresize(w.sched, w.self, 2);
  std::vector<long> timers = w.sched.allp[1]->timers;
  std::sort(timers.begin(), timers.end());
  EXPECT_EQ(timers, (std::vector<long>{100, 300, 500})) << "to the caller's P";
  EXPECT_TRUE(w.sched.allp[0]->timers.empty());
  ASSERT_EQ(w.sched.gfree.size(), 2u) << "free Gs to the global list";
  ASSERT_EQ(w.sched.retired.size(), 1u);
  EXPECT_TRUE(w.sched.retired[0]->timers.empty());
  EXPECT_TRUE(w.sched.retired[0]->gfree.empty());
}

TEST(Procresize, TheCallersPGoesIfRemovedAndItTakesPZero) {
  World w(4, 3);
  P* old = w.self.p;
  old->timers = {42};
  procresize(w.sched, w.self, 2);
  EXPECT_EQ(w.self.p, w.sched.allp[0].get()) << "the caller continues on P 0";
  EXPECT_EQ(w.self.p->status, PStatus::kRunning);
  EXPECT_EQ(w.self.p->m, &w.self);
  EXPECT_EQ(old->status, PStatus::kDead);
  EXPECT_EQ(old->m, nullptr) << "the caller let go of it";
  EXPECT_EQ(w.sched.allp[0]->timers, (std::vector<long>{42}))
      << "its timers follow the caller to P 0";
  EXPECT_EQ(ids(w.sched.pidle), (std::vector<int>{1})) << "P 0 is not idle";
  // The caller on P nprocs, the first P removed: it goes too.
  World w3(3, 2);
  P* first_removed = w3.self.p;
  first_removed->timers = {7};
  procresize(w3.sched, w3.self, 2);
  EXPECT_EQ(w3.self.p, w3.sched.allp[0].get())
      << "P 2 of 2 is removed: the caller continues on P 0";
  EXPECT_EQ(first_removed->status, PStatus::kDead);
  EXPECT_EQ(first_removed->m, nullptr);
  EXPECT_EQ(w3.sched.allp[0]->timers, (std::vector<long>{7}));
  // At start-up the caller holds no P.
  World boot(0, -1);
  Sched& s = boot.sched;
  procresize(s, boot.self, 3);
  ASSERT_EQ(s.allp.size(), 3u);
  EXPECT_EQ(boot.self.p, s.allp[0].get());
  EXPECT_EQ(ids(s.pidle), (std::vector<int>{2, 1}));
}

TEST(Procresize, PsWithWorkGetAnIdleMLowestIdFirst) {
  World w(4, 1);
  M a{1}, b{2};
  w.sched.midle = {&a, &b};
  w.sched.allp[0]->runq = {w.g(1)};
  w.sched.allp[2]->runnext = w.g(2);  // runnext alone is work too
  std::vector<P*> runnable = procresize(w.sched, w.self, 4);
  EXPECT_EQ(ids(runnable), (std::vector<int>{0, 2}));
  EXPECT_EQ(w.sched.allp[2]->m, &b) << "mget from P 3 down: P 2 asks first";
  EXPECT_EQ(w.sched.allp[0]->m, &a);
  EXPECT_EQ(ids(w.sched.pidle), (std::vector<int>{3}));
  for (P* p : runnable)
    EXPECT_EQ(p->status, PStatus::kIdle) << "idle until its M takes it";
  // No idle M left: the P is still listed, with no M.
  World w2(2, 0);
  w2.sched.allp[1]->runq = {w2.g(5)};
  std::vector<P*> r2 = procresize(w2.sched, w2.self, 2);
  ASSERT_EQ(ids(r2), (std::vector<int>{1}));
  EXPECT_EQ(r2[0]->m, nullptr);
}

// Random resizes of a world with goroutines, timers and free Gs spread
// over its Ps: nothing lost or doubled, and the state after each resize is
// what the rules say.
TEST(ProcresizeProperty, RandomResizesLoseNothing) {
  for (std::uint64_t seed : stress_seeds(100, "ProcresizeProperty")) {
    Chaos rng(seed);
    World w(1 + static_cast<int>(rng.below(6)), 0);
    int next_id = 0;
    std::set<const G*> all;
    std::size_t timers = 0;
    for (int round = 0; round < 10; ++round) {
      for (auto& p : w.sched.allp) {  // some work, timers, free Gs
        for (int k = static_cast<int>(rng.below(3)); k > 0; --k) {
          G* g = w.g(++next_id);
          all.insert(g);
          switch (rng.below(3)) {
            case 0:
              p->runq.push_back(g);
              break;
            case 1:
              if (p->runnext == nullptr) {
                p->runnext = g;
              } else {
                p->gfree.push_back(g);
              }
              break;
            default:
              p->gfree.push_back(g);
              break;
          }
        }
        if (rng.below(2) == 0) {
          p->timers.push_back(static_cast<long>(rng.below(1000)));
          ++timers;
        }
      }
      int n = 1 + static_cast<int>(rng.below(6));
      w.sched.pidle.clear();  // the caller's Ms took their Ps meanwhile
      std::vector<P*> runnable = procresize(w.sched, w.self, n);
      SCOPED_TRACE("seed " + std::to_string(seed) + " round " +
                   std::to_string(round));
      ASSERT_EQ(w.sched.allp.size(), static_cast<std::size_t>(n));
      ASSERT_EQ(w.sched.gomaxprocs, n);
      std::multiset<const G*> seen(w.sched.grq.begin(), w.sched.grq.end());
      seen.insert(w.sched.gfree.begin(), w.sched.gfree.end());
      std::size_t t = 0;
      for (int i = 0; i < n; ++i) {
        P* p = w.sched.allp[i].get();
        ASSERT_EQ(p->id, i);
        seen.insert(p->runq.begin(), p->runq.end());
        if (p->runnext != nullptr) seen.insert(p->runnext);
        seen.insert(p->gfree.begin(), p->gfree.end());
        t += p->timers.size();
        bool work = !p->runq.empty() || p->runnext != nullptr;
        bool idle =
            std::count(w.sched.pidle.begin(), w.sched.pidle.end(), p) == 1;
        bool listed = std::count(runnable.begin(), runnable.end(), p) == 1;
        if (p == w.self.p) {
          ASSERT_EQ(p->status, PStatus::kRunning);
          ASSERT_FALSE(idle || listed);
        } else {
          ASSERT_EQ(p->status, PStatus::kIdle);
          ASSERT_EQ(idle, !work) << "P " << i;
          ASSERT_EQ(listed, work) << "P " << i;
        }
      }
      for (auto& r : w.sched.retired) {
        ASSERT_EQ(r->status, PStatus::kDead);
        t += r->timers.size();
        ASSERT_TRUE(r->runq.empty() && r->runnext == nullptr &&
                    r->gfree.empty());
      }
      ASSERT_EQ(t, timers) << "a timer was lost";
      ASSERT_EQ(seen.size(), all.size()) << "a goroutine was lost or doubled";
      ASSERT_EQ(std::set<const G*>(seen.begin(), seen.end()), all);
      for (P* p : runnable) p->m = nullptr;  // their Ms would take them now
    }
  }
}

}  // namespace
}  // namespace gmp::exercises::resize
