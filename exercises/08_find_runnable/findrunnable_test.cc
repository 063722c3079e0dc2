// Exercise 08's tests: findRunnable's order of sources and what each source
// leaves behind, the steal (oldest half, runnext last, every P visited,
// random and fair), and a seeded property over random scheduler states:
// every call takes from the source Go's order names, and no goroutine is
// ever lost or duplicated.
#include "exercises/08_find_runnable/findrunnable.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "exercises/testing/harness.h"

namespace gmp::exercises::findrunnable {
namespace {

// A scheduler state for one test: goroutines that stay put, a seeded
// fastrand, and a netpoll that hands out prepared lists and counts calls.
class World {
 public:
  explicit World(int procs, std::uint64_t seed = 1) : rng_(seed) {
    sched.allp.resize(procs);
    for (P& pp : sched.allp) pp.schedtick = 1;  // off the 61st tick
    sched.fastrand = [this] { return static_cast<std::uint32_t>(rng_.next()); };
    sched.netpoll = [this] {
      ++polls;
      if (ready.empty()) return std::vector<G*>{};
      std::vector<G*> list = ready.front();
      ready.pop_front();
      return list;
    };
  }
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  G* make() {
    all_.push_back(std::make_unique<G>());
    all_.back()->id = static_cast<int>(all_.size()) - 1;
    return all_.back().get();
  }
  std::vector<G*> make(int n) {
    std::vector<G*> gs;
    for (int i = 0; i < n; ++i) gs.push_back(make());
    return gs;
  }
  int made() const { return static_cast<int>(all_.size()); }
  std::deque<G*> queue(const std::vector<G*>& gs) {
    return std::deque<G*>(gs.begin(), gs.end());
  }

  Sched sched;
  std::deque<std::vector<G*>> ready;  // what the next netpoll calls return
  int polls = 0;                      // netpoll calls so far

