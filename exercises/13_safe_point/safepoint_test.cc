// Exercise 13's tests: the user code table, the safe-point checks one by
// one and in order, the injection on a real buffer standing for a stack,
// and then the real thing: SIGURG stops a spinning loop, the handler uses
// your functions on the kernel's ucontext, the loop "calls" a trampoline
// and resumes as if nothing happened.
#include "exercises/13_safe_point/safepoint.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <ucontext.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <vector>

#include "exercises/testing/harness.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#if defined(__x86_64__)
extern "C" {
// signal_test_x86_64.S: the loop to interrupt and the trampoline.
long gmp_test_spin(const int* stop);
extern const char gmp_test_spin_end[];
void gmp_test_trampoline();
extern long gmp_test_trampoline_runs;
}
#endif

namespace gmp::exercises::safepoint {
namespace {

// ---- UserCode::contains ----------------------------------------------------

TEST(UserCode, RangesAreHalfOpen) {
  UserCode empty;
  EXPECT_FALSE(empty.contains(0));
  EXPECT_FALSE(empty.contains(0x401000));

  UserCode one({{0x1000, 0x1010}});
  EXPECT_FALSE(one.contains(0xfff));
  EXPECT_TRUE(one.contains(0x1000)) << "start is inside";
  EXPECT_TRUE(one.contains(0x100f));
  EXPECT_FALSE(one.contains(0x1010)) << "end is outside";

  // Touching ranges, a gap, a one-byte range, the top of the address space.
  UserCode t({{0x1000, 0x1100}, {0x1100, 0x1180}, {0x2000, 0x2001},
              {0x3000, 0x4000}, {UINTPTR_MAX - 16, UINTPTR_MAX}});
  struct Probe {
    std::uintptr_t pc;
    bool in;
  };
  for (Probe p : {Probe{0, false}, Probe{0x0fff, false}, Probe{0x1000, true},
                  Probe{0x10ff, true}, Probe{0x1100, true}, Probe{0x117f, true},
                  Probe{0x1180, false}, Probe{0x1fff, false},
                  Probe{0x2000, true}, Probe{0x2001, false},
                  Probe{0x2fff, false}, Probe{0x3000, true},
                  Probe{0x3fff, true}, Probe{0x4000, false},
                  Probe{0x123456, false}, Probe{UINTPTR_MAX - 17, false},
                  Probe{UINTPTR_MAX - 16, true}, Probe{UINTPTR_MAX - 1, true},
                  Probe{UINTPTR_MAX, false}}) {
    EXPECT_EQ(t.contains(p.pc), p.in) << std::hex << "pc 0x" << p.pc;
  }
}

// Random tables (up to 1000 functions, touching or with gaps) and random
// PCs, many at the edges: contains agrees with a linear scan.
void agrees_with_a_scan(std::uint64_t seed) {
  Chaos rng(seed);
  std::vector<Range> ranges;
  std::uintptr_t at = 0x400000 + rng.below(4096);
  std::uint32_t n = rng.below(4) == 0 ? rng.below(4) : rng.below(1000);
  for (std::uint32_t i = 0; i < n; ++i) {
    at += rng.below(3) == 0 ? 0 : 1 + rng.below(64);  // touching, or a gap
    std::uintptr_t len = 1 + rng.below(rng.below(8) == 0 ? 4096 : 200);
    ranges.push_back({at, at + len});
    at += len;
  }
  UserCode table(ranges);
  auto scan = [&](std::uintptr_t pc) {
    return std::any_of(ranges.begin(), ranges.end(), [&](const Range& r) {
      return r.start <= pc && pc < r.end;
    });
  };
  for (int i = 0; i < 1000; ++i) {
    std::uintptr_t pc;
    if (!ranges.empty() && rng.below(2) == 0) {
      const Range& r = ranges[rng.below(static_cast<std::uint32_t>(ranges.size()))];
      std::uintptr_t edges[] = {r.start - 1, r.start, r.start + 1,
                                r.end - 1, r.end, r.end + 1};
      pc = edges[rng.below(6)];
    } else {
      pc = 0x400000 - 100 + rng.below(static_cast<std::uint32_t>(at - 0x400000 + 200));
    }
    ASSERT_EQ(table.contains(pc), scan(pc))
        << std::hex << "pc 0x" << pc << " in a table of " << std::dec
        << ranges.size() << " ranges";
  }
}

TEST(UserCodeProperty, AgreesWithALinearScan) {
  for (std::uint64_t seed : stress_seeds(40, "safepoint.contains")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    agrees_with_a_scan(seed);
    if (HasFatalFailure()) return;
  }
}

// The handler searches on every signal, and a real program's table holds
// thousands of functions: contains must read O(log n) ranges, not scan.
// RangeTable counts the reads (a binary search reads about log2 n; one
// that reads both fields of a range separately, twice that).
TEST(UserCode, ABinarySearchReadsLogNRanges) {
  constexpr std::size_t kN = std::size_t{1} << 15;  // log2: 15
  constexpr std::size_t kMaxReads = 2 * 15 + 4;
  std::vector<Range> ranges;
  for (std::size_t i = 0; i < kN; ++i) {
    std::uintptr_t at = 0x400000 + 64 * i;
    ranges.push_back({at, at + 48});  // a gap of 16 after each
  }
  UserCode table(std::move(ranges));
  for (std::uint64_t seed : stress_seeds(4, "safepoint.log_n")) {
    Chaos rng(seed);
    for (int i = 0; i < 500; ++i) {
      std::uintptr_t pc = 0x400000 - 64 + rng.below(64 * kN + 128);
      table.ranges().reset_reads();
      (void)table.contains(pc);
      std::size_t reads = table.ranges().reads();
      ASSERT_LE(reads, kMaxReads)
          << std::hex << "contains(0x" << pc << ") read " << std::dec << reads
          << " ranges of " << kN << ": a binary search reads about 15 (at "
          << "most " << kMaxReads << " here); more means a scan (seed "
          << seed << ")";
    }
  }
}

// ---- check_safe_point --------------------------------------------------------

const char* name(SafePoint s) {
  switch (s) {
    case SafePoint::kSafe: return "kSafe";
    case SafePoint::kNoRequest: return "kNoRequest";
    case SafePoint::kNotOnGStack: return "kNotOnGStack";
    case SafePoint::kLocksHeld: return "kLocksHeld";
    case SafePoint::kNotUserCode: return "kNotUserCode";
    case SafePoint::kStackTooLow: return "kStackTooLow";
  }
  return "?";
}

// A goroutine with a 64 KiB stack at [lo, hi), stopped in the middle of
// it, in a function of the user's code, with a request pending: safe.
constexpr std::uintptr_t kLo = 0x7f0000000000, kHi = kLo + 0x10000;
const UserCode kCode({{0x401000, 0x401400}, {0x401400, 0x401800},
                      {0x402000, 0x403000}});

Interrupted safe_point() {
  Interrupted in;
  in.regs = {0x401234, kLo + 0x8000};
  in.running_g = true;
  in.preempt = true;
  in.gstack = {kLo, kHi};
  in.locks = 0;
  in.user_code = &kCode;
  return in;
}

void expect(const Interrupted& in, SafePoint want, const char* what) {
  SafePoint got = check_safe_point(in);
  EXPECT_EQ(got, want) << what << ": got " << name(got) << ", wanted "
                       << name(want);
}

TEST(SafePoint, SafeWhenEveryCheckPasses) {
  Interrupted in = safe_point();
  expect(in, SafePoint::kSafe, "the baseline");
  in.regs.sp = kHi;
  expect(in, SafePoint::kSafe, "sp at the top of an empty stack");
  in.regs.sp = kLo + kAsyncPreemptStack;
  expect(in, SafePoint::kSafe, "exactly kAsyncPreemptStack of room");
  in = safe_point();
  in.regs.pc = 0x402fff;
  expect(in, SafePoint::kSafe, "pc at the last byte of a function");
  in.regs.pc = 0x401400;
  expect(in, SafePoint::kSafe, "pc where two functions touch");
}

TEST(SafePoint, EachFailedCheckHasItsReason) {
  struct Case {
    const char* what;
    void (*spoil)(Interrupted&);
    SafePoint want;
  };
  const Case cases[] = {
      {"no goroutine (the scheduler, on g0)",
       [](Interrupted& in) { in.running_g = false; }, SafePoint::kNoRequest},
      {"no request (a late signal)", [](Interrupted& in) { in.preempt = false; },
       SafePoint::kNoRequest},
      {"sp at the stack's lowest byte",
       [](Interrupted& in) { in.regs.sp = kLo; }, SafePoint::kNotOnGStack},
      {"sp below the stack (another stack)",
       [](Interrupted& in) { in.regs.sp = kLo - 0x100000; },
       SafePoint::kNotOnGStack},
      {"sp above the stack (the signal stack)",
       [](Interrupted& in) { in.regs.sp = kHi + 8; }, SafePoint::kNotOnGStack},
      {"one runtime lock held", [](Interrupted& in) { in.locks = 1; },
       SafePoint::kLocksHeld},
      {"three runtime locks held", [](Interrupted& in) { in.locks = 3; },
       SafePoint::kLocksHeld},
      {"pc before the first function",
       [](Interrupted& in) { in.regs.pc = 0x400fff; }, SafePoint::kNotUserCode},
      {"pc in a gap", [](Interrupted& in) { in.regs.pc = 0x401800; },
       SafePoint::kNotUserCode},
      {"pc at the end of the last function",
       [](Interrupted& in) { in.regs.pc = 0x403000; }, SafePoint::kNotUserCode},
      {"no table", [](Interrupted& in) { in.user_code = nullptr; },
       SafePoint::kNotUserCode},
      {"one byte short of the room",
       [](Interrupted& in) { in.regs.sp = kLo + kAsyncPreemptStack - 1; },
       SafePoint::kStackTooLow},
      {"room for the red zone only",
       [](Interrupted& in) { in.regs.sp = kLo + kRedZone + 8; },
       SafePoint::kStackTooLow},
      {"one byte of stack left", [](Interrupted& in) { in.regs.sp = kLo + 1; },
       SafePoint::kStackTooLow},
  };
  for (const Case& c : cases) {
    Interrupted in = safe_point();
    c.spoil(in);
    expect(in, c.want, c.what);
  }
}

// Random contexts, each check failing or passing at random: the answer is
// the first failing check in the order of the header (stage 5's order).
void first_failure_wins(std::uint64_t seed) {
  Chaos rng(seed);
  UserCode empty;
  for (int i = 0; i < 2000; ++i) {
    Interrupted in = safe_point();
    const bool no_g = rng.below(4) == 0, no_req = rng.below(4) == 0;
    const bool off_stack = rng.below(4) == 0, locked = rng.below(4) == 0;
    const bool foreign = rng.below(4) == 0, low = rng.below(4) == 0;
    in.running_g = !no_g;
    in.preempt = !no_req;
    in.locks = locked ? 1 + static_cast<int>(rng.below(5)) : 0;
    if (foreign) {
      switch (rng.below(3)) {
        case 0: in.regs.pc = 0x400000 + rng.below(0x1000); break;
        case 1: in.regs.pc = 0x401800 + rng.below(0x800); break;
        default: in.user_code = rng.below(2) == 0 ? nullptr : &empty;
      }
    } else {
      in.regs.pc = rng.below(2) == 0 ? 0x401000 + rng.below(0x800)
                                     : 0x402000 + rng.below(0x1000);
    }
    if (off_stack) {  // below lo (sp <= lo) or above hi
      in.regs.sp = rng.below(2) == 0 ? kLo - rng.below(0x10000)
                                     : kHi + 1 + rng.below(0x10000);
    } else if (low) {  // on the stack, too little room
      in.regs.sp = kLo + 1 + rng.below(kAsyncPreemptStack - 1);
    } else {
      in.regs.sp = kLo + kAsyncPreemptStack +
                   rng.below(kHi - kLo - kAsyncPreemptStack + 1);
    }
    SafePoint want = no_g || no_req ? SafePoint::kNoRequest
                     : off_stack    ? SafePoint::kNotOnGStack
                     : locked       ? SafePoint::kLocksHeld
                     : foreign      ? SafePoint::kNotUserCode
                     : low          ? SafePoint::kStackTooLow
                                    : SafePoint::kSafe;
    SafePoint got = check_safe_point(in);
    ASSERT_EQ(got, want) << "context " << i << std::hex << ": pc 0x"
                         << in.regs.pc << ", sp 0x" << in.regs.sp << std::dec
                         << ", running_g " << in.running_g << ", preempt "
                         << in.preempt << ", locks " << in.locks << ": got "
                         << name(got) << ", wanted " << name(want);
  }
}

TEST(SafePointProperty, FirstFailedCheckInTheStagesOrderWins) {
  for (std::uint64_t seed : stress_seeds(50, "safepoint.order")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    first_failure_wins(seed);
    if (HasFatalFailure()) return;
  }
}

// ---- inject_async_preempt ----------------------------------------------------

constexpr unsigned char kPattern = 0xa5;

// A real buffer stands for the goroutine's stack: after the injection,
// exactly one 8-byte slot, right below the red zone, holds the old pc;
// every other byte is as it was.
TEST(Inject, SkipsTheRedZoneAndPushesTheInterruptedPc) {
  constexpr std::size_t kSize = 16384;
  // 8192 + 3: sp need not be 8-byte aligned, and the slot is exactly
  // 136 bytes below it all the same (no rounding).
  for (std::size_t offset : {std::size_t{8192}, std::size_t{8192 + 8},
                             std::size_t{8192 + 3}, std::size_t{kSize - 64},
                             std::size_t{kSize}}) {
    SCOPED_TRACE(::testing::Message() << "sp at buffer + " << offset);
    alignas(64) static unsigned char stack[kSize];
    std::memset(stack, kPattern, sizeof stack);
    auto base = reinterpret_cast<std::uintptr_t>(stack);
    const std::uintptr_t sp = base + offset, pc = 0x401234, tramp = 0x405670;
    Regs regs{pc, sp};
    inject_async_preempt(regs, tramp);
    EXPECT_EQ(regs.pc, tramp) << "pc goes to the trampoline";
    ASSERT_EQ(regs.sp, sp - kRedZone - 8)
        << "sp moves past the 128-byte red zone and one return address";
    std::uintptr_t pushed;
    std::memcpy(&pushed, stack + (regs.sp - base), sizeof pushed);
    EXPECT_EQ(pushed, pc) << "the return address is the interrupted pc";
    std::size_t changed = 0;
    for (std::size_t i = 0; i < kSize; ++i) {
      bool in_slot = base + i >= regs.sp && base + i < regs.sp + 8;
      if (!in_slot && stack[i] != kPattern) ++changed;
    }
    EXPECT_EQ(changed, 0u) << "bytes written outside the return address's "
                              "slot (the red zone is at sp-128 .. sp-1)";
  }
}

// ---- The real signal ---------------------------------------------------------

#if defined(__x86_64__)
// What the handler reads and counts (a handler reaches only globals).
struct SignalCase {
  UserCode table;
  std::atomic<bool> request{false};
  std::atomic<int> handled{0}, injected{0}, no_request{0}, declined{0},
      threw{0};
};
SignalCase* signal_case = nullptr;  // set before the handler is installed
thread_local bool t_running_g = false;  // this thread runs "a goroutine"
thread_local Stack t_stack;             // and this is its stack

std::uintptr_t address(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

// The test's SIGURG handler, on the spinner's signal stack: stage 5's
// async_preempt_signal with your functions.
void on_sigurg(int, siginfo_t*, void* ctx) {
  int saved_errno = errno;
  greg_t* gregs = static_cast<ucontext_t*>(ctx)->uc_mcontext.gregs;
  Interrupted in;
  in.regs = {static_cast<std::uintptr_t>(gregs[REG_RIP]),
             static_cast<std::uintptr_t>(gregs[REG_RSP])};
  in.running_g = t_running_g;
  in.preempt = signal_case->request.load(std::memory_order_relaxed);
  in.gstack = t_stack;
  in.locks = 0;
  in.user_code = &signal_case->table;
  try {  // only an unfinished solution throws: fail the test, not the process
    SafePoint why = check_safe_point(in);
    if (why == SafePoint::kSafe) {
      inject_async_preempt(in.regs,
                           reinterpret_cast<std::uintptr_t>(&gmp_test_trampoline));
      gregs[REG_RIP] = static_cast<greg_t>(in.regs.pc);
      gregs[REG_RSP] = static_cast<greg_t>(in.regs.sp);
      signal_case->injected.fetch_add(1, std::memory_order_relaxed);
    } else if (why == SafePoint::kNoRequest) {
      signal_case->no_request.fetch_add(1, std::memory_order_relaxed);
    } else {
      signal_case->declined.fetch_add(1, std::memory_order_relaxed);
    }
  } catch (...) {
    signal_case->threw.fetch_add(1, std::memory_order_relaxed);
  }
  // release: the test reads the counts above after seeing this one.
  signal_case->handled.fetch_add(1, std::memory_order_release);
  errno = saved_errno;
}

// The user code table: the spin loop between decoys on both sides.
UserCode spin_table() {
  auto lo = reinterpret_cast<std::uintptr_t>(&gmp_test_spin);
  std::uintptr_t hi = address(gmp_test_spin_end);
  return UserCode({{0x1000, 0x2000}, {lo - 64, lo - 16}, {lo, hi},
                   {hi + 16, hi + 4096}, {UINTPTR_MAX - 4096, UINTPTR_MAX}});
}

#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer delivers a signal only at its own interception points
// (never in a loop that calls nothing) and passes the handler a copy of
// the context, so a rewrite would be lost: stage 5 is cooperative there.
// Under it, the handler runs on a context built as the kernel would.
void spin_and_signal(std::uint64_t seed) {
  (void)seed;
  static bool said = false;
  if (!said) {
    said = true;
    std::cout << "[   NOTE   ] ThreadSanitizer: the handler runs on a "
                 "context built by hand, not on a real signal\n";
  }
  constexpr std::size_t kSize = 16384;
  alignas(64) static unsigned char stack[kSize];
  std::memset(stack, kPattern, sizeof stack);
  t_running_g = true;
  t_stack = {address(stack), address(stack) + kSize};
  signal_case->request.store(true, std::memory_order_relaxed);
  ucontext_t uc{};
  const std::uintptr_t pc = reinterpret_cast<std::uintptr_t>(&gmp_test_spin) + 4;
  const std::uintptr_t sp = address(stack) + kSize - 256;
  uc.uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(pc);
  uc.uc_mcontext.gregs[REG_RSP] = static_cast<greg_t>(sp);
  on_sigurg(SIGURG, nullptr, &uc);
  t_running_g = false;
  ASSERT_EQ(signal_case->threw.load(), 0) << "your functions threw";
  EXPECT_EQ(signal_case->injected.load(), 1);
  EXPECT_EQ(static_cast<std::uintptr_t>(uc.uc_mcontext.gregs[REG_RIP]),
            reinterpret_cast<std::uintptr_t>(&gmp_test_trampoline));
  auto new_sp = static_cast<std::uintptr_t>(uc.uc_mcontext.gregs[REG_RSP]);
  ASSERT_EQ(new_sp, sp - kRedZone - 8);
  std::uintptr_t pushed;
  std::memcpy(&pushed, stack + (new_sp - address(stack)), sizeof pushed);
  EXPECT_EQ(pushed, pc);
  for (std::size_t i = kSize - 256 - kRedZone; i < kSize; ++i) {
    ASSERT_EQ(stack[i], kPattern) << "the red zone or above changed at " << i;
  }
}
#else
long trampoline_runs() {
  return __atomic_load_n(&gmp_test_trampoline_runs, __ATOMIC_RELAXED);
}

// One thread spins in gmp_test_spin (the user's code, with data in its red
// zone) and has a signal stack; another sends it SIGURG at random moments.
// First with no request: every signal must be ignored. Then with one:
// the handler must find safe points, inject the call, and the trampoline
// must run once per injection, the loop resuming with its red zone and
// stack pointer intact.
void spin_and_signal(std::uint64_t seed) {
  constexpr long kWanted = 20;
  std::atomic<int> stop{0};
  std::atomic<bool> ready{false};
  pthread_t spinner{};
  long spin_result = 0;
  int phase1_no_request = -1, phase1_injected = -1;
  bool phase1_ok = true, enough = false;
  long runs_before = trampoline_runs();
  run_threads(2, seed, [&](int who, Chaos& chaos) {
    if (who == 0) {  // the spinner: "a goroutine" on this thread's stack
      std::unique_ptr<char[]> alt(new char[1 << 16]);
      stack_t ss{};
      ss.ss_sp = alt.get();
      ss.ss_size = 1 << 16;
      stack_t old{};
      sigaltstack(&ss, &old);
      pthread_attr_t attr;
      void* lo = nullptr;
      std::size_t size = 0;
      pthread_getattr_np(pthread_self(), &attr);
      pthread_attr_getstack(&attr, &lo, &size);
      pthread_attr_destroy(&attr);
      t_stack = {address(lo), address(lo) + size};
#if defined(__SANITIZE_ADDRESS__)
      // The injection writes below this thread's sp, where frames that
      // returned may have left AddressSanitizer's poison.
      ASAN_UNPOISON_MEMORY_REGION(
          lo, address(__builtin_frame_address(0)) - address(lo));
#endif
      t_running_g = true;
      spinner = pthread_self();
      ready.store(true, std::memory_order_release);
      spin_result = gmp_test_spin(reinterpret_cast<const int*>(&stop));
      t_running_g = false;
      stack_t off{};
      off.ss_flags = SS_DISABLE;
      sigaltstack(&off, nullptr);
      return;
    }
    // The signaller (sysmon's part).
    if (!eventually([&] { return ready.load(std::memory_order_acquire); },
                    10)) {
      stop.store(1, std::memory_order_relaxed);
      return;
    }
    // 1. No request: a late signal. Each is waited for before the next.
    for (int i = 0; i < 5 && phase1_ok; ++i) {
      int before = signal_case->handled.load(std::memory_order_acquire);
      pthread_kill(spinner, SIGURG);
      phase1_ok = eventually(
          [&] {
            return signal_case->handled.load(std::memory_order_acquire) >
                   before;
          },
          10);
      chaos.point();
    }
    phase1_no_request = signal_case->no_request.load();
    phase1_injected = signal_case->injected.load();
    // 2. A request: signals at random moments until the trampoline has
    // run kWanted times.
    signal_case->request.store(true, std::memory_order_relaxed);
    enough = phase1_ok && eventually(
                              [&] {
                                pthread_kill(spinner, SIGURG);
                                chaos.point();
                                return trampoline_runs() - runs_before >=
                                       kWanted;
                              },
                              10);
    signal_case->request.store(false, std::memory_order_relaxed);
    stop.store(1, std::memory_order_relaxed);
  });
  ASSERT_EQ(signal_case->threw.load(), 0)
      << "your functions threw inside the handler";
  ASSERT_TRUE(ready.load()) << "the spinner did not start";
  ASSERT_TRUE(phase1_ok) << "a signal was never handled";
  EXPECT_EQ(phase1_injected, 0) << "injected with no request pending";
  EXPECT_EQ(phase1_no_request, 5) << "5 signals without a request: each "
                                     "must be kNoRequest";
  EXPECT_TRUE(enough) << "the trampoline ran "
                      << trampoline_runs() - runs_before << " times in 10 s; "
                      << signal_case->declined.load()
                      << " signals were declined";
  EXPECT_EQ(trampoline_runs() - runs_before, signal_case->injected.load())
      << "every injection must run the trampoline exactly once";
  EXPECT_GT(spin_result, 0) << "the loop saw its red zone or its stack "
                               "pointer change";
}
#endif

TEST(AsyncPreemptSignal, StopsASpinningLoopThatThenResumesIntact) {
  // Unwritten functions fail here, before any signal.
  {
    Interrupted in = safe_point();
    ASSERT_EQ(check_safe_point(in), SafePoint::kSafe);
    alignas(16) static unsigned char buf[512];
    Regs regs{0x401234, reinterpret_cast<std::uintptr_t>(buf) + 512};
    inject_async_preempt(regs, 0x405000);
  }
  for (std::uint64_t seed : stress_seeds(3, "safepoint.signal")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    SignalCase sc;
    sc.table = spin_table();
    signal_case = &sc;
    struct sigaction sa {}, old {};
    sa.sa_sigaction = &on_sigurg;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    ASSERT_EQ(sigaction(SIGURG, &sa, &old), 0);
    spin_and_signal(seed);
    sigaction(SIGURG, &old, nullptr);
    signal_case = nullptr;
    if (HasFatalFailure()) return;
  }
}
#endif  // __x86_64__

}  // namespace
}  // namespace gmp::exercises::safepoint
