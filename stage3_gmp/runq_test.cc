// The local run queue on its own: against a model (single thread, random
// operations, a tiny capacity so that full and wrap-around happen all the
// time), and under concurrent stealing (every goroutine seen exactly once).
#include "stage3_gmp/runq.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace gmp::stage3 {
namespace {

// Goroutines for the tests: only their addresses matter.
std::vector<G> make_gs(std::size_t n) { return std::vector<G>(n); }

// What the queue should hold: the ring, oldest first, and runnext.
struct Model {
  std::deque<G*> ring;
  G* runnext = nullptr;
};

template <std::uint32_t Cap>
class RunqModel {
 public:
  using Q = LocalRunQueue<Cap>;

  // One random operation on one of two queues, checked against the model.
  void step(std::mt19937& rng, G* fresh) {
    int i = static_cast<int>(rng() % 2);
    switch (rng() % 5) {
      case 0:
      case 1: put(i, fresh, rng() % 2 == 0); break;
      case 2:
      case 3: get(i); break;
      case 4: drain_then_steal(i, 1 - i, rng() % 2 == 0); break;
    }
    if (::testing::Test::HasFatalFailure()) return;
    for (int k = 0; k < 2; ++k) {
      ASSERT_EQ(q_[k].stealer().size(), model_[k].ring.size());
      ASSERT_EQ(q_[k].stealer().empty(),
                model_[k].ring.empty() && model_[k].runnext == nullptr);
    }
  }

 private:
  void put(int i, G* gp, bool next) {
    typename Q::Overflow overflow{};
    std::uint32_t n = q_[i].owner().put(gp, next, overflow);
    Model& m = model_[i];
    G* to_ring = gp;
    if (next) {
      to_ring = m.runnext;
      m.runnext = gp;
    }
    if (to_ring == nullptr || m.ring.size() < Cap) {
      ASSERT_EQ(n, 0u);
      if (to_ring != nullptr) m.ring.push_back(to_ring);
      return;
    }
    ASSERT_EQ(n, Cap / 2 + 1) << "a full queue hands over half plus one";
    for (std::uint32_t k = 0; k < Cap / 2; ++k) {
      ASSERT_EQ(overflow[k], m.ring.front()) << "oldest first";
      m.ring.pop_front();
    }
    ASSERT_EQ(overflow[Cap / 2], to_ring);
  }

  void get(int i) {
    auto [gp, inherit] = q_[i].owner().get();
    Model& m = model_[i];
    if (m.runnext != nullptr) {
      ASSERT_EQ(gp, m.runnext);
      ASSERT_TRUE(inherit) << "runnext inherits the time slice";
      m.runnext = nullptr;
    } else if (!m.ring.empty()) {
      ASSERT_EQ(gp, m.ring.front());
      ASSERT_FALSE(inherit);
      m.ring.pop_front();
    } else {
      ASSERT_EQ(gp, nullptr);
    }
  }

  // Go steals only into an empty queue (findRunnable tries local work
  // first), so the thief is drained first.
  void drain_then_steal(int thief, int victim, bool runnext) {
    while (!q_[thief].stealer().empty()) {
      get(thief);
      if (::testing::Test::HasFatalFailure()) return;
    }
    G* gp = q_[thief].owner().steal(q_[victim].stealer(), runnext);
    Model& t = model_[thief];
    Model& v = model_[victim];
    std::size_t n = v.ring.size() - v.ring.size() / 2;  // half, rounded up
    if (n == 0) {
      if (runnext && v.runnext != nullptr) {
        ASSERT_EQ(gp, v.runnext) << "runnext is stolen only from an empty ring";
        v.runnext = nullptr;
      } else {
        ASSERT_EQ(gp, nullptr);
      }
      return;
    }
    for (std::size_t k = 0; k + 1 < n; ++k) {
      t.ring.push_back(v.ring.front());
      v.ring.pop_front();
    }
    ASSERT_EQ(gp, v.ring.front()) << "the last stolen goroutine runs now";
    v.ring.pop_front();
  }

