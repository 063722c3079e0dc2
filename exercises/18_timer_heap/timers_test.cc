// Exercise 18's tests: the 4-ary heap's shape and its comparisons, O(1)
// deletion, due timers run earliest first, periodic timers, the clean-up of
// deleted timers, bad input, then seeded random operations against a
// sorted model.
#include "exercises/18_timer_heap/timers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "exercises/testing/harness.h"

namespace gmp::exercises::timers {
namespace {

// Whether pp.timers is a 4-ary min-heap by `when`; names the first break.
::testing::AssertionResult is_heap4(const P& pp) {
  for (std::size_t i = 1; i < pp.timers.size(); ++i) {
    std::size_t parent = (i - 1) / 4;
    if (pp.timers[i]->when < pp.timers[parent]->when) {
      return ::testing::AssertionFailure()
             << "index " << i << " (when " << pp.timers[i]->when
             << ") fires before its parent, index " << parent << " (when "
             << pp.timers[parent]->when << "): not a 4-ary heap";
    }
  }
  if (pp.timer0_when != (pp.timers.empty() ? 0 : pp.timers[0]->when)) {
    return ::testing::AssertionFailure()
           << "timer0_when " << pp.timer0_when << " is not the top's when";
  }
  return ::testing::AssertionSuccess();
}

std::vector<std::unique_ptr<Timer>> make_timers(
    const std::vector<std::int64_t>& whens) {
  std::vector<std::unique_ptr<Timer>> ts;
  for (std::size_t i = 0; i < whens.size(); ++i) {
    ts.push_back(std::make_unique<Timer>());
    ts.back()->id = static_cast<int>(i);
    ts.back()->when = whens[i];
  }
  return ts;
}

int levels(std::size_t n) {  // of a 4-ary heap of n
  int l = 0;
  for (std::size_t full = 0, row = 1; full < n; full += row, row *= 4) ++l;
  return l;
}

TEST(Heap, AddKeepsAFourAryHeapInFewComparisons) {
  Chaos rng(base_seed());
  std::vector<std::int64_t> whens;
  for (int i = 0; i < 300; ++i) whens.push_back(1 + rng.below(1000));
  auto ts = make_timers(whens);
  P pp;
  for (std::size_t i = 0; i < ts.size(); ++i) {
    std::uint64_t before = pp.comparisons;
    addtimer(pp, *ts[i]);
    ASSERT_TRUE(is_heap4(pp)) << "after adding timer " << i;
    ASSERT_EQ(ts[i]->status, Status::kWaiting);
    ASSERT_LE(pp.comparisons - before,
              static_cast<std::uint64_t>(levels(i + 1)))
        << "siftup compares with one parent per level";
  }
}

TEST(Heap, SiftdownTakesTheEarliestOfFourChildren) {
  // The root is late; its children are 40, 20, 30, 10; below the 10 sit
  // 15, 12, 50, 60 (indexes 17-20).
  std::vector<std::int64_t> whens(21, 100);
  whens[0] = 99;
  whens[1] = 40;
  whens[2] = 20;
  whens[3] = 30;
  whens[4] = 10;
  whens[17] = 15;
  whens[18] = 12;
  whens[19] = 50;
  whens[20] = 60;
  for (int i = 5; i <= 16; ++i) whens[i] = 200 + i;  // below 40, 20, 30
  auto ts = make_timers(whens);
  P pp;
  for (auto& t : ts) pp.timers.push_back(t.get());
  siftdown(pp, 0);
  EXPECT_EQ(pp.timers[0]->when, 10) << "the earliest of four children moves up";
  EXPECT_EQ(pp.timers[4]->when, 12) << "and again, one level down";
  EXPECT_EQ(pp.timers[18]->when, 99) << "the late timer ends where 12 was";
  EXPECT_LE(pp.comparisons, 3u * 4u) << "at most 4 comparisons per level";
  pp.timer0_when = pp.timers[0]->when;
  EXPECT_TRUE(is_heap4(pp));
}

TEST(Deltimer, MarksWithoutTouchingTheHeap) {
  auto ts = make_timers({50, 10, 70, 30, 90, 20, 60, 40, 80});
  P pp;
  for (auto& t : ts) addtimer(pp, *t);
  std::vector<Timer*> before = pp.timers;
  std::uint64_t cmp = pp.comparisons;
  EXPECT_TRUE(deltimer(pp, *ts[3])) << "a waiting timer is stopped";
  EXPECT_EQ(ts[3]->status, Status::kDeleted);
  EXPECT_EQ(pp.deleted, 1);
  EXPECT_EQ(pp.timers, before) << "deltimer moves nothing: O(1)";
  EXPECT_EQ(pp.comparisons, cmp) << "deltimer compares nothing";
  EXPECT_FALSE(deltimer(pp, *ts[3])) << "deleted already";
  Timer never;
  EXPECT_FALSE(deltimer(pp, never)) << "never added";
  EXPECT_EQ(pp.deleted, 1);
}

// The earliest timer is no exception: deltimer marks it where it is, and
// timer0_when keeps its deadline (a lower bound, as Go's timer0When) until
// check_timers takes it out.
TEST(Deltimer, MarksTheTopToo) {
  auto ts = make_timers({50, 10, 70, 30, 90, 20, 60, 40, 80});
  P pp;
  for (auto& t : ts) addtimer(pp, *t);
  ASSERT_EQ(pp.timers[0], ts[1].get());
  std::vector<Timer*> before = pp.timers;
  std::uint64_t cmp = pp.comparisons;
  EXPECT_TRUE(deltimer(pp, *ts[1])) << "the top, waiting: stopped";
  EXPECT_EQ(ts[1]->status, Status::kDeleted) << "marked, not removed";
  EXPECT_EQ(pp.deleted, 1);
  EXPECT_EQ(pp.timers, before) << "deltimer moves nothing, even at the top";
  EXPECT_EQ(pp.comparisons, cmp) << "deltimer compares nothing";
  EXPECT_EQ(pp.timer0_when, 10) << "still the top's deadline";
  EXPECT_EQ(check_timers(pp, 5), 0);
  EXPECT_EQ(ts[1]->status, Status::kRemoved) << "taken out at the top";
  EXPECT_EQ(pp.deleted, 0);
  EXPECT_EQ(pp.timers.size(), 8u);
  EXPECT_TRUE(is_heap4(pp));
}

TEST(CheckTimers, RunsDueTimersEarliestFirstAndSkipsDeletedOnes) {
  auto ts = make_timers({70, 10, 50, 30, 90, 20, 60, 40, 80, 100});
  std::vector<std::int64_t> ran;
  P pp;
  for (auto& t : ts) {
    t->f = [&ran](Timer& self) { ran.push_back(self.when); };
    addtimer(pp, *t);
  }
  ASSERT_TRUE(deltimer(pp, *ts[1]));  // 10, at the top
  ASSERT_TRUE(deltimer(pp, *ts[7]));  // 40
  EXPECT_EQ(check_timers(pp, 55), 3);
  EXPECT_EQ(ran, (std::vector<std::int64_t>{20, 30, 50}))
      << "earliest first, none deleted";
  for (int i : {2, 3, 5})
    EXPECT_EQ(ts[i]->status, Status::kRemoved) << "fired one-shot";
  EXPECT_EQ(ts[1]->status, Status::kRemoved)
      << "a deleted timer met at the top is taken out";
  EXPECT_EQ(ts[7]->status, Status::kRemoved);
  EXPECT_EQ(pp.deleted, 0);
  EXPECT_EQ(pp.timers.size(), 5u);
  EXPECT_EQ(pp.timer0_when, 60);
  EXPECT_TRUE(is_heap4(pp));
  EXPECT_EQ(check_timers(pp, 59), 0) << "nothing due";

  // One deleted at the top, one deep in the heap: only the top one leaves,
  // and pp.deleted counts the one still in the heap.
  auto us = make_timers({10, 20, 30, 40, 50, 60, 70, 80, 90, 100});
  P qq;
  for (auto& t : us) addtimer(qq, *t);
  ASSERT_TRUE(deltimer(qq, *us[0]));  // 10, at the top
  ASSERT_TRUE(deltimer(qq, *us[9]));  // 100
  EXPECT_EQ(check_timers(qq, 15), 0);
  EXPECT_EQ(us[0]->status, Status::kRemoved);
  EXPECT_EQ(qq.deleted, 1) << "1 deleted timer left in a heap of 9: kept";
  EXPECT_EQ(qq.timers.size(), 9u);

  // A one-shot timer is out of the heap when its f runs: f may add it
  // again.
  P rr;
  Timer again;
  again.id = 1;
  again.when = 5;
  int fired = 0;
  Status seen = Status::kWaiting;
  again.f = [&](Timer& self) {
    seen = self.status;
    if (++fired == 1) {
      self.when = 500;
      addtimer(rr, self);
    }
  };
  addtimer(rr, again);
  EXPECT_EQ(check_timers(rr, 10), 1);
  EXPECT_EQ(seen, Status::kRemoved) << "f ran before its timer left the heap";
  ASSERT_EQ(rr.timers.size(), 1u) << "f added its timer again";
  EXPECT_EQ(again.status, Status::kWaiting);
  EXPECT_EQ(rr.timer0_when, 500);
}

TEST(CheckTimers, APeriodicTimerSkipsTheMissedPeriods) {
  Timer t;
  t.when = 100;
  t.period = 30;
  int fired = 0;
  t.f = [&fired](Timer&) { ++fired; };
  P pp;
  addtimer(pp, t);
  EXPECT_EQ(check_timers(pp, 195), 1) << "late by three periods: fires once";
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(t.when, 220) << "the first 100 + k*30 after 195";
  EXPECT_EQ(t.status, Status::kWaiting);
  EXPECT_EQ(check_timers(pp, 220), 1);
  EXPECT_EQ(t.when, 250) << "due exactly now: the next one is a period later";
  EXPECT_EQ(pp.timer0_when, 250);
}

// More than a quarter of the heap deleted: all cleared at once, and the
// rest is a heap again.
TEST(CheckTimers, ClearsDeletedTimersPastAQuarter) {
  std::vector<std::int64_t> whens;
  for (int i = 0; i < 20; ++i) whens.push_back(1000 + 37 * ((i * 7) % 20));
  auto ts = make_timers(whens);
  P pp;
  for (auto& t : ts) addtimer(pp, *t);
  std::vector<Timer*> victims;
  for (Timer* t : pp.timers) {
    if (t != pp.timers[0] && victims.size() < 6) victims.push_back(t);
  }
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(deltimer(pp, *victims[i]));
  EXPECT_EQ(check_timers(pp, 0), 0);
  EXPECT_EQ(pp.deleted, 5) << "5 of 20 is not more than a quarter: left";
  EXPECT_EQ(pp.timers.size(), 20u);
  ASSERT_TRUE(deltimer(pp, *victims[5]));
  EXPECT_EQ(check_timers(pp, 0), 0);
  EXPECT_EQ(pp.deleted, 0) << "6 of 20: all cleared";
  EXPECT_EQ(pp.timers.size(), 14u);
  for (Timer* v : victims) EXPECT_EQ(v->status, Status::kRemoved);
  EXPECT_TRUE(is_heap4(pp));
}

// Deleted timers at the top are taken out whether or not they are due:
// the top that decides whether anything is due, and timer0_when, is the
// earliest waiting timer.
TEST(CheckTimers, TakesOutADeletedTopThatIsNotYetDue) {
  // 12 timers: 2 deleted are not more than a quarter, no clean-up.
  auto ts = make_timers({10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120});
  P pp;
  int fired = 0;
  for (auto& t : ts) {
    t->f = [&fired](Timer&) { ++fired; };
    addtimer(pp, *t);
  }
  ASSERT_TRUE(deltimer(pp, *ts[0]));  // 10, at the top
  ASSERT_TRUE(deltimer(pp, *ts[1]));  // 20, the top once 10 is out
  EXPECT_EQ(check_timers(pp, 5), 0) << "nothing is due at 5";
  EXPECT_EQ(fired, 0);
  EXPECT_EQ(ts[0]->status, Status::kRemoved)
      << "a deleted top leaves even before its time";
  EXPECT_EQ(ts[1]->status, Status::kRemoved) << "and so does the next one";
  EXPECT_EQ(pp.deleted, 0);
  EXPECT_EQ(pp.timers.size(), 10u);
  EXPECT_EQ(pp.timer0_when, 30) << "the earliest waiting timer's deadline";
  EXPECT_TRUE(is_heap4(pp));
}

// Go's timerHeapify (siftdown from the last parent up to the root), here
// on the `when`s alone: what clear_deleted_timers must leave.
std::vector<std::int64_t> heapified(std::vector<std::int64_t> a) {
  const std::size_t n = a.size();
  for (std::size_t p = n > 1 ? (n - 2) / 4 + 1 : 0; p-- > 0;) {
    std::size_t i = p;
    for (;;) {
      std::size_t best = i;
      for (std::size_t c = 4 * i + 1; c <= 4 * i + 4 && c < n; ++c) {
        if (a[c] < a[best]) best = c;
      }
      if (best == i) break;
      std::swap(a[i], a[best]);
      i = best;
    }
  }
  return a;
}

// A heap of 1365 (six full levels) whose 341 parents are deleted, the top
// among them; the 1024 leaves are kept, later ones earlier. The kept
// timers stay in their order and are heapified in O(n): Go's
// timerHeapify makes about 4/3 comparisons per timer here (at most 4 per
// level, and most timers are near the bottom), where sifting each kept
// timer up (as if adding them again) or sorting them makes over 4.
TEST(ClearDeletedTimers, KeepsTheOrderAndHeapifiesInLinearTime) {
  constexpr std::size_t kParents = 341, kLeaves = 1024;
  std::vector<std::int64_t> whens;
  for (std::size_t i = 0; i < kParents; ++i) {
    whens.push_back(static_cast<std::int64_t>(1 + i));  // parents: early
  }
  std::vector<std::int64_t> kept;
  for (std::size_t j = 0; j < kLeaves; ++j) {
    whens.push_back(static_cast<std::int64_t>(100'000 - 7 * j));
    kept.push_back(whens.back());
  }
  auto ts = make_timers(whens);
  P pp;
  for (auto& t : ts) {
    t->status = Status::kWaiting;
    pp.timers.push_back(t.get());
  }
  pp.timer0_when = 1;
  ASSERT_TRUE(is_heap4(pp)) << "the test's own heap";
  for (std::size_t i = 0; i < kParents; ++i) ASSERT_TRUE(deltimer(pp, *ts[i]));
  std::uint64_t before = pp.comparisons;
  clear_deleted_timers(pp);
  std::uint64_t cmp = pp.comparisons - before;
  for (std::size_t i = 0; i < kParents; ++i) {
    ASSERT_EQ(ts[i]->status, Status::kRemoved) << "deleted timer " << i;
  }
  EXPECT_EQ(pp.deleted, 0);
  ASSERT_EQ(pp.timers.size(), kLeaves);
  EXPECT_TRUE(is_heap4(pp)) << "(timer0_when: the new top's, not the "
                               "deleted top's)";
  EXPECT_LE(cmp, 2 * kLeaves)
      << "the rebuild is not O(n): " << cmp << " comparisons for " << kLeaves
      << " timers";
  std::vector<std::int64_t> got;
  for (Timer* t : pp.timers) got.push_back(t->when);
  EXPECT_EQ(got, heapified(kept))
      << "not the heap that Go's clean-up leaves: the kept timers in their "
         "order, then siftdown from the last parent up to the root";
}

TEST(Addtimer, RejectsAnInitializedTimerAndBadInput) {
  P pp;
  Timer t;
  t.when = 5;
  addtimer(pp, t);
  auto expect_throw = [&pp](Timer& x, const char* what) {
    try {
      addtimer(pp, x);
      ADD_FAILURE() << "addtimer accepted it; expected \"" << what << "\"";
    } catch (const std::logic_error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos)
          << e.what();
    }
  };
  expect_throw(t, "addtimer called with initialized timer");
  Timer zero;
  expect_throw(zero, "timer when must be positive");
  Timer negative;
  negative.when = 1;
  negative.period = -1;
  expect_throw(negative, "timer period must be non-negative");
  EXPECT_EQ(pp.timers.size(), 1u) << "nothing added by a refused call";
}

// Random adds, stops and checks; every check's runs compared with a model
// that keeps the waiting timers sorted.
TEST(TimersProperty, RandomOperationsAgainstASortedModel) {
  for (std::uint64_t seed : stress_seeds(30, "TimersProperty")) {
    Chaos rng(seed);
    P pp;
    std::vector<std::unique_ptr<Timer>> all;
    std::multimap<std::int64_t, Timer*> model;  // waiting timers by when
    std::vector<Timer*> ran;
    std::int64_t now = 0;
    for (int step = 0; step < 2000; ++step) {
      std::uint32_t op = rng.below(10);
      if (op < 5) {
        all.push_back(std::make_unique<Timer>());
        Timer* t = all.back().get();
        t->id = static_cast<int>(all.size());
        t->when = now + 1 + rng.below(500);
        t->f = [&ran](Timer& self) { ran.push_back(&self); };
        addtimer(pp, *t);
        model.emplace(t->when, t);
      } else if (op < 8 && !all.empty()) {
        Timer* t = all[rng.below(static_cast<std::uint32_t>(all.size()))].get();
        bool waiting = t->status == Status::kWaiting;
        ASSERT_EQ(deltimer(pp, *t), waiting) << "seed " << seed;
        if (waiting) {
          auto range = model.equal_range(t->when);
          for (auto it = range.first; it != range.second; ++it) {
            if (it->second == t) {
              model.erase(it);
              break;
            }
          }
        }
      } else {
        now += rng.below(200);
        ran.clear();
        int n = check_timers(pp, now);
        std::vector<Timer*> want;
        while (!model.empty() && model.begin()->first <= now) {
          want.push_back(model.begin()->second);
          model.erase(model.begin());
        }
        ASSERT_EQ(n, static_cast<int>(want.size()))
            << "seed " << seed << " step " << step;
        ASSERT_EQ(ran.size(), want.size());
        for (std::size_t i = 0; i < ran.size(); ++i) {
          ASSERT_EQ(ran[i]->when, want[i]->when)
              << "fired out of order; seed " << seed << " step " << step;
        }
        ASSERT_LE(pp.deleted, static_cast<int>(pp.timers.size()) / 4)
            << "seed " << seed;
      }
      ASSERT_TRUE(is_heap4(pp)) << "seed " << seed << " step " << step;
      int waiting = 0;
      for (Timer* t : pp.timers) waiting += t->status == Status::kWaiting;
      ASSERT_EQ(waiting, static_cast<int>(model.size())) << "seed " << seed;
    }
  }
}

}  // namespace
}  // namespace gmp::exercises::timers
