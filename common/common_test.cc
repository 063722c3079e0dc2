// Unit tests of the runtime's own locks and events (common/), on plain
// threads: they are used both by goroutines and by scheduler threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "common/go_func.h"
#include "common/note.h"
#include "common/runtime_lock.h"
#include "common/timer.h"

namespace gmp {
namespace {

TEST(RuntimeLockTest, GivesMutualExclusionUnderContention) {
  constexpr int kThreads = 4, kIncrements = 20000;
  RuntimeLock lock;
  long counter = 0;  // protected by lock
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements; ++i) {
        std::lock_guard lk(lock);
        ++counter;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter, long{kThreads} * kIncrements);
}

TEST(RuntimeLockTest, MayBeUnlockedByAnotherThreadThanTheLocker) {
  RuntimeLock lock;
  lock.lock();
  EXPECT_FALSE(lock.try_lock());
  std::thread other([&] { lock.unlock(); });  // what g0 does after a park
  other.join();
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

TEST(RuntimeLockTest, ASleepingLockerIsWokenByUnlock) {
  RuntimeLock lock;
  std::atomic<bool> got{false};
  lock.lock();
  std::thread waiter([&] {
    lock.lock();  // spins, then sleeps on the key
    got.store(true);
    lock.unlock();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(got.load());
  lock.unlock();
  waiter.join();
  EXPECT_TRUE(got.load());
}

// The timer heap against a sorted reference, through random pushes,
// removals (of any timer, in the heap or not), pops, ticker firings and a
// drain into a second heap; seeded, 20 seeds of 3000 operations. After
// every step: the earliest is the reference's, each timer's index and
// owner say where it is.
TEST(TimerHeapTest, MatchesASortedReferenceThroughRandomOperations) {
  using Clock = RuntimeTimer::Clock;
  int owner_a = 0, owner_b = 0;
  auto base = static_cast<unsigned>(
      ::testing::UnitTest::GetInstance()->random_seed());
  for (unsigned seed = base; seed < base + 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    std::vector<std::unique_ptr<RuntimeTimer>> timers(200);
    for (auto& t : timers) t = std::make_unique<RuntimeTimer>();
    auto fire = [](void*, std::uint64_t, Clock::time_point) {};
    TimerHeap heap(&owner_a), other(&owner_b);
    std::multimap<Clock::time_point, RuntimeTimer*> ref;
    const Clock::time_point t0{};
    auto erase = [&](RuntimeTimer* t) {
      for (auto it = ref.begin(); it != ref.end(); ++it) {
        if (it->second == t) return ref.erase(it), true;
      }
      return false;
    };
    for (int op = 0; op < 3000; ++op) {
      RuntimeTimer* t = timers[rng() % timers.size()].get();
      switch (rng() % 4) {
        case 0:  // push, if it is in no heap
          if (t->index == RuntimeTimer::kNotInHeap) {
            t->when = t0 + std::chrono::microseconds(rng() % 1000);
            t->f = rng() % 2 ? +fire : nullptr;
            t->period = rng() % 4 == 0
                            ? Clock::duration(std::chrono::microseconds(
                                  1 + rng() % 50))
                            : Clock::duration::zero();
            bool was_empty = ref.empty();
            Clock::time_point before = was_empty ? t0 : ref.begin()->first;
            bool earliest = heap.push(t);
            ref.emplace(t->when, t);
            // Earlier than all: at the top. Tied with the earliest: either.
            if (was_empty || t->when < before) {
              EXPECT_TRUE(earliest);
            } else if (t->when > before) {
              EXPECT_FALSE(earliest);
            }
          }
          break;
        case 1:  // remove any timer: true only if it was in
          EXPECT_EQ(heap.remove(t), erase(t));
          break;
        case 2:  // take the earliest as due
          if (!heap.empty()) {
            Clock::time_point now = heap.earliest();
            TimerFiring f{};
            EXPECT_EQ(ref.begin()->first, now);
            // Equal times may come out in either order: erase the one
            // taken (the heap's), checking only its time.
            RuntimeTimer* taken = heap.take_due(now, &f);
            if (taken != nullptr) {
              EXPECT_EQ(taken->f, nullptr);
              EXPECT_TRUE(erase(taken));
            } else {  // a function timer: find which by its firing count
              RuntimeTimer* fired = nullptr;
              for (auto& c : timers) {
                if (c->firing.load() == 1) fired = c.get();
              }
              ASSERT_NE(fired, nullptr);
              fired->firing.store(0);
              EXPECT_EQ(f.due, now);
              for (auto it = ref.begin(); it != ref.end(); ++it) {
                if (it->second == fired && it->first == now) {
                  ref.erase(it);
                  break;
                }
              }
              if (fired->period > Clock::duration::zero()) {
                EXPECT_EQ(fired->when, now + fired->period);
                ref.emplace(fired->when, fired);
              }
            }
          }
          break;
        default:  // sometimes drain into the other heap and back
          if (rng() % 50 == 0) {
            heap.drain_into(other);
            for (auto& [when, tt] : ref) EXPECT_EQ(tt->owner.load(), &owner_b);
            other.drain_into(heap);
          }
          break;
      }
      ASSERT_EQ(heap.size(), ref.size());
      if (!ref.empty()) {
        ASSERT_EQ(heap.earliest(), ref.begin()->first);
      }
      for (auto& [when, tt] : ref) {
        ASSERT_EQ(tt->owner.load(), &owner_a);
        ASSERT_NE(tt->index, RuntimeTimer::kNotInHeap);
      }
    }
    heap.clear();
    for (auto& t : timers) {
      EXPECT_EQ(t->index, RuntimeTimer::kNotInHeap);
      EXPECT_EQ(t->owner.load(), nullptr);
    }
  }
}

// A ticker stays in its heap from one tick to the next: a thread that
// reads its owner while another takes its ticks never sees null (null
// tells BasicTimer's destructor the timer is in no heap, and it frees it
// if no firing is under way: a ticker taken out and pushed back could be
// freed under the heap in between).
TEST(TimerHeapTest, ATickerNeverLooksOutOfItsHeapWhileTicking) {
  using Clock = RuntimeTimer::Clock;
  int owner = 0;
  TimerHeap heap(&owner);
  RuntimeTimer ticker, other;
  ticker.f = other.f = [](void*, std::uint64_t, Clock::time_point) {};
  ticker.period = std::chrono::microseconds(1);
  const Clock::time_point t0{};
  ticker.when = t0;
  other.when = t0 + std::chrono::hours(1);
  heap.push(&other);
  heap.push(&ticker);
  std::atomic<bool> done{false};
  std::atomic<long> seen_null{0};
  std::thread reader([&] {
    while (!done.load(std::memory_order_relaxed)) {
      if (ticker.owner.load(std::memory_order_acquire) == nullptr) {
        seen_null.fetch_add(1, std::memory_order_relaxed);
      }
    }
  });
  for (int i = 0; i < 200000; ++i) {
    TimerFiring f{};
    ASSERT_EQ(heap.take_due(heap.earliest(), &f), nullptr);
    ticker.firing.fetch_sub(1, std::memory_order_relaxed);  // f's last step
  }
  done.store(true);
  reader.join();
  EXPECT_EQ(seen_null.load(), 0);
  EXPECT_EQ(ticker.when, t0 + 200000 * ticker.period);
  EXPECT_EQ(heap.size(), 2u);
}

std::string target_type_name(const GoFunc& f) { return f.target_type().name(); }

// ---- GoFunc ------------------------------------------------------------------

// A callable that records where it was when called, and counts its
// destructions (moved-from ones included, told apart by `live`).
struct Where {
  const void** at;
  int* destroyed;
  bool live = true;
  Where(const void** a, int* d) : at(a), destroyed(d) {}
  Where(Where&& o) noexcept : at(o.at), destroyed(o.destroyed) { o.live = false; }
  ~Where() {
    if (live) ++*destroyed;
  }
  void operator()() { *at = this; }
};

bool inside(const void* p, const GoFunc& f) {
  auto* lo = reinterpret_cast<const char*>(&f);
  auto* x = static_cast<const char*>(p);
  return x >= lo && x < lo + sizeof(GoFunc);
}

TEST(GoFuncTest, ASmallCallableLivesInPlaceAndMovesWithIt) {
  const void* at = nullptr;
  int destroyed = 0;
  {
    GoFunc f(Where(&at, &destroyed));
    ASSERT_TRUE(f);
    f();
    EXPECT_TRUE(inside(at, f)) << "a callable of " << sizeof(Where)
                               << " bytes is kept in the GoFunc itself";
    GoFunc g(std::move(f));
    EXPECT_FALSE(f) << "a moved-from GoFunc is empty";
    g();
    EXPECT_TRUE(inside(at, g)) << "moved into the new GoFunc";
    EXPECT_EQ(target_type_name(g), typeid(Where).name());
    EXPECT_EQ(destroyed, 0);
    g = nullptr;
    EXPECT_EQ(destroyed, 1) << "= nullptr destroys the callable at once";
    EXPECT_FALSE(g);
  }
  EXPECT_EQ(destroyed, 1) << "destroyed once, not again by the GoFunc";
}

TEST(GoFuncTest, ABigCallableLivesOnTheHeapAndIsDestroyedOnce) {
  int destroyed = 0;
  const void* at = nullptr;
  std::array<char, 2 * GoFunc::kInline> big{};
  big[0] = 7;
  {
    Where w(&at, &destroyed);
    GoFunc f([w = std::move(w), big]() mutable { w(); });
    f();
    EXPECT_FALSE(inside(at, f)) << "bigger than kInline: on the heap";
    GoFunc g;
    g = std::move(f);
    g();
    EXPECT_FALSE(f);
  }
  EXPECT_EQ(destroyed, 1);
}

TEST(GoFuncTest, HoldsMoveOnlyCallablesAndMakesNothingOfEmptyOnes) {
  auto owned = std::make_unique<int>(41);
  int seen = 0;
  GoFunc f([p = std::move(owned), &seen] { seen = *p + 1; });
  f();
  EXPECT_EQ(seen, 42);
  void (*null_fn)() = nullptr;
  EXPECT_FALSE(GoFunc(null_fn));
  EXPECT_FALSE(GoFunc(std::function<void()>()));
  EXPECT_FALSE(GoFunc(nullptr));
  EXPECT_EQ(target_type_name(GoFunc()), typeid(void).name());
  bool ran = false;
  GoFunc from_function(std::function<void()>([&] { ran = true; }));
  ASSERT_TRUE(from_function);
  from_function();
  EXPECT_TRUE(ran);
}

TEST(NoteTest, AWakeupBeforeTheSleepIsNotLost) {
  Note n;
  n.clear();
  n.wakeup();
  n.sleep();  // returns at once
  EXPECT_TRUE(n.tsleep(std::chrono::hours(1)));
}

TEST(NoteTest, TsleepTimesOutAndHugeTimeoutsDoNotOverflow) {
  Note n;
  n.clear();
  EXPECT_FALSE(n.tsleep(std::chrono::milliseconds(1)));
  std::thread waker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    n.wakeup();
  });
  EXPECT_TRUE(n.tsleep(std::chrono::nanoseconds::max()));  // waits for it
  waker.join();
}

TEST(NoteDeathTest, ADoubleWakeupIsFatal) {
  auto twice = [] {
    Note n;
    n.clear();
    n.wakeup();
    n.wakeup();
  };
  EXPECT_EXIT(twice(), ::testing::ExitedWithCode(2),
              "fatal error: wakeup: notewakeup - double wakeup");
}

}  // namespace
}  // namespace gmp
