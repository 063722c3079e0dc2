// Lab "runq": what stage3_gmp/runq_test.cc cannot see, because it needs
// a thief to act between two atomic operations of the owner (or the owner
// between two of a thief's), in a window of a few instructions that a
// stress test hits once in millions of tries. Here the queue is built
// with Hooked in place of std::atomic (LocalRunQueue's Atomic parameter):
// each test names one point of the interleaving (just after an operation
// saw goroutine x, or just before the first operation on a G*), and the
// other side's whole operation runs there, once, on the same thread. So
// every test checks its interleaving every time, with no thread and no
// timing. Built with stage3_gmp/runq.h, or with --define=lab=runq with
// labs/runq/runq.h (labs/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#include "stage3_gmp/runq.h"

namespace gmp::stage3 {
namespace {

// A point of an interleaving, reported by a Hooked<G*> (runnext or a
// slot): before an operation, or after one that read the value `seen`.
struct Event {
  bool before;
  G* seen;  // after a load, exchange or compare-exchange; else null
};

// One interleaving: `action` runs once, at the first Event that `when`
// accepts, with the hooks off (its own operations are not points).
class Interleaving {
 public:
  Interleaving(std::function<bool(const Event&)> when,
               std::function<void()> action)
      : when_(std::move(when)), action_(std::move(action)) {
    armed_ = this;
  }
  ~Interleaving() { armed_ = nullptr; }
  Interleaving(const Interleaving&) = delete;
  Interleaving& operator=(const Interleaving&) = delete;

  // Whether the action ran: if not, the queue under test never reached
  // the point (or does not keep its fields in Atomic).
  bool fired() const { return fired_; }

  // Called by Hooked<G*> at every point.
  static void point(const Event& e) {
    Interleaving* i = armed_;
    if (i == nullptr || !i->when_(e)) return;
    armed_ = nullptr;  // once, and not during the action
    i->fired_ = true;
    i->action_();
  }

 private:
  static inline Interleaving* armed_ = nullptr;  // one thread: the test's
  std::function<bool(const Event&)> when_;
  std::function<void()> action_;
  bool fired_ = false;
};

// std::atomic<T> with the same operations (those a run queue uses), and a
// point before each operation on a G* and after each that reads one.
template <class T>
class Hooked {
 public:
  Hooked() noexcept = default;
  Hooked(T v) noexcept : a_(v) {}  // NOLINT: as std::atomic's

  T load(std::memory_order o = std::memory_order_seq_cst) const noexcept {
    before();
    T v = a_.load(o);
    after(v);
    return v;
  }
  void store(T v, std::memory_order o = std::memory_order_seq_cst) noexcept {
    before();
    a_.store(v, o);
  }
  T exchange(T v, std::memory_order o = std::memory_order_seq_cst) noexcept {
    before();
    T old = a_.exchange(v, o);
    after(old);
    return old;
  }
  // Strong in a test: a spurious failure would be one more point.
  bool compare_exchange_weak(
      T& expected, T desired, std::memory_order s = std::memory_order_seq_cst,
      std::memory_order f = std::memory_order_seq_cst) noexcept {
    return compare_exchange_strong(expected, desired, s, f);
  }
  bool compare_exchange_strong(
      T& expected, T desired, std::memory_order s = std::memory_order_seq_cst,
      std::memory_order f = std::memory_order_seq_cst) noexcept {
    before();
    bool ok = a_.compare_exchange_strong(expected, desired, s, f);
    after(expected);
    return ok;
  }
  T fetch_add(T v, std::memory_order o = std::memory_order_seq_cst) noexcept
    requires std::is_integral_v<T> {
    return a_.fetch_add(v, o);
  }
  T fetch_sub(T v, std::memory_order o = std::memory_order_seq_cst) noexcept
    requires std::is_integral_v<T> {
    return a_.fetch_sub(v, o);
  }