  Q q_[2];
  Model model_[2];
};

template <std::uint32_t Cap>
void run_model(unsigned seed, int steps) {
  SCOPED_TRACE("seed " + std::to_string(seed) + ", capacity " +
               std::to_string(Cap));
  std::mt19937 rng(seed);
  std::vector<G> gs = make_gs(static_cast<std::size_t>(steps));
  RunqModel<Cap> model;
  for (int s = 0; s < steps; ++s) {
    model.step(rng, &gs[s]);  // each goroutine is put at most once
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(RunqModelTest, MatchesTheModelWithATinyQueue) {
  for (unsigned seed = 1; seed <= 200; ++seed) {
    run_model<4>(seed, 400);
    if (HasFatalFailure()) return;
  }
}

TEST(RunqModelTest, MatchesTheModelWithGosQueue) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    run_model<256>(seed, 4000);
    if (HasFatalFailure()) return;
  }
}

TEST(RunqTest, AFullQueueHandsOverItsOldestHalfAndTheNewGoroutine) {
  LocalRunQueue<8> q;
  std::vector<G> gs = make_gs(9);
  LocalRunQueue<8>::Overflow overflow{};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(q.owner().put(&gs[i], false, overflow), 0u);
  EXPECT_EQ(q.owner().put(&gs[8], false, overflow), 5u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(overflow[i], &gs[i]);
  EXPECT_EQ(overflow[4], &gs[8]);
  EXPECT_EQ(q.stealer().size(), 4u);
  EXPECT_EQ(q.owner().get().first, &gs[4]);
}

TEST(RunqTest, RunnextRunsFirstAndTheDisplacedOneQueues) {
  LocalRunQueue<8> q;
  std::vector<G> gs = make_gs(3);
  LocalRunQueue<8>::Overflow overflow{};
  q.owner().put(&gs[0], false, overflow);
  q.owner().put(&gs[1], true, overflow);
  q.owner().put(&gs[2], true, overflow);  // gs[1] moves to the tail
  EXPECT_EQ(q.owner().get(), std::make_pair(&gs[2], true));
  EXPECT_EQ(q.owner().get(), std::make_pair(&gs[0], false));
  EXPECT_EQ(q.owner().get(), std::make_pair(&gs[1], false));
  EXPECT_EQ(q.owner().get().first, nullptr);
}

// Conservation under concurrency: one owner putting and getting, thieves
// stealing into their own queues and draining them; every goroutine is
// taken exactly once, whatever the interleaving.
template <std::uint32_t Cap>
void concurrent_stealing(unsigned seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  constexpr int kThieves = 3, kGoroutines = 20000;
  std::vector<G> gs = make_gs(kGoroutines);
  std::vector<std::atomic<int>> taken(kGoroutines);
  auto index = [&](G* gp) { return static_cast<std::size_t>(gp - gs.data()); };
  auto take = [&](G* gp) { taken[index(gp)].fetch_add(1); };
  LocalRunQueue<Cap> victim;
  std::atomic<bool> done{false};
  std::vector<std::thread> thieves;
  for (int t = 0; t < kThieves; ++t) {
    thieves.emplace_back([&, t] {
      LocalRunQueue<Cap> mine;
      std::mt19937 rng(seed * 31 + t);
      while (!done.load() || !victim.stealer().empty()) {
        if (G* gp = mine.owner().steal(victim.stealer(), rng() % 2 == 0)) {
          take(gp);
          while (G* more = mine.owner().get().first) take(more);
        }
      }
    });
  }
  std::mt19937 rng(seed);
  typename LocalRunQueue<Cap>::Overflow overflow{};
  for (int i = 0; i < kGoroutines; ++i) {
    std::uint32_t n = victim.owner().put(&gs[i], rng() % 2 == 0, overflow);
    for (std::uint32_t k = 0; k < n; ++k) take(overflow[k]);  // the "GRQ"
    if (rng() % 3 == 0) {
      if (G* gp = victim.owner().get().first) take(gp);
    }
  }
  done.store(true);
  while (G* gp = victim.owner().get().first) take(gp);
  for (auto& t : thieves) t.join();
  for (int i = 0; i < kGoroutines; ++i) {
    ASSERT_EQ(taken[i].load(), 1) << "goroutine " << i;
  }
}

TEST(RunqStressTest, EveryGoroutineIsTakenExactlyOnceWhileStolen) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    concurrent_stealing<256>(seed);
    concurrent_stealing<4>(seed);  // full and wrapped all the time
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace gmp::stage3
