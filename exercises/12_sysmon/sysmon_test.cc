// Exercise 12's tests: sysmon's sleep, then retakep's rules as tables of
// rounds (one P, a fresh memory per case), then seeded properties over
// random sequences of rounds.
#include "exercises/12_sysmon/sysmon.h"

#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <vector>

#include "exercises/testing/harness.h"

namespace gmp::exercises::sysmon {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

const char* name(Action a) {
  switch (a) {
    case Action::kNone: return "kNone";
    case Action::kPreempt: return "kPreempt";
    case Action::kRetake: return "kRetake";
  }
  return "?";
}

// ---- sysmon_delay ----------------------------------------------------------

TEST(SysmonDelay, TwentyMicrosecondsThenDoublingAfter50QuietRounds) {
  for (int idle = 0; idle <= 50; ++idle) {
    EXPECT_EQ(sysmon_delay(idle), microseconds(20)) << "idle rounds " << idle;
  }
  // 51 quiet rounds: the first doubling; 20 us << 9 would pass 10 ms.
  const long want[] = {40, 80, 160, 320, 640, 1280, 2560, 5120, 10000};
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(sysmon_delay(51 + i), microseconds(want[i]))
        << "idle rounds " << 51 + i;
  }
}

TEST(SysmonDelay, StaysAt10msHoweverLongTheQuiet) {
  for (int idle : {60, 61, 64, 100, 114, 178, 1000, 1 << 20, INT_MAX}) {
    EXPECT_EQ(sysmon_delay(idle), milliseconds(10)) << "idle rounds " << idle;
  }
}

// ---- retakep: tables of rounds ---------------------------------------------

// One round of a case: what sysmon reads, when, and what it must decide.
struct Round {
  PSnapshot p;
  SchedSnapshot sched;
  long us;  // now, in microseconds
  Action want;
};

// The P runs, at schedtick `tick`.
Round running(std::uint32_t tick, long us, Action want) {
  PSnapshot p;
  p.status = PStatus::kRunning;
  p.schedtick = tick;
  return {p, {}, us, want};
}

// The P is in a system call, at syscalltick `tick`; `work`: its run queue
// has goroutines; `spinning`, `idle`: Ms spinning and Ps idle elsewhere.
Round in_call(std::uint32_t tick, long us, Action want, bool work,
              int spinning = 0, int idle = 0) {
  PSnapshot p;
  p.status = PStatus::kSyscall;
  p.syscalltick = tick;
  p.runq_empty = !work;
  return {p, {spinning, idle}, us, want};
}

Round parked(PStatus status, long us) {
  PSnapshot p;
  p.status = status;
  return {p, {}, us, Action::kNone};
}

struct Case {
  std::string what;
  std::vector<Round> rounds;
};

// Plays each case's rounds on a fresh memory; every decision must match.
void play(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SysmonTick pd;
    for (std::size_t i = 0; i < c.rounds.size(); ++i) {
      const Round& r = c.rounds[i];
      Action got = retakep(r.p, r.sched, microseconds(r.us), pd);
      EXPECT_EQ(got, r.want) << c.what << ": round " << i << " (t = " << r.us
                             << " us) gave " << name(got) << ", wanted "
                             << name(r.want);
    }
  }
}

constexpr Action N = Action::kNone, P = Action::kPreempt, R = Action::kRetake;

TEST(Retake, RunningPIsPreemptedAfter10msOnOneSchedtick) {
  play({
      {"a first look is only remembered, however late", {running(7, 50000, N)}},
      {"unchanged for 9.999 ms", {running(7, 0, N), running(7, 9999, N)}},
      {"unchanged for exactly 10 ms", {running(7, 0, N), running(7, 10000, P)}},
      {"measured from the first look, not the last",
       {running(7, 0, N), running(7, 4000, N), running(7, 8000, N),
        running(7, 10000, P)}},
      {"asked again on every round while the slice lasts",
       {running(7, 0, N), running(7, 10000, P), running(7, 10020, P),
        running(7, 30000, P)}},
      {"a moved tick starts a new slice",
       {running(7, 0, N), running(8, 9000, N), running(8, 18999, N),
        running(8, 19000, P)}},
      {"a tick that moved while sysmon slept is a new slice",
       {running(7, 0, N), running(9, 25000, N), running(9, 30000, N)}},
      {"after a preemption, the next goroutine gets a whole slice",
       {running(7, 0, N), running(7, 10000, P), running(8, 10020, N),
        running(8, 20019, N), running(8, 20020, P)}},
      {"the tick wraps around",
       {running(0xffffffffu, 0, N), running(0, 10000, N),
        running(0, 20000, P)}},
      {"a quick system call does not restart the slice",
       {running(7, 0, N), in_call(1, 4000, N, false, 1), running(7, 10000, P)}},
      {"nor does a retaken one",
       {running(7, 0, N), in_call(1, 4000, N, true), in_call(1, 4020, R, true),
        running(7, 9999, N), running(7, 10000, P)}},
  });
}

