// Exercise 04's tests: the pool's contract one rule at a time (sizes,
// writable stacks, the guard page, reuse, the limit, bad releases), then
// threads allocating, filling, checking and releasing stacks at once on
// seeded, randomized interleavings.
#include "exercises/04_guarded_stack/stack_pool.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "exercises/testing/harness.h"

namespace gmp::exercises::stack {
namespace {

const std::size_t kPage = StackPool::page_size();

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }
std::size_t bytes(const Stack& s) { return addr(s.hi) - addr(s.lo); }

std::size_t round_up(std::size_t n) { return (n + kPage - 1) / kPage * kPage; }

// Whether reading the byte at `p` faults, asked without touching it: the
// kernel copies it into a pipe and fails with EFAULT if it may not read it.
bool faults(const void* p) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  bool fault = write(fds[1], p, 1) < 0 && errno == EFAULT;
  close(fds[0]);
  close(fds[1]);
  return fault;
}

// Writes `pattern` (varied by position) into every 8 bytes of `s`.
void fill(const Stack& s, std::uint64_t pattern) {
  auto* w = static_cast<std::uint64_t*>(s.lo);
  for (std::size_t i = 0; i < bytes(s) / 8; ++i) w[i] = pattern ^ i;
}

// Whether `s` still holds what fill(s, pattern) wrote.
bool holds(const Stack& s, std::uint64_t pattern) {
  const auto* w = static_cast<const std::uint64_t*>(s.lo);
  for (std::size_t i = 0; i < bytes(s) / 8; ++i) {
    if (w[i] != (pattern ^ i)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------

TEST(StackPool, ConstructorRoundsToPagesAndRejectsZero) {
  try {
    StackPool p(0, 4);
    ADD_FAILURE() << "StackPool(0, 4) did not throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("stack_size"), std::string::npos)
        << "the message should name stack_size: " << e.what();
  }
  try {
    StackPool p(kPage, 0);
    ADD_FAILURE() << "StackPool(page, 0) did not throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("max_stacks"), std::string::npos)
        << "the message should name max_stacks: " << e.what();
  }
  for (std::size_t size : {std::size_t{1}, kPage - 1, kPage, kPage + 1,
                           3 * kPage + 5, std::size_t{64 * 1024 - 1}}) {
    SCOPED_TRACE(::testing::Message() << "stack_size " << size);
    StackPool pool(size, 2);
    EXPECT_EQ(pool.stack_size(), round_up(size));
    Stack s = pool.allocate();
    EXPECT_EQ(bytes(s), round_up(size)) << "hi - lo";
    EXPECT_EQ(addr(s.lo) % kPage, 0u) << "lo is not page-aligned";
    pool.release(s);
  }
}

TEST(StackPool, EveryUsableByteIsWritable) {
  StackPool pool(5 * kPage + 100, 4);
  Stack a = pool.allocate(), b = pool.allocate();
  for (Stack s : {a, b}) {
    EXPECT_FALSE(faults(s.lo)) << "lo itself is not readable";
    EXPECT_FALSE(faults(static_cast<char*>(s.hi) - 1)) << "hi - 1";
  }
  if (HasFailure()) return;  // the writes below would only crash
  // Every byte of both, each with its own pattern: a write that landed in
  // the other stack would show.
  auto* pa = static_cast<unsigned char*>(a.lo);
  auto* pb = static_cast<unsigned char*>(b.lo);
  for (std::size_t i = 0; i < bytes(a); ++i) pa[i] = static_cast<unsigned char>(i * 7);
  for (std::size_t i = 0; i < bytes(b); ++i) pb[i] = static_cast<unsigned char>(i * 13 + 1);
  for (std::size_t i = 0; i < bytes(a); ++i) {
    ASSERT_EQ(pa[i], static_cast<unsigned char>(i * 7)) << "byte " << i;
  }
  for (std::size_t i = 0; i < bytes(b); ++i) {
    ASSERT_EQ(pb[i], static_cast<unsigned char>(i * 13 + 1)) << "byte " << i;
  }
  pool.release(a);
  pool.release(b);
}

// Dies the way an overflowing stack does. A sanitizer catches the SIGSEGV
// first and reports it ("SEGV on unknown address") before dying.
void write_below(const Stack& s) {
  *(static_cast<volatile char*>(s.lo) - 1) = 1;
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define EXPECT_SEGV(statement) EXPECT_DEATH(statement, "SEGV")
#else
#define EXPECT_SEGV(statement) \
  EXPECT_EXIT(statement, ::testing::KilledBySignal(SIGSEGV), "")
#endif

TEST(StackPoolDeathTest, AWriteJustBelowTheStackFaults) {
  StackPool pool(2 * kPage, 2);
  Stack fresh = pool.allocate();
  EXPECT_TRUE(faults(static_cast<char*>(fresh.lo) - 1))
      << "the byte below lo can be read: no PROT_NONE guard page there";
  EXPECT_TRUE(faults(static_cast<char*>(fresh.lo) - kPage))
      << "the guard is not a whole page below lo";
  if (HasFailure()) return;
  EXPECT_SEGV(write_below(fresh));
  pool.release(fresh);
  Stack reused = pool.allocate();  // from the cache: the guard stays
  EXPECT_TRUE(faults(static_cast<char*>(reused.lo) - 1))
      << "a reused stack lost its guard page";
  if (HasFailure()) return;
  EXPECT_SEGV(write_below(reused));
  pool.release(reused);
}

TEST(StackPool, ReusesReleasedStacksUpToTheCacheLimit) {
  StackPool pool(kPage, 1000);
  Stack a = pool.allocate();
  EXPECT_EQ(pool.live(), 1u);
  EXPECT_EQ(pool.cached(), 0u);
  pool.release(a);
  EXPECT_EQ(pool.live(), 0u);
  EXPECT_EQ(pool.cached(), 1u);
  Stack b = pool.allocate();
  EXPECT_EQ(b.lo, a.lo) << "a cached stack was not reused";
  EXPECT_EQ(pool.live(), 1u);
  EXPECT_EQ(pool.cached(), 0u);
  pool.release(b);

  // More released than the cache keeps: the rest are unmapped.
  constexpr std::size_t kMany = StackPool::kMaxCached + 10;
  std::vector<Stack> stacks;
  for (std::size_t i = 0; i < kMany; ++i) stacks.push_back(pool.allocate());
  EXPECT_EQ(pool.live(), kMany);
  std::set<void*> released;
  for (const Stack& s : stacks) {
    pool.release(s);
    released.insert(s.lo);
  }
  EXPECT_EQ(pool.live(), 0u);
  EXPECT_EQ(pool.cached(), StackPool::kMaxCached);
  std::vector<Stack> again;
  for (std::size_t i = 0; i < StackPool::kMaxCached; ++i) {
    again.push_back(pool.allocate());
    EXPECT_EQ(released.count(again.back().lo), 1u)
        << "allocate " << i << " did not take a cached stack";
    EXPECT_EQ(pool.cached(), StackPool::kMaxCached - i - 1);
  }
  EXPECT_EQ(pool.live(), StackPool::kMaxCached);
  for (const Stack& s : again) pool.release(s);
}

TEST(StackPool, ExhaustionIsAnErrorThatLosesNothing) {
  StackPool pool(kPage, 3);
  std::vector<Stack> s;
  for (int i = 0; i < 3; ++i) s.push_back(pool.allocate());
  EXPECT_THROW(pool.allocate(), StackExhausted);
  EXPECT_THROW(pool.allocate(), StackExhausted) << "and again";
  EXPECT_EQ(pool.live(), 3u);
  pool.release(s[1]);
  s[1] = pool.allocate();  // a released stack makes room again
  EXPECT_EQ(pool.live(), 3u);
  EXPECT_THROW(pool.allocate(), StackExhausted);
  for (const Stack& x : s) pool.release(x);
  EXPECT_EQ(pool.live(), 0u);
  EXPECT_EQ(pool.cached(), 3u);
  // Cached stacks are not live: all three can be had again, no more.
  for (Stack& x : s) x = pool.allocate();
  EXPECT_THROW(pool.allocate(), StackExhausted);
  EXPECT_EQ(pool.live(), 3u);
  EXPECT_EQ(pool.cached(), 0u);
  for (const Stack& x : s) pool.release(x);
}

TEST(StackPool, MmapFailureIsASystemError) {
  // 2^60 bytes: more than x86-64's (or aarch64's) address space, so
  // every mmap of it fails (ENOMEM).
  StackPool pool(std::size_t{1} << 60, 2);
  try {
    pool.allocate();
    ADD_FAILURE() << "allocating a 2^60-byte stack did not throw";
  } catch (const StackExhausted& e) {
    ADD_FAILURE() << "not a StackExhausted (no stack is live): " << e.what();
  } catch (const std::system_error& e) {
    // The kernel's own reason, from the mmap that failed (not from a call
    // made afterwards on what mmap returned: MAP_FAILED is not null).
    EXPECT_EQ(e.code(), std::errc::not_enough_memory)
        << "not mmap's ENOMEM: " << e.what();
  }
  EXPECT_EQ(pool.live(), 0u) << "a failed allocate left a live stack";
  EXPECT_EQ(pool.cached(), 0u);
}

TEST(StackPool, ReleasingTwiceOrAForeignStackIsAnError) {
  StackPool pool(kPage, 4), other(kPage, 4);
  Stack s = pool.allocate();
  pool.release(s);
  EXPECT_THROW(pool.release(s), std::invalid_argument) << "released twice";
  EXPECT_EQ(pool.live(), 0u);
  EXPECT_EQ(pool.cached(), 1u) << "a bad release changed the cache";

  Stack foreign = other.allocate();
  EXPECT_THROW(pool.release(foreign), std::invalid_argument)
      << "a stack of another pool";
  other.release(foreign);

  Stack live = pool.allocate();
  char local[16];
  EXPECT_THROW(pool.release(Stack{local, local + sizeof local}),
               std::invalid_argument)
      << "not a stack at all";
  EXPECT_THROW(pool.release(Stack{live.lo, static_cast<char*>(live.hi) - 8}),
               std::invalid_argument)
      << "a live stack's lo with the wrong hi";
  EXPECT_EQ(pool.live(), 1u);
  pool.release(live);  // still fine
  EXPECT_EQ(pool.live(), 0u);
  EXPECT_EQ(pool.cached(), 1u);
}

// [lo - guard, hi) of every stack in `stacks` are disjoint.
void expect_disjoint(std::vector<Stack> stacks) {
  std::sort(stacks.begin(), stacks.end(),
            [](const Stack& a, const Stack& b) { return a.lo < b.lo; });
  for (std::size_t i = 1; i < stacks.size(); ++i) {
    EXPECT_LE(addr(stacks[i - 1].hi), addr(stacks[i].lo) - kPage)
        << "stack [" << stacks[i - 1].lo << ", " << stacks[i - 1].hi
        << ") overlaps the next one or its guard page [" << stacks[i].lo
        << " - page, " << stacks[i].hi << ")";
  }
}

TEST(StackPool, LiveStacksNeverOverlap) {
  constexpr std::size_t kN = 64;
  StackPool pool(3 * kPage + 1, kN);
  std::vector<Stack> stacks;
  for (std::size_t i = 0; i < kN; ++i) stacks.push_back(pool.allocate());
  expect_disjoint(stacks);
  // Release every other one, take them (and new ones) back, check again.
  std::vector<Stack> kept;
  for (std::size_t i = 0; i < kN; ++i) {
    if (i % 2 == 0) {
      pool.release(stacks[i]);
    } else {
      kept.push_back(stacks[i]);
    }
  }
  while (kept.size() < kN) kept.push_back(pool.allocate());
  expect_disjoint(kept);
  for (const Stack& s : kept) pool.release(s);
  EXPECT_EQ(pool.live(), 0u);
}

// ---------------------------------------------------------------------

// Threads allocate stacks (sometimes running into the limit), fill each
// with a pattern of their own, check it later and release it. A stack
// handed to two threads at once, or overlapping another live one, shows
// as a broken pattern or in the registry of live ranges.
struct Registry {
  std::mutex mu;
  std::map<std::uintptr_t, std::uintptr_t> ranges;  // guard start -> hi
  std::atomic<int> overlaps{0};

  void add(const Stack& s) {
    std::uintptr_t lo = addr(s.lo) - kPage, hi = addr(s.hi);
    std::lock_guard lk(mu);
    auto next = ranges.lower_bound(lo);
    if (next != ranges.end() && next->first < hi) ++overlaps;
    if (next != ranges.begin() && std::prev(next)->second > lo) ++overlaps;
    ranges[lo] = hi;
  }
  void remove(const Stack& s) {
    std::lock_guard lk(mu);
    ranges.erase(addr(s.lo) - kPage);
  }
};

void threads_fill_check_release(std::uint64_t seed) {
  constexpr int kThreads = 4, kOps = 150;
  constexpr std::size_t kMaxLive = 6, kHold = 3;
  Chaos setup(seed);
  StackPool pool(kPage * (1 + setup.below(3)) + setup.below(100), kMaxLive);
  Registry registry;
  std::atomic<int> broken{0}, too_many{0}, exhausted{0}, other_errors{0};
  run_threads(kThreads, seed, [&](int who, Chaos& chaos) {
    struct Held {
      Stack s;
      std::uint64_t pattern;
    };
    std::vector<Held> held;
    auto put_back = [&](std::size_t i) {
      if (!holds(held[i].s, held[i].pattern)) ++broken;
      registry.remove(held[i].s);
      chaos.point();
      try {
        pool.release(held[i].s);
      } catch (...) {
        ++other_errors;
      }
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
    };
    for (int op = 0; op < kOps; ++op) {
      if (held.size() < kHold && chaos.below(3) != 0) {
        try {
          Stack s = pool.allocate();
          if (pool.live() > kMaxLive) ++too_many;
          registry.add(s);
          std::uint64_t pattern = (std::uint64_t{1} + who) << 48 | op;
          fill(s, pattern);
          held.push_back(Held{s, pattern});
        } catch (const StackExhausted&) {
          ++exhausted;
        } catch (...) {
          ++other_errors;
        }
      } else if (!held.empty()) {
        put_back(chaos.below(static_cast<std::uint32_t>(held.size())));
      }
      chaos.point();
    }
    while (!held.empty()) put_back(held.size() - 1);
  });
  EXPECT_EQ(broken.load(), 0) << "stacks whose pattern another thread broke";
  EXPECT_EQ(registry.overlaps.load(), 0) << "live stacks that overlapped";
  EXPECT_EQ(too_many.load(), 0) << "times more than max_stacks were live";
  EXPECT_EQ(other_errors.load(), 0)
      << "allocate threw something else, or release threw";
  EXPECT_EQ(pool.live(), 0u);
  EXPECT_LE(pool.cached(), StackPool::kMaxCached);
}

TEST(StackPoolStress, ThreadsAllocateFillCheckAndRelease) {
  for (std::uint64_t seed :
       stress_seeds(8, "stack.threads_allocate_fill_check_release")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    threads_fill_check_release(seed);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace gmp::exercises::stack