 private:
  Chaos rng_;
  std::vector<std::unique_ptr<G>> all_;
};

std::deque<G*> dq(std::initializer_list<G*> gs) { return std::deque<G*>(gs); }

TEST(FindRunnableOrder, LocalQueueRunnextFirst) {
  World w(2);
  G *r = w.make(), *a = w.make(), *b = w.make(), *g = w.make(), *n = w.make(),
    *v = w.make();
  P& me = w.sched.allp[0];
  me.runnext = r;
  me.runq = dq({a, b});
  w.sched.grq = dq({g});
  w.ready.push_back({n});
  w.sched.allp[1].runq = dq({v});
  EXPECT_EQ(find_runnable(w.sched, 0), r) << "runnext runs first";
  EXPECT_EQ(find_runnable(w.sched, 0), a) << "then the local queue's head";
  EXPECT_EQ(find_runnable(w.sched, 0), b);
  EXPECT_EQ(w.sched.grq, dq({g})) << "local work comes before the global queue";
  EXPECT_EQ(w.polls, 0) << "local work comes before the poller";
  EXPECT_EQ(w.sched.allp[1].runq, dq({v}))
      << "local work comes before stealing";
  EXPECT_EQ(find_runnable(w.sched, 0), g)
      << "local queue empty: the global queue";
}

TEST(FindRunnableOrder, Every61stTickTakesOneGlobalGoroutineFirst) {
  World w(1);
  G *r = w.make(), *a = w.make(), *g1 = w.make(), *g2 = w.make(),
    *g3 = w.make();
  P& me = w.sched.allp[0];
  me.runnext = r;
  me.runq = dq({a});
  w.sched.grq = dq({g1, g2, g3});
  me.schedtick = 61;
  EXPECT_EQ(find_runnable(w.sched, 0), g1)
      << "schedtick 61: the global queue first";
  EXPECT_EQ(w.sched.grq, dq({g2, g3}))
      << "one goroutine only (max 1), not a batch";
  EXPECT_EQ(me.runnext, r);
  EXPECT_EQ(me.runq, dq({a})) << "nothing moves to the local queue";
  me.schedtick = 122;
  EXPECT_EQ(find_runnable(w.sched, 0), g2)
      << "schedtick 122 is a multiple of 61";
  me.schedtick = 62;
  EXPECT_EQ(find_runnable(w.sched, 0), r) << "schedtick 62: local work first";
  EXPECT_EQ(w.sched.grq, dq({g3}));
  w.sched.grq.clear();
  me.schedtick = 183;
  EXPECT_EQ(find_runnable(w.sched, 0), a)
      << "schedtick 183 with an empty global queue: the local queue";
}

TEST(FindRunnableOrder, GlobalQueueBatchBeforeNetpoll) {
  World w(2);
  std::vector<G*> g = w.make(10);
  G *n = w.make(), *v1 = w.make(), *v2 = w.make();
  w.sched.grq = w.queue(g);
  w.ready.push_back({n});
  w.sched.allp[1].runq = dq({v1, v2});
  P& me = w.sched.allp[0];
  // A batch of 10 / 2 + 1 = 6: the first runs, 5 go to the local queue.
  EXPECT_EQ(find_runnable(w.sched, 0), g[0]);
  EXPECT_EQ(me.runq, dq({g[1], g[2], g[3], g[4], g[5]}));
  EXPECT_EQ(w.sched.grq, dq({g[6], g[7], g[8], g[9]}));
  for (int i = 1; i < 10; ++i) {
    EXPECT_EQ(find_runnable(w.sched, 0), g[i]) << "the global order is kept";
  }
  EXPECT_EQ(w.polls, 0) << "the poller is asked only when the queues are empty";
  EXPECT_EQ(w.sched.allp[1].runq, dq({v1, v2}))
      << "queued work before stealing";
  EXPECT_EQ(find_runnable(w.sched, 0), n)
      << "queues empty: the poller's goroutine";
  EXPECT_EQ(w.polls, 1);
}

TEST(FindRunnableOrder, NetpollBeforeStealingAndTheRestAreInjected) {
  {
    SCOPED_TRACE("5 ready, 2 idle Ps");
    World w(4);
    std::vector<G*> n = w.make(5);
    G *v1 = w.make(), *r = w.make();
    w.sched.allp[1].runq = dq({v1});
    w.sched.allp[1].runnext = r;
    w.sched.npidle = 2;  // Ps 2 and 3, empty
    w.ready.push_back(n);
    EXPECT_EQ(find_runnable(w.sched, 0), n[0])
        << "the first ready goroutine runs";
    EXPECT_EQ(w.polls, 1);
    EXPECT_EQ(w.sched.grq, dq({n[1], n[2]}))
        << "one per idle P, to the global queue";
    EXPECT_EQ(w.sched.wakeups, 2) << "and those idle Ps are started";
    EXPECT_EQ(w.sched.npidle, 0);
    EXPECT_EQ(w.sched.allp[0].runq, dq({n[3], n[4]}))
        << "the rest: our own queue";
    EXPECT_EQ(w.sched.allp[1].runq, dq({v1}))
        << "the poller comes before stealing";
    EXPECT_EQ(w.sched.allp[1].runnext, r);
  }
  {
    SCOPED_TRACE("3 ready, no idle P");
    World w(2);
    std::vector<G*> n = w.make(3);
    w.ready.push_back(n);
    EXPECT_EQ(find_runnable(w.sched, 0), n[0]);
    EXPECT_TRUE(w.sched.grq.empty())
        << "no idle P: nothing to the global queue";
    EXPECT_EQ(w.sched.wakeups, 0);
    EXPECT_EQ(w.sched.allp[0].runq, dq({n[1], n[2]}));
  }
  {
    SCOPED_TRACE("2 ready, 3 idle Ps");
    World w(4);
    std::vector<G*> n = w.make(2);
    w.sched.npidle = 3;
    w.ready.push_back(n);
    EXPECT_EQ(find_runnable(w.sched, 0), n[0]);
    EXPECT_EQ(w.sched.grq, dq({n[1]}));
    EXPECT_EQ(w.sched.wakeups, 1) << "one P per injected goroutine, no more";
    EXPECT_EQ(w.sched.npidle, 2);
    EXPECT_TRUE(w.sched.allp[0].runq.empty());
  }
  {
    SCOPED_TRACE("300 ready, 1 idle P: our queue overflows");
    World w(2);
    std::vector<G*> n = w.make(300);
    w.sched.npidle = 1;
    w.ready.push_back(n);
    EXPECT_EQ(find_runnable(w.sched, 0), n[0]);
    // n[1] for the idle P; n[2..257] fill our 256 slots; the last 42
    // overflow to the global queue (runqput), after n[1].
    std::deque<G*> grq{n[1]};
    grq.insert(grq.end(), n.begin() + 2 + kLocalCapacity, n.end());
    EXPECT_EQ(w.sched.allp[0].runq.size(), kLocalCapacity)
        << "the rest go through runqput: a local queue holds 256 at most";
    EXPECT_EQ(w.sched.allp[0].runq,
              std::deque<G*>(n.begin() + 2, n.begin() + 2 + kLocalCapacity));
    EXPECT_EQ(w.sched.grq, grq)
        << "what does not fit overflows to the global queue, in order";
  }
  {
    SCOPED_TRACE("the poller has nothing: steal");
    World w(2);
    G *v1 = w.make(), *v2 = w.make();
    w.sched.allp[1].runq = dq({v1, v2});
    EXPECT_EQ(find_runnable(w.sched, 0), v1);
    EXPECT_EQ(w.polls, 1) << "the poller is asked once";
    w.sched.netpoll = nullptr;  // no poller at all
    EXPECT_EQ(find_runnable(w.sched, 0), v2)
        << "no poller: straight to stealing";
  }
}

TEST(FindRunnableSteal, TakesTheOldestHalfOfTheOnlyVictimWithWork) {
  for (int n : {1, 2, 3, 7, 256}) {
    for (std::uint64_t seed : stress_seeds(10, "findrunnable.oldest_half")) {
      SCOPED_TRACE(::testing::Message()
                   << "victim holds " << n << ", seed " << seed);
      // 8 Ps: the thief is P2, the only victim with work is P5, which also
      // has a runnext that must stay (its queue is not empty).
      World w(8, seed);
      std::vector<G*> gs = w.make(n);
      G* next = w.make();
      P& victim = w.sched.allp[5];
      victim.runq = w.queue(gs);
      victim.runnext = next;
      int half = n - n / 2;
      ASSERT_EQ(find_runnable(w.sched, 2), gs[half - 1])
          << "the newest of the stolen half runs; every P must be visited";
      EXPECT_EQ(w.sched.allp[2].runq,
                std::deque<G*>(gs.begin(), gs.begin() + half - 1))
          << "the older ones wait in the thief's queue, in order";
      EXPECT_EQ(victim.runq, std::deque<G*>(gs.begin() + half, gs.end()))
          << "the victim keeps its newest half";
      EXPECT_EQ(victim.runnext, next)
          << "runnext stays while the queue has work";
    }
  }
}

TEST(FindRunnableSteal, RunnextOnlyAsALastResort) {
  for (std::uint64_t seed : stress_seeds(30, "findrunnable.runnext_last")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    World w(4, seed);
    G *r1 = w.make(), *a = w.make();
    w.sched.allp[1].runnext = r1;    // P1: only a runnext
    w.sched.allp[3].runq = dq({a});  // P3: a queued goroutine
    ASSERT_EQ(find_runnable(w.sched, 0), a)
        << "a queued goroutine anywhere comes before any runnext";
    EXPECT_EQ(w.sched.allp[1].runnext, r1);
    ASSERT_EQ(find_runnable(w.sched, 0), r1)
        << "nothing else anywhere: the last round takes a runnext";
    EXPECT_EQ(w.sched.allp[1].runnext, nullptr);
    EXPECT_TRUE(w.sched.allp[0].runq.empty());
    EXPECT_EQ(find_runnable(w.sched, 0), nullptr) << "nothing left: park";
    EXPECT_EQ(w.polls, 3);
  }
}

// Which victim the first steal of a fresh world picks.
int first_victim(std::uint64_t seed, int self) {
  World w(4, seed);
  std::map<G*, int> owner;
  for (int p = 0; p < 4; ++p) {
    if (p == self) continue;
    for (G* g : w.make(2)) {
      w.sched.allp[p].runq.push_back(g);
      owner[g] = p;
    }
  }
  G* got = find_runnable(w.sched, self);
  return got == nullptr ? -1 : owner[got];
}

TEST(FindRunnableSteal, RandomOrderGivesEveryVictimItsTurn) {
  for (int self : {0, 3}) {
    SCOPED_TRACE(::testing::Message() << "thief P" << self);
    std::map<int, int> firsts;
    const int kRuns = 400;
    for (std::uint64_t seed : stress_seeds(kRuns, "findrunnable.fair")) {
      int v = first_victim(seed, self);
      ASSERT_EQ(v, first_victim(seed, self))
          << "same fastrand, same order: use sched.fastrand (seed " << seed
          << ")";
      ASSERT_NE(v, -1);
      ++firsts[v];
    }
    for (int p = 0; p < 4; ++p) {
      if (p == self) continue;
      // Go's order picks a victim first in 1/4 to 3/8 of the runs.
      EXPECT_GE(firsts[p], stress_iterations(kRuns) / 8)
          << "P" << p << " was robbed first in only " << firsts[p] << " of "
          << stress_iterations(kRuns) << " runs: is the order random?";
    }
  }
}

// Each of the 4 rounds draws its own order (one sched.fastrand() per
// round, as Go's stealWork does): with only runnexts to take, the first
// three rounds find nothing, and the last takes the runnext of the first
// victim in the order of the fourth draw, not of the first.
TEST(FindRunnableSteal, EveryRoundDrawsAFreshOrder) {
  for (std::uint64_t seed : stress_seeds(50, "findrunnable.fresh_order")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    World w(8, seed);
    Chaos rng(seed);
    std::vector<std::uint32_t> draws;
    w.sched.fastrand = [&] {
      draws.push_back(static_cast<std::uint32_t>(rng.next()));
      return draws.back();
    };
    const int self = static_cast<int>(seed % 8);
    std::map<G*, int> owner;
    for (int p = 0; p < 8; ++p) {
      if (p == self || p % 3 == 0) continue;  // some Ps have nothing at all
      w.sched.allp[p].runnext = w.make();
      owner[w.sched.allp[p].runnext] = p;
    }
    G* got = find_runnable(w.sched, self);
    ASSERT_NE(got, nullptr) << "the last round takes a runnext";
    ASSERT_EQ(draws.size(), static_cast<std::size_t>(kStealTries))
        << "one sched.fastrand() per round, 4 rounds";
    auto first_in = [&](std::uint32_t r) {  // in the state before the call
      StealOrder order(8);
      for (auto e = order.start(r); !e.done(); e.next()) {
        int p = static_cast<int>(e.position());
        if (p != self && p % 3 != 0) return p;  // the first with a runnext
      }
      return -1;
    };
    EXPECT_EQ(owner[got], first_in(draws.back()))
        << "the last round walks the order of its own draw";
  }
}

// ---- The property: random states, Go's order, nothing lost or duplicated ----

struct Before {
  std::vector<P> allp;
  std::deque<G*> grq;
  int npidle;
};

// Checks the goroutine find_runnable returned, and what it moved, against
// the source Go's order names in the state `b` before the call.
void check_step(const World& w, const Before& b, int self, G* got,
                int polls_before, const std::vector<G*>& polled) {
  const Sched& s = w.sched;
  const P& me = b.allp[self];
  int procs = static_cast<int>(b.allp.size());
  bool poll_expected = false;
  if (me.schedtick % kFairnessTick == 0 && !b.grq.empty()) {
    ASSERT_EQ(got, b.grq.front())
        << "schedtick " << me.schedtick << ": the 61 rule";
    ASSERT_EQ(s.grq.size(), b.grq.size() - 1) << "the 61 rule takes one";
  } else if (me.runnext != nullptr) {
    ASSERT_EQ(got, me.runnext) << "runnext first";
  } else if (!me.runq.empty()) {
    ASSERT_EQ(got, me.runq.front()) << "then the local queue";
  } else if (!b.grq.empty()) {
    std::size_t n =
        std::min({b.grq.size() / procs + 1, b.grq.size(), kLocalCapacity / 2});
    ASSERT_EQ(got, b.grq.front()) << "then the global queue";
    ASSERT_EQ(s.grq.size(), b.grq.size() - n)
        << "a batch of len/gomaxprocs + 1";
  } else {
    poll_expected = true;
    ASSERT_EQ(w.polls, polls_before + 1) << "then the poller, once";
    if (!polled.empty()) {
      ASSERT_EQ(got, polled.front()) << "the poller's first goroutine runs";
      std::size_t n = std::min<std::size_t>(b.npidle, polled.size() - 1);
      ASSERT_EQ(s.grq,
                std::deque<G*>(polled.begin() + 1, polled.begin() + 1 + n))
          << "one injected goroutine per idle P to the global queue";
      ASSERT_EQ(s.npidle, b.npidle - static_cast<int>(n));
      ASSERT_EQ(s.allp[self].runq,
                std::deque<G*>(polled.begin() + 1 + n, polled.end()))
          << "the others to our queue";
    } else {
      int queued = -1, nexted = -1;
      for (int p = 0; p < procs; ++p) {
        if (p == self) continue;
        if (!b.allp[p].runq.empty()) queued = p;
        if (b.allp[p].runnext != nullptr) nexted = p;
      }
      if (queued == -1 && nexted == -1) {
        ASSERT_EQ(got, nullptr) << "nothing anywhere: park";
      } else {
        ASSERT_NE(got, nullptr)
            << "P" << (queued != -1 ? queued : nexted) << " had work to steal";
      }
      if (queued != -1) {  // some victim's queue had work: no runnext taken
        bool from_queue = false;
        for (int p = 0; p < procs; ++p) {
          const std::deque<G*>& q = b.allp[p].runq;
          if (p == self || q.empty()) continue;
          std::size_t half = q.size() - q.size() / 2;
          if (q[half - 1] != got) continue;
          from_queue = true;
          ASSERT_EQ(s.allp[p].runq, std::deque<G*>(q.begin() + half, q.end()))
              << "the victim P" << p << " keeps its newest half";
          ASSERT_EQ(s.allp[self].runq,
                    std::deque<G*>(q.begin(), q.begin() + half - 1))
              << "the thief queues the rest of the oldest half";
        }
        ASSERT_TRUE(from_queue)
            << "a steal returns the newest of a victim's oldest half";
        for (int p = 0; p < procs; ++p) {
          ASSERT_EQ(s.allp[p].runnext, p == self ? nullptr : b.allp[p].runnext)
              << "P" << p << "'s runnext was taken while queues had work";
        }
      } else if (nexted != -1) {  // only runnexts: the last round takes one
        bool taken = false;
        for (int p = 0; p < procs; ++p) {
          if (p != self && b.allp[p].runnext == got) {
            taken = true;
            ASSERT_EQ(s.allp[p].runnext, nullptr)
                << "P" << p << "'s runnext moved";
          }
        }
        ASSERT_TRUE(taken) << "only runnexts had work: one of them is stolen";
      }
    }
  }
  if (!poll_expected) {
    ASSERT_EQ(w.polls, polls_before)
        << "the poller was asked though a queue had work";
  }
}

// Every goroutine made is exactly once in `ran` or in some queue.
void check_conservation(const World& w, int made, const std::vector<int>& ran) {
  std::vector<int> seen(ran);
  auto count = [&](G* g) { ++seen.at(g->id); };
  for (const P& pp : w.sched.allp) {
    for (G* g : pp.runq) count(g);
    if (pp.runnext != nullptr) count(pp.runnext);
  }
  for (G* g : w.sched.grq) count(g);
  for (int id = 0; id < made; ++id) {
    ASSERT_EQ(seen[id], 1) << "goroutine " << id << " is "
                           << (seen[id] == 0 ? "lost" : "duplicated");
  }
}

void random_state(World& w, Chaos& rnd, int procs, int self) {
  int empty_others = 0;
  for (int p = 0; p < procs; ++p) {
    P& pp = w.sched.allp[p];
    int len = 0;
    // Half empty, most of the rest short, 1 in 12 long (up to full).
    std::uint32_t kind = rnd.below(12);
    if (kind == 11) {
      len = 100 + static_cast<int>(rnd.below(157));
    } else if (kind >= 6) {
      len = 1 + static_cast<int>(rnd.below(12));
    }
    if (p == self && rnd.below(2) == 0) len = 0;
    for (G* g : w.make(len)) pp.runq.push_back(g);
    if (rnd.below(3) == 0) pp.runnext = w.make();
    pp.schedtick = rnd.below(4) == 0 ? 61 * rnd.below(3) : 1 + rnd.below(1000);
    if (p != self && pp.runq.empty() && pp.runnext == nullptr) ++empty_others;
  }
  if (rnd.below(2) == 0) {
    int len = static_cast<int>(rnd.below(rnd.below(4) == 0 ? 300 : 30));
    for (G* g : w.make(len)) w.sched.grq.push_back(g);
  }
  w.sched.npidle = static_cast<int>(rnd.below(empty_others + 1));
}

TEST(FindRunnableProperty, RandomStatesKeepGosOrderAndLoseNothing) {
  for (std::uint64_t seed : stress_seeds(200, "findrunnable.property")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    Chaos rnd(seed);
    int procs = 1 + static_cast<int>(rnd.below(6));
    int self = static_cast<int>(rnd.below(procs));
    World w(procs, seed);
    random_state(w, rnd, procs, self);
    std::vector<G*> polled;
    int poll_budget = 3;
    w.sched.netpoll = [&] {
      ++w.polls;
      polled.clear();
      if (poll_budget > 0 && rnd.below(2) == 0) {
        --poll_budget;
        polled = w.make(1 + static_cast<int>(rnd.below(5)));
      }
      return polled;
    };
    std::vector<int> ran;
    int made = 0;
    for (int step = 0; step < 5000; ++step) {
      Before b{w.sched.allp, w.sched.grq, w.sched.npidle};
      int polls_before = w.polls;
      G* got = find_runnable(w.sched, self);
      check_step(w, b, self, got, polls_before, polled);
      if (HasFatalFailure()) return;
      made = w.made();
      ran.resize(made, 0);
      if (got != nullptr) ++ran[got->id];
      check_conservation(w, made, ran);
      if (HasFatalFailure()) return;
      if (got == nullptr) break;          // checked: nothing was left anywhere
      w.sched.allp[self].schedtick += 1;  // execute's new time slice
    }
    for (int id = 0; id < made; ++id) {
      ASSERT_EQ(ran[id], 1) << "goroutine " << id << " never ran";
    }
  }
}

}  // namespace
}  // namespace gmp::exercises::findrunnable