TEST(Retake, SyscallPIsRetakenIfItHasWorkOrNobodyLooksOr10msPass) {
  play({
      {"a first look is only remembered, even with work queued",
       {in_call(3, 0, N, true)}},
      {"second look, work queued",
       {in_call(3, 0, N, true, 1, 1), in_call(3, 20, R, true, 1, 1)}},
      {"second look, no M spinning and no P idle",
       {in_call(3, 0, N, false), in_call(3, 20, R, false)}},
      {"an M spins: left alone until 10 ms since the first look",
       {in_call(3, 0, N, false, 1, 0), in_call(3, 20, N, false, 1, 0),
        in_call(3, 9999, N, false, 1, 0), in_call(3, 10000, R, false, 1, 0)}},
      {"a P is idle: likewise",
       {in_call(3, 500, N, false, 0, 1), in_call(3, 10499, N, false, 0, 1),
        in_call(3, 10500, R, false, 0, 1)}},
      {"work queued while it waits",
       {in_call(3, 0, N, false, 1, 0), in_call(3, 20, N, false, 1, 0),
        in_call(3, 40, R, true, 1, 0)}},
      {"a new call on every look is never retaken",
       {in_call(3, 0, N, true), in_call(4, 20, N, true), in_call(5, 40, N, true),
        in_call(6, 60, N, true)}},
      {"a new call restarts the 10 ms",
       {in_call(3, 0, N, false, 1, 0), in_call(4, 6000, N, false, 1, 0),
        in_call(4, 15999, N, false, 1, 0), in_call(4, 16000, R, false, 1, 0)}},
      {"a call lasting past 10 ms while the P ran before",
       {running(7, 0, N), in_call(1, 20000, N, false, 0, 2),
        in_call(1, 29999, N, false, 0, 2), in_call(1, 30000, R, false, 0, 2)}},
      {"the tick wraps around",
       {in_call(0xffffffffu, 0, N, true), in_call(0, 20, N, true),
        in_call(0, 40, R, true)}},
  });
}

