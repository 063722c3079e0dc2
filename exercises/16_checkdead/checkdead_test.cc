// Exercise 16's tests: each of checkdead's rules on a hand-made snapshot,
// then seeded random snapshots against the rules written as a table.
#include "exercises/16_checkdead/checkdead.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "exercises/testing/harness.h"

namespace gmp::exercises::checkdead {
namespace {

const char* name(Verdict v) {
  switch (v) {
    case Verdict::kAlive:
      return "kAlive";
    case Verdict::kNoGoroutines:
      return "kNoGoroutines";
    case Verdict::kDeadlock:
      return "kDeadlock";
  }
  return "?";
}

// A program whose goroutines all wait (main on a channel, one on a lock),
// with `ms` Ms of which every one is idle, and no timer.
Snapshot all_asleep(int ms) {
  Snapshot s;
  s.mcount = ms;
  s.nmidle = ms;
  s.allgs = {{1, GStatus::kWaiting, false}, {2, GStatus::kWaiting, false}};
  s.timers_per_p = {0, 0};
  return s;
}

// checkdead(s) throws a logic_error whose message contains `what`.
void expect_throw(const Snapshot& s, const std::string& what) {
  try {
    Verdict v = checkdead(s);
    ADD_FAILURE() << "returned " << name(v) << "; expected to throw \"" << what
                  << "\"";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(Checkdead, ARunningMMeansAlive) {
  Snapshot s = all_asleep(3);
  EXPECT_STREQ(name(checkdead(s)), "kDeadlock")
      << "every M idle, every G waits";
  s.nmidle = 2;  // one M runs: it may still wake the others
  EXPECT_STREQ(name(checkdead(s)), "kAlive");
}

// sysmon and the template thread never run goroutines, and an M waiting
// for its locked goroutine (LockOSThread) cannot run any other: none of
// them keeps the program alive.
TEST(Checkdead, SystemMsAndLockedWaitersDoNotRun) {
  Snapshot s = all_asleep(4);
  s.nmidle = 1;
  s.nmidlelocked = 1;
  s.nmsys = 2;  // sysmon, the template thread
  EXPECT_STREQ(name(checkdead(s)), "kDeadlock")
      << "4 Ms: 1 idle, 1 waiting for its locked G, 2 the runtime's own";
  s.nmsys = 1;  // the second system M is a real one, running
  EXPECT_STREQ(name(checkdead(s)), "kAlive");
  s.nmsys = 2;
  s.nmidlelocked = 0;  // that M now runs its locked goroutine
  EXPECT_STREQ(name(checkdead(s)), "kAlive");
}

TEST(Checkdead, InconsistentCountsThrow) {
  Snapshot s = all_asleep(2);
  s.nmidle = 2;
  s.nmsys = 1;  // 3 Ms not running, of 2
  expect_throw(s, "checkdead: inconsistent counts");
}

TEST(Checkdead, ARunnableGWithNoMThrows) {
  for (GStatus st :
       {GStatus::kRunnable, GStatus::kRunning, GStatus::kSyscall}) {
    Snapshot s = all_asleep(2);
    s.allgs.push_back({3, st, false});
    SCOPED_TRACE("G 3's status " + std::to_string(static_cast<int>(st)));
    expect_throw(s, "checkdead: runnable g");
    s.allgs.back().system = true;  // the runtime's own goroutine: ignored
    EXPECT_STREQ(name(checkdead(s)), "kDeadlock");
  }
  Snapshot s = all_asleep(2);
  s.allgs.push_back({3, GStatus::kDead, false});  // ended: ignored
  s.allgs.push_back({4, GStatus::kIdle, false});  // not yet started: ignored
  EXPECT_STREQ(name(checkdead(s)), "kDeadlock");
}

// A goroutine stopped by an async preemption (suspendG) will run again
// once it is resumed: for checkdead it waits, as a parked one does.
TEST(Checkdead, APreemptedGoroutineCountsAsWaiting) {
  Snapshot s = all_asleep(1);
  s.allgs = {{1, GStatus::kDead, false}, {2, GStatus::kPreempted, false}};
  EXPECT_STREQ(name(checkdead(s)), "kDeadlock");
}

// main called runtime.Goexit and every other goroutine ended: no goroutine
// is left to wait, which Go reports before it looks at any timer.
TEST(Checkdead, NoGoroutinesWhenMainCalledGoexit) {
  Snapshot s = all_asleep(2);
  s.allgs = {{1, GStatus::kDead, false}, {2, GStatus::kWaiting, true}};
  EXPECT_STREQ(name(checkdead(s)), "kNoGoroutines");
  s.timers_per_p = {0, 3};  // a timer, but no goroutine of the program
  EXPECT_STREQ(name(checkdead(s)), "kNoGoroutines");
  EXPECT_EQ(fatal_message(checkdead(s)),
            "no goroutines (main called runtime.Goexit) - deadlock!");
  // A goroutine made but not yet started (kIdle) does not wait either.
  s.allgs.push_back({3, GStatus::kIdle, false});
  EXPECT_STREQ(name(checkdead(s)), "kNoGoroutines")
      << "a kIdle goroutine is not asleep";
}

TEST(Checkdead, APendingTimerOnAnyPKeepsItAlive) {
  Snapshot s = all_asleep(2);
  s.timers_per_p = {0, 0, 0, 1};  // a sleep on the last P
  EXPECT_STREQ(name(checkdead(s)), "kAlive")
      << "the timer will wake a goroutine";
  s.timers_per_p = {1, 0, 0, 0};  // a sleep on the first P
  EXPECT_STREQ(name(checkdead(s)), "kAlive")
      << "the timer on P 0 will wake a goroutine";
  s.timers_per_p = {};
  EXPECT_STREQ(name(checkdead(s)), "kDeadlock");
  EXPECT_EQ(fatal_message(checkdead(s)),
            "all goroutines are asleep - deadlock!");
}

TEST(Checkdead, APanickingProgramIsLeftAlone) {
  Snapshot s = all_asleep(2);
  s.panicking = true;
  EXPECT_STREQ(name(checkdead(s)), "kAlive");
  s.nmsys = 5;  // even counts that make no sense: the panic is reported
  EXPECT_STREQ(name(checkdead(s)), "kAlive");
}

// The rules again, as a decision table, on random snapshots.
TEST(CheckdeadProperty, RandomSnapshotsFollowTheRules) {
  for (std::uint64_t seed : stress_seeds(500, "CheckdeadProperty")) {
    Chaos rng(seed);
    Snapshot s;
    s.mcount = static_cast<int>(rng.below(5));
    s.nmidle = static_cast<int>(rng.below(3));
    s.nmidlelocked = static_cast<int>(rng.below(2));
    s.nmsys = static_cast<int>(rng.below(3));
    s.panicking = rng.below(10) == 0;
    int ng = static_cast<int>(rng.below(6));
    bool busy_g = false;
    int waiting = 0;
    for (int i = 0; i < ng; ++i) {
      GInfo g{static_cast<std::uint64_t>(i + 1),
              static_cast<GStatus>(rng.below(7)), rng.below(4) == 0};
      if (!g.system) {
        busy_g |= g.status == GStatus::kRunnable ||
                  g.status == GStatus::kRunning ||
                  g.status == GStatus::kSyscall;
        waiting +=
            g.status == GStatus::kWaiting || g.status == GStatus::kPreempted;
      }
      s.allgs.push_back(g);
    }
    bool timers = false;
    for (int p = static_cast<int>(rng.below(4)); p > 0; --p) {
      s.timers_per_p.push_back(rng.below(3) == 0 ? 1 : 0);
      timers |= s.timers_per_p.back() > 0;
    }
    int run = s.mcount - s.nmidle - s.nmidlelocked - s.nmsys;
    SCOPED_TRACE("seed " + std::to_string(seed) + ", run " +
                 std::to_string(run));
    if (s.panicking || run > 0) {
      EXPECT_STREQ(name(checkdead(s)), "kAlive");
    } else if (run < 0) {
      expect_throw(s, "inconsistent counts");
    } else if (busy_g) {
      expect_throw(s, "runnable g");
    } else if (waiting == 0) {
      EXPECT_STREQ(name(checkdead(s)), "kNoGoroutines");
    } else {
      EXPECT_STREQ(name(checkdead(s)), timers ? "kAlive" : "kDeadlock");
    }
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace gmp::exercises::checkdead