 private:
  static void before() {
    if constexpr (std::is_same_v<T, G*>) Interleaving::point({true, nullptr});
  }
  static void after([[maybe_unused]] T seen) {
    if constexpr (std::is_same_v<T, G*>) Interleaving::point({false, seen});
  }
  std::atomic<T> a_{};
};

using Q = LocalRunQueue<8, Hooked>;

// When: just after an operation that read `gp`.
auto after_seeing(G* gp) {
  return [gp](const Event& e) { return !e.before && e.seen == gp; };
}
// When: just before the first operation on runnext or a slot.
bool before_a_g_operation(const Event& e) { return e.before; }

// Everything q holds, taken by its owner, into `got`.
void drain(Q& q, std::vector<G*>& got) {
  while (G* gp = q.owner().get().first) got.push_back(gp);
}

// Conservation: `got` holds each of `want` exactly once, and nothing else.
void expect_each_once(std::vector<G*> got, std::vector<G*> want) {
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want) << "a goroutine lost, or taken twice";
}

class RunqInterleavingTest : public ::testing::Test {
 protected:
  std::vector<G> gs_ = std::vector<G>(2);
  G* x_ = &gs_[0];
  G* y_ = &gs_[1];
  Q q_;      // the P under test, x_ in its runnext
  Q thief_;  // another P, empty
  Q::Overflow overflow_{};
  std::vector<G*> got_;  // what was taken, by anyone

  void SetUp() override {
    ASSERT_EQ(q_.owner().put(x_, true, overflow_), 0u);
  }
  // The thief's whole runqsteal, runnext allowed.
  void thief_steals() {
    if (G* gp = thief_.owner().steal(q_.stealer(), true)) got_.push_back(gp);
  }
};

// put(y, next) while a thief takes x from runnext between the owner's read
// of runnext and its write: the owner must notice (Go sets runnext with
// one CAS). Setting it with a load and then a store pushes x to the ring
// as displaced, although the thief has it: x runs twice.
TEST_F(RunqInterleavingTest, RunnextIsSetByOneCompareAndSwap) {
  Interleaving il(after_seeing(x_), [&] { thief_steals(); });
  EXPECT_EQ(q_.owner().put(y_, true, overflow_), 0u);
  ASSERT_TRUE(il.fired()) << "put never read x from runnext (an Atomic?)";
  drain(q_, got_);
  drain(thief_, got_);
  expect_each_once(got_, {x_, y_});
}

// get() while a thief takes x from runnext between the owner's read of
// runnext and its clearing of it: one of them has x, not both (Go's
// runqget clears runnext with a CAS).
TEST_F(RunqInterleavingTest, RunnextIsTakenByOneCompareAndSwap) {
  Interleaving il(after_seeing(x_), [&] { thief_steals(); });
  if (G* gp = q_.owner().get().first) got_.push_back(gp);
  ASSERT_TRUE(il.fired()) << "get never read x from runnext (an Atomic?)";
  drain(q_, got_);
  drain(thief_, got_);
  expect_each_once(got_, {x_});
}

// A thief saw x in runnext and waits its few microseconds; meanwhile the
// owner runs x. The thief must not take it too (Go's runqgrab takes
// runnext with a CAS from the value it saw).
TEST_F(RunqInterleavingTest, AThiefTakesRunnextByOneCompareAndSwap) {
  Interleaving il(after_seeing(x_), [&] {
    if (G* gp = q_.owner().get().first) got_.push_back(gp);
  });
  thief_steals();
  ASSERT_TRUE(il.fired()) << "steal never read x from runnext (an Atomic?)";
  drain(q_, got_);
  drain(thief_, got_);
  expect_each_once(got_, {x_});
}

// Go's runqempty: head == tail is read, then the owner puts y with next
// (x moves from runnext to the ring) and runs y (runnext is empty again),
// then runnext is read: empty() must not answer true while x is queued.
// Go re-reads the tail after runnext and starts again if it moved.
TEST_F(RunqInterleavingTest, EmptyNeverMissesAGoroutineMovingToTheRing) {
  Interleaving il(before_a_g_operation, [&] {
    ASSERT_EQ(q_.owner().put(y_, true, overflow_), 0u);  // x to the ring
    ASSERT_EQ(q_.owner().get(), std::make_pair(y_, true));
  });
  EXPECT_FALSE(q_.stealer().empty()) << "x is in the ring";
  ASSERT_TRUE(il.fired()) << "empty() never read runnext (an Atomic?)";
  EXPECT_EQ(q_.owner().get(), std::make_pair(x_, false));
  EXPECT_TRUE(q_.stealer().empty());
}

// The plain cases around it: a goroutine in runnext alone is not empty.
TEST_F(RunqInterleavingTest, RunnextAloneIsNotEmpty) {
  EXPECT_FALSE(q_.stealer().empty());
  EXPECT_EQ(q_.stealer().size(), 0u) << "size() counts the ring only";
  EXPECT_EQ(q_.owner().get(), std::make_pair(x_, true));
  EXPECT_TRUE(q_.stealer().empty());
}

}  // namespace
}  // namespace gmp::stage3