TEST(Retake, MemoryFollowsTheTicksAndForgetsIdlePs) {
  SysmonTick pd;
  SchedSnapshot sched{1, 1};
  Round r = running(7, 3000, N);
  ASSERT_EQ(retakep(r.p, sched, microseconds(3000), pd), N);
  EXPECT_TRUE(pd.sched_seen);
  EXPECT_EQ(pd.schedtick, 7u);
  EXPECT_EQ(pd.schedwhen, microseconds(3000));
  r = running(8, 5000, N);
  ASSERT_EQ(retakep(r.p, sched, microseconds(5000), pd), N);
  EXPECT_EQ(pd.schedtick, 8u) << "a changed tick is remembered";
  EXPECT_EQ(pd.schedwhen, microseconds(5000)) << "with when it was seen";
  ASSERT_EQ(retakep(r.p, sched, microseconds(7000), pd), N);
  EXPECT_EQ(pd.schedwhen, microseconds(5000)) << "an unchanged one is not";
  r = in_call(2, 8000, N, false, 1, 1);
  ASSERT_EQ(retakep(r.p, sched, microseconds(8000), pd), N);
  EXPECT_TRUE(pd.syscall_seen);
  EXPECT_EQ(pd.syscalltick, 2u);
  EXPECT_EQ(pd.syscallwhen, microseconds(8000));
  EXPECT_EQ(pd.schedtick, 8u) << "a call keeps the slice's memory";
  EXPECT_EQ(pd.schedwhen, microseconds(5000));
  r = parked(PStatus::kIdle, 9000);
  ASSERT_EQ(retakep(r.p, sched, microseconds(9000), pd), N);
  EXPECT_FALSE(pd.sched_seen) << "an idle P runs no slice";
  EXPECT_FALSE(pd.syscall_seen) << "an idle P is in no call";

  // So the same ticks after an idle or stopped spell are a first look.
  play({
      {"idle in between",
       {running(7, 0, N), parked(PStatus::kIdle, 5000), running(7, 12000, N),
        running(7, 21999, N), running(7, 22000, P)}},
      {"stopped in between",
       {running(7, 0, N), running(7, 10000, P), parked(PStatus::kStopped, 10020),
        running(7, 10040, N), running(7, 20040, P)}},
      {"a call seen before an idle spell",
       {in_call(3, 0, N, true), parked(PStatus::kIdle, 20),
        in_call(3, 40, N, true), in_call(3, 60, R, true)}},
      // After kRetake the P is handed off: the call is forgotten, and a
      // P that still looks the same is not handed off twice in a row.
      {"a retaken call is forgotten",
       {in_call(3, 0, N, true), in_call(3, 20, R, true), in_call(3, 40, N, true),
        in_call(3, 60, R, true)}},
  });
  SysmonTick after;
  Round a = in_call(5, 0, N, true);
  retakep(a.p, {}, microseconds(0), after);
  ASSERT_EQ(retakep(a.p, {}, microseconds(20), after), R);
  EXPECT_FALSE(after.syscall_seen) << "the retaken call is forgotten";
}

// ---- Properties over seeded random rounds ----------------------------------

// A P whose ticks move between any two rounds is never preempted nor
// retaken, however long sysmon sleeps and whatever else it reads.
void moving_ticks(std::uint64_t seed) {
  Chaos rng(seed);
  SysmonTick pd;
  std::uint32_t sched = rng.below(2) == 0 ? 0xffffffffu - rng.below(100)
                                          : static_cast<std::uint32_t>(rng.next());
  std::uint32_t calls = static_cast<std::uint32_t>(rng.next());
  long us = rng.below(1000000);
  for (int i = 0; i < 2000; ++i) {
    us += 20 + (rng.below(4) == 0 ? rng.below(30000) : rng.below(3000));
    sched += 1 + rng.below(3);
    calls += 1 + rng.below(3);
    PSnapshot p;
    p.status = rng.below(3) == 0 ? PStatus::kSyscall : PStatus::kRunning;
    p.schedtick = sched;
    p.syscalltick = calls;
    p.runq_empty = rng.below(2) == 0;
    SchedSnapshot s{static_cast<int>(rng.below(3)),
                    static_cast<int>(rng.below(3))};
    Action got = retakep(p, s, microseconds(us), pd);
    ASSERT_EQ(got, Action::kNone) << "round " << i << " at " << us << " us";
  }
}

TEST(RetakeProperty, ATickThatMovesEveryRoundIsNeverTouched) {
  for (std::uint64_t seed : stress_seeds(200, "sysmon.moving_ticks")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    moving_ticks(seed);
    if (HasFatalFailure()) return;
  }
}

