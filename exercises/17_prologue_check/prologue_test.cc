// Exercise 17's tests: the prologue's three comparisons at their edges, a
// request that traps every frame size, newstack's three outcomes, the
// deferred request and its re-arming, then seeded random frames against
// exact arithmetic, and a request from another thread.
#include "exercises/17_prologue_check/prologue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>

#include "exercises/testing/harness.h"

namespace gmp::exercises::prologue {
namespace {

const char* name(Morestack m) {
  switch (m) {
    case Morestack::kPreempt:
      return "kPreempt";
    case Morestack::kKeepRunning:
      return "kKeepRunning";
    case Morestack::kGrew:
      return "kGrew";
  }
  return "?";
}

constexpr std::uintptr_t kLo = 0xc000100000;  // a 2 KiB stack, as Go's first
constexpr std::size_t kSize = 2048;
constexpr std::uintptr_t kGuard = kLo + kStackGuard;

TEST(Prologue, SmallMediumAndHugeFramesAtTheirEdges) {
  // Small (at most 128 bytes): the stack pointer itself.
  EXPECT_TRUE(needs_morestack(kGuard, kGuard, 0));
  EXPECT_FALSE(needs_morestack(kGuard + 1, kGuard, 0));
  EXPECT_FALSE(needs_morestack(kGuard + 1, kGuard, kStackSmall));
  // Medium (at most 4096): the part of the frame above 128 counts.
  EXPECT_TRUE(needs_morestack(kGuard + 72, kGuard, 200));
  EXPECT_FALSE(needs_morestack(kGuard + 73, kGuard, 200));
  EXPECT_TRUE(
      needs_morestack(kGuard + kStackBig - kStackSmall, kGuard, kStackBig));
  EXPECT_FALSE(
      needs_morestack(kGuard + kStackBig - kStackSmall + 1, kGuard, kStackBig));
  // Huge: the same, but a subtraction that would wrap means morestack.
  constexpr std::size_t kHuge = 1 << 20;
  EXPECT_TRUE(needs_morestack(kGuard + kHuge - kStackSmall, kGuard, kHuge));
  EXPECT_FALSE(
      needs_morestack(kGuard + kHuge - kStackSmall + 1, kGuard, kHuge));
  EXPECT_TRUE(needs_morestack(0x10000, 0x1000, std::size_t{1} << 40))
      << "sp - frame wraps below 0: it must not look like a high address";
  EXPECT_TRUE(needs_morestack(kStackBig + 1, 0, ~std::size_t{0}));
}

TEST(Prologue, APreemptRequestTrapsEveryFrameSize) {
  G gp;
  malg(gp, kLo, kSize);
  EXPECT_FALSE(needs_morestack(kLo + kSize - 64, gp.stackguard0.load(), 64));
  preemptone(gp);
  EXPECT_TRUE(gp.preempt.load());
  EXPECT_EQ(gp.stackguard0.load(), kStackPreempt);
  for (std::size_t frame : {std::size_t{0}, std::size_t{128}, std::size_t{1000},
                            std::size_t{4096}, std::size_t{100000}}) {
    EXPECT_TRUE(needs_morestack(kLo + kSize - 64, gp.stackguard0.load(), frame))
        << "frame " << frame << ": the request must reach every prologue";
  }
}

TEST(Newstack, PreemptsWhenTheMCan) {
  G gp;
  malg(gp, kLo, kSize);
  preemptone(gp);
  M m;
  EXPECT_STREQ(name(newstack(gp, m, kLo + 1500, 64)), "kPreempt");
  EXPECT_EQ(gp.stack_lo, kLo) << "a preemption moves no stack";
  EXPECT_EQ(gp.stack_hi - gp.stack_lo, kSize);
}

// The request finds the M in a critical section: the goroutine runs on,
// with its real guard, and the request waits in gp.preempt until releasem.
TEST(Newstack, DefersTheRequestInACriticalSectionAndReleasemRearmsIt) {
  for (int why = 0; why < 4; ++why) {
    SCOPED_TRACE("the M cannot be preempted because of reason " +
                 std::to_string(why));
    G gp;
    malg(gp, kLo, kSize);
    M m;
    m.locks = why == 0 ? 1 : 0;
    m.mallocing = why == 1;
    m.preemptoff = why == 2;
    m.p_running = why != 3;
    preemptone(gp);
    EXPECT_STREQ(name(newstack(gp, m, kLo + 1500, 64)), "kKeepRunning");
    EXPECT_EQ(gp.stackguard0.load(), kGuard) << "the real guard, so it runs on";
    EXPECT_TRUE(gp.preempt.load()) << "the request is kept, not dropped";
    EXPECT_FALSE(needs_morestack(kLo + 1500, gp.stackguard0.load(), 64));
    if (why == 0) {
      releasem(gp, m);
      EXPECT_EQ(m.locks, 0);
      EXPECT_EQ(gp.stackguard0.load(), kStackPreempt)
          << "the last lock released: the next prologue traps again";
      EXPECT_STREQ(name(newstack(gp, m, kLo + 1500, 64)), "kPreempt");
    }
  }
  // Two locks: only the last release re-arms.
  G gp;
  malg(gp, kLo, kSize);
  M m;
  m.locks = 2;
  preemptone(gp);
  ASSERT_STREQ(name(newstack(gp, m, kLo + 1500, 64)), "kKeepRunning");
  releasem(gp, m);
  EXPECT_EQ(gp.stackguard0.load(), kGuard) << "one lock still held";
  // A real overflow meanwhile grows the stack: stackguard0 decides, not
  // the pending gp.preempt.
  EXPECT_STREQ(name(newstack(gp, m, kLo + 900, 64)), "kGrew");
  releasem(gp, m);
  EXPECT_EQ(gp.stackguard0.load(), kStackPreempt);
  // Nothing pending: releasem leaves the guard alone.
  G quiet;
  malg(quiet, kLo, kSize);
  M m2;
  m2.locks = 1;
  releasem(quiet, m2);
  EXPECT_EQ(quiet.stackguard0.load(), kGuard);
}

TEST(Newstack, GrowsTwiceOrMoreUntilTheFrameFits) {
  G gp;
  malg(gp, kLo, kSize);
  M m;
  // 1500 bytes used, a 100-byte frame: 4096 leaves 2596 >= 100 + 928.
  EXPECT_STREQ(name(newstack(gp, m, kLo + kSize - 1500, 100)), "kGrew");
  EXPECT_EQ(gp.stack_hi - gp.stack_lo, 4096u);
  EXPECT_EQ(gp.stackguard0.load(), gp.stack_lo + kStackGuard);
  // 1500 of 4096 used, a 5000-byte frame: 8192 (6692 >= 5928); 16384 would
  // be more than needed.
  EXPECT_STREQ(name(newstack(gp, m, gp.stack_hi - 1500, 5000)), "kGrew");
  EXPECT_EQ(gp.stack_hi - gp.stack_lo, 8192u);
  // A frame of 100 KB from 8 KiB: 128 KiB.
  EXPECT_STREQ(name(newstack(gp, m, gp.stack_hi - 8000, 100'000)), "kGrew");
  EXPECT_EQ(gp.stack_hi - gp.stack_lo, 131072u);
}

// Go's newstack doubles until the frame fits above the part of the stack
// already in use, with kStackGuard to spare: newsize - used >= frame +
// kStackGuard. Each case starts from a fresh 2 KiB stack, and in each the
// new size alone, or the room without the guard, would stop the doubling
// too early.
TEST(Newstack, CountsTheUsedPartAndTheGuard) {
  struct Case {
    std::size_t used, frame, want;
    const char* why;
  };
  const Case cases[] = {
      {1900, 2500, 8192,
       "4096 holds 2500 + 928, but not above the 1900 bytes in use"},
      {1500, 2500, 8192,
       "4096 - 1500 holds the 2500-byte frame, but not the guard too"},
      {1500, 1668, 4096,
       "4096 - 1500 = 1668 + 928 exactly: it fits, no second doubling"},
      {2000, 30000, 65536,
       "32768 holds 30000 + 928, but not above the 2000 bytes in use"},
  };
  for (const Case& c : cases) {
    G gp;
    malg(gp, kLo, kSize);
    M m;
    EXPECT_STREQ(name(newstack(gp, m, gp.stack_hi - c.used, c.frame)), "kGrew");
    EXPECT_EQ(gp.stack_hi - gp.stack_lo, c.want)
        << c.used << " bytes used, a " << c.frame << "-byte frame: " << c.why;
    EXPECT_EQ(gp.stackguard0.load(), gp.stack_lo + kStackGuard);
  }
}

TEST(Newstack, PastTheLimitIsAStackOverflow) {
  G gp;
  malg(gp, kLo, std::size_t{512} << 20);  // 512 MiB: twice is over 1e9
  M m;
  try {
    newstack(gp, m, gp.stack_lo + 500, 64);
    ADD_FAILURE() << "grew past the 1000000000-byte limit";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "goroutine stack exceeds 1000000000-byte limit"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(gp.stack_hi - gp.stack_lo, std::size_t{512} << 20)
      << "nothing moved";
  G small;
  malg(small, kLo, kSize);
  EXPECT_THROW(newstack(small, m, kLo + 1000, std::size_t{1} << 31),
               std::runtime_error)
      << "a 2 GiB frame can never fit";
}

TEST(Execute, ANewSliceClearsTheRequest) {
  G gp;
  malg(gp, kLo, kSize);
  preemptone(gp);
  M m;
  ASSERT_STREQ(name(newstack(gp, m, kLo + 1500, 64)), "kPreempt");
  execute(gp);  // later, on some M
  EXPECT_FALSE(gp.preempt.load());
  EXPECT_EQ(gp.stackguard0.load(), kGuard);
  EXPECT_FALSE(needs_morestack(kLo + 1500, gp.stackguard0.load(), 64));
}

// Random stack pointers, guards and frames against the rule in exact
// (128-bit) arithmetic: morestack when the frame's part above kStackSmall
// would end at or below the guard.
TEST(PrologueProperty, RandomFramesAgainstExactArithmetic) {
  for (std::uint64_t seed : stress_seeds(20, "PrologueProperty")) {
    Chaos rng(seed);
    for (int i = 0; i < 5000; ++i) {
      // Above kStackBig, as the runtime keeps every stack pointer.
      std::uintptr_t sp = kStackBig + 1 + (rng.next() >> (1 + rng.below(63)));
      std::uintptr_t guard =
          rng.below(4) == 0 ? kStackPreempt : rng.next() >> rng.below(64);
      std::size_t frame =
          rng.below(3) == 0
              ? rng.below(kStackSmall + 1)
              : static_cast<std::size_t>(rng.next() >> rng.below(64));
      __int128 end =
          static_cast<__int128>(sp) -
          (frame > kStackSmall ? static_cast<__int128>(frame - kStackSmall)
                               : 0);
      bool want = end <= static_cast<__int128>(guard);
      ASSERT_EQ(needs_morestack(sp, guard, frame), want)
          << "sp " << sp << " guard " << guard << " frame " << frame << " seed "
          << seed;
    }
  }
}

// sysmon asks from its own thread while the goroutine's thread keeps
// calling functions: the request is seen, and ends in a preemption.
TEST(PreemptStress, ARequestFromAnotherThreadIsSeen) {
  Watchdog dog("ARequestFromAnotherThreadIsSeen", 30);
  for (std::uint64_t seed : stress_seeds(20, "PreemptStress")) {
    G gp;
    malg(gp, kLo, kSize);
    execute(gp);  // the skeleton throws here
    std::atomic<bool> preempted{false};
    run_threads(2, seed, [&](int t, Chaos& chaos) {
      if (t == 0) {  // sysmon
        chaos.point();
        preemptone(gp);
        return;
      }
      M m;  // the goroutine's M: calls until a prologue traps
      for (;;) {
        if (needs_morestack(kLo + 1500, gp.stackguard0.load(), 64)) {
          if (newstack(gp, m, kLo + 1500, 64) == Morestack::kPreempt) break;
        }
        chaos.point();
      }
      preempted = true;
    });
    ASSERT_TRUE(preempted.load()) << "seed " << seed;
    ASSERT_TRUE(gp.preempt.load());
  }
}

}  // namespace
}  // namespace gmp::exercises::prologue