// One P through random slices, calls and idle spells, sysmon waking at
// random intervals. An oracle that knows when each slice and each call
// was first seen says what must happen: a slice is preempted from the
// first round that finds it 10 ms old, never before; a call is retaken at
// the first round after its first look that the rules allow, never before.
void stuck_ps(std::uint64_t seed) {
  Chaos rng(seed);
  SysmonTick pd;
  std::uint32_t sched = static_cast<std::uint32_t>(rng.next());
  std::uint32_t calls = static_cast<std::uint32_t>(rng.next());
  const std::uint32_t slice_odds = 2 + rng.below(30);  // a new slice, 1 in
  // The oracle's own memory: is a slice (a call) under way, since when.
  bool slice_open = false, call_open = false;
  long slice_start = 0, call_start = 0;
  long us = 0;
  int preempted = 0, retaken = 0;
  for (int i = 0; i < 3000; ++i) {
    us += 20 + (rng.below(8) == 0 ? rng.below(12000) : rng.below(2500));
    PSnapshot p;
    SchedSnapshot s{static_cast<int>(rng.below(2)),
                    static_cast<int>(rng.below(2))};
    p.runq_empty = rng.below(3) != 0;
    Action want = Action::kNone;
    std::uint32_t dice = rng.below(40);
    if (dice == 0) {  // idle or stopped: both are forgotten
      p.status = rng.below(2) == 0 ? PStatus::kIdle : PStatus::kStopped;
      slice_open = call_open = false;
    } else if (dice < 10) {  // in a call: the same as last time, or a new one
      p.status = PStatus::kSyscall;
      if (!call_open || rng.below(3) == 0) {
        ++calls;
        call_open = true;
        call_start = us;
      } else if (!p.runq_empty || s.nmspinning + s.npidle == 0 ||
                 us - call_start >= 10000) {
        want = Action::kRetake;
        call_open = false;  // handed off: its next call is a new one
      }
    } else {  // running: the same slice, or a new one
      p.status = PStatus::kRunning;
      call_open = false;  // any call returned: the next one is new
      if (!slice_open || rng.below(slice_odds) == 0) {
        // A new slice; after an idle spell, sometimes with the same tick
        // (sysmon must have forgotten it).
        if (slice_open || rng.below(2) == 0) ++sched;
        slice_open = true;
        slice_start = us;
      } else if (us - slice_start >= 10000) {
        want = Action::kPreempt;
      }
    }
    p.schedtick = sched;
    p.syscalltick = calls;
    Action got = retakep(p, s, microseconds(us), pd);
    ASSERT_EQ(got, want) << "round " << i << " at " << us << " us: got "
                         << name(got) << ", wanted " << name(want);
    preempted += got == Action::kPreempt;
    retaken += got == Action::kRetake;
  }
  EXPECT_GT(preempted + retaken, 0) << "the case exercised nothing";
}

TEST(RetakeProperty, AStuckPIsActedOnAtTheFirstRoundTheRulesAllow) {
  for (std::uint64_t seed : stress_seeds(200, "sysmon.stuck_ps")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    stuck_ps(seed);
    if (HasFatalFailure()) return;
  }
}

// sysmon's loop with random rounds that act: within each quiet spell the
// sleep starts at 20 us, stays there for 50 rounds, then doubles on every
// round until 10 ms, and stays at 10 ms.
void quiet_spells(std::uint64_t seed) {
  Chaos rng(seed);
  const std::uint32_t odds[] = {2, 10, 100, 1000};
  const std::uint32_t act_odds = odds[rng.below(4)];  // a round acts, 1 in
  int idle = 0;
  microseconds last{0};
  bool capped_spell = false;
  for (int i = 0; i < 5000; ++i) {
    bool acted = rng.below(act_odds) == 0;
    idle = acted ? 0 : idle + 1;
    microseconds d = sysmon_delay(idle);
    ASSERT_GE(d, kSysmonMinDelay) << "round " << i;
    ASSERT_LE(d, kSysmonMaxDelay) << "round " << i;
    if (idle <= 50) {
      ASSERT_EQ(d, microseconds(20)) << "round " << i << ", idle " << idle;
    } else {
      ASSERT_GE(d, last) << "never shorter within a quiet spell; idle " << idle;
      ASSERT_TRUE(d == 2 * last || (d == kSysmonMaxDelay && 2 * last >= d))
          << "idle " << idle << ": " << last.count() << " us, then "
          << d.count() << " us; each quiet round past 50 doubles";
      if (idle >= 59) {
        ASSERT_EQ(d, kSysmonMaxDelay) << "idle " << idle;
        capped_spell = true;
      }
    }
    last = d;
  }
  if (act_odds >= 100) {
    EXPECT_TRUE(capped_spell) << "no quiet spell reached 10 ms";
  }
}

TEST(SysmonDelayProperty, QuietSpellsBackOffFrom20usTo10ms) {
  for (std::uint64_t seed : stress_seeds(40, "sysmon.quiet_spells")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    quiet_spells(seed);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace gmp::exercises::sysmon
