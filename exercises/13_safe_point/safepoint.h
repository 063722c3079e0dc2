// Exercise 13: the asynchronous preemption signal's handler (Go's
// wantAsyncPreempt, isAsyncSafePoint and sigctxt.pushCall; stage 5's
// check_safe_point and push_call in async_preempt.cc): is the interrupted
// point a safe point, and how to make the goroutine "call" the trampoline.
//
// A model of the interrupted thread: its two registers that matter (pc,
// sp), and what the handler reads of its M, G and P. The stage fills the
// model from the ucontext the kernel gives the handler and from
// thread-local state, and writes the registers back. Write
// UserCode::contains, check_safe_point and inject_async_preempt in
// safepoint.cc. See README.md for the statement.
#pragma once

#include <atomic>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gmp::exercises::safepoint {

// ---- The user's code ---------------------------------------------------

/// A range of code addresses, [start, end): one function's machine code.
struct Range {
  std::uintptr_t start = 0;  ///< its first byte
  std::uintptr_t end = 0;    ///< one past its last byte
};

/// Given: the table as UserCode keeps it, a sorted array of ranges that
/// counts every read of an element (`t[i]`, or an iterator's `*` and `->`),
/// so that a test can tell a binary search (about log2 n reads per lookup)
/// from a scan (up to n). Use it as a vector: size(), empty(), t[i],
/// begin()/end() (random access: std::lower_bound and friends work).
/// Besides the elements it touches only a relaxed atomic counter:
/// async-signal-safe.
class RangeTable {
 public:
  /// A random-access iterator whose dereference counts as a read.
  class Iter {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = Range;
    using difference_type = std::ptrdiff_t;
    using pointer = const Range*;
    using reference = const Range&;
    Iter() = default;
    reference operator*() const noexcept { return (*t_)[idx()]; }
    pointer operator->() const noexcept { return &(*t_)[idx()]; }
    reference operator[](difference_type n) const noexcept {
      return (*t_)[static_cast<std::size_t>(i_ + n)];
    }
    Iter& operator++() noexcept { ++i_; return *this; }
    Iter operator++(int) noexcept { Iter o = *this; ++i_; return o; }
    Iter& operator--() noexcept { --i_; return *this; }
    Iter operator--(int) noexcept { Iter o = *this; --i_; return o; }
    Iter& operator+=(difference_type n) noexcept { i_ += n; return *this; }
    Iter& operator-=(difference_type n) noexcept { i_ -= n; return *this; }
    friend Iter operator+(Iter a, difference_type n) noexcept { return a += n; }
    friend Iter operator+(difference_type n, Iter a) noexcept { return a += n; }
    friend Iter operator-(Iter a, difference_type n) noexcept { return a -= n; }
    friend difference_type operator-(Iter a, Iter b) noexcept { return a.i_ - b.i_; }
    friend bool operator==(Iter a, Iter b) noexcept { return a.i_ == b.i_; }
    friend std::strong_ordering operator<=>(Iter a, Iter b) noexcept {
      return a.i_ <=> b.i_;
    }

   private:
    friend class RangeTable;
    Iter(const RangeTable* t, difference_type i) : t_(t), i_(i) {}
    std::size_t idx() const noexcept { return static_cast<std::size_t>(i_); }
    const RangeTable* t_ = nullptr;
    difference_type i_ = 0;
  };

  RangeTable() = default;
  explicit RangeTable(std::vector<Range> v) : v_(std::move(v)) {}
  /// A copy has the same ranges and has counted no read.
  RangeTable(const RangeTable& o) : v_(o.v_) {}
  RangeTable& operator=(const RangeTable& o) {
    v_ = o.v_;
    reads_.store(0, std::memory_order_relaxed);
    return *this;
  }

  std::size_t size() const noexcept { return v_.size(); }
  bool empty() const noexcept { return v_.empty(); }
  /// The i-th range (i < size()); one read.
  const Range& operator[](std::size_t i) const noexcept {
    reads_.fetch_add(1, std::memory_order_relaxed);  // a count, orders nothing
    return v_[i];
  }
  Iter begin() const noexcept { return Iter(this, 0); }
  Iter end() const noexcept {
    return Iter(this, static_cast<std::ptrdiff_t>(v_.size()));
  }

  /// Elements read since the table was made or reset_reads() (for tests).
  std::size_t reads() const noexcept {
    return reads_.load(std::memory_order_relaxed);
  }
  void reset_reads() const noexcept { reads_.store(0, std::memory_order_relaxed); }

 private:
  std::vector<Range> v_;  // immutable after construction
  mutable std::atomic<std::size_t> reads_{0};
};

/// The functions a goroutine may be stopped in (stage 5's user_code table,
/// built from the ELF symbol table; Go's findfunc over the linker's
/// function table). Immutable once built, so a signal handler may read it
/// on any thread at any moment.
class UserCode {
 public:
  /// An empty table: no PC is user code (stage 5 with a stripped binary).
  UserCode() = default;

  /// Given: takes `ranges`, which must be sorted by start, each non-empty,
  /// none overlapping another (touching is fine: [a, b) then [b, c)).
  /// Throws std::invalid_argument otherwise. Not in a signal handler (it
  /// allocates): build the table first, as stage 5 does at start-up.
  explicit UserCode(std::vector<Range> ranges)
      : ranges_((check(ranges), std::move(ranges))) {}

  /// Whether `pc` lies in one of the ranges (start inclusive, end
  /// exclusive). A binary search: O(log n) reads of the table (graded:
  /// at most 2 log2(n) + 4 of them per call), no allocation, no lock, so
  /// async-signal-safe. Any thread.
  bool contains(std::uintptr_t pc) const;

  /// The ranges, sorted (for tests and diagnostics).
  const RangeTable& ranges() const { return ranges_; }

 private:
  static void check(const std::vector<Range>& r) {
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (r[i].start >= r[i].end) {
        throw std::invalid_argument("UserCode: range " + std::to_string(i) +
                                    " is empty or reversed");
      }
      if (i > 0 && r[i].start < r[i - 1].end) {
        throw std::invalid_argument("UserCode: range " + std::to_string(i) +
                                    " is out of order or overlaps the one "
                                    "before");
      }
    }
  }

  RangeTable ranges_;  // immutable after construction
};

// ---- The interrupted thread --------------------------------------------

/// The interrupted context's registers that the handler reads and
/// rewrites (x86-64: rip and rsp, in the ucontext's gregs).
struct Regs {
  std::uintptr_t pc = 0;  ///< the next instruction to run (rip)
  std::uintptr_t sp = 0;  ///< the stack pointer (rsp); the stack grows down
};

/// A goroutine's stack, [lo, hi): it starts at hi and grows down to lo.
struct Stack {
  std::uintptr_t lo = 0;  ///< the lowest usable byte
  std::uintptr_t hi = 0;  ///< one past the highest: sp == hi is empty
};

/// What the handler knows about the point where the signal stopped the
/// thread. Filled in by the handler, on the signal stack, from the
/// ucontext and the thread's M (stage 5: stage3::getm()).
struct Interrupted {
  Regs regs;  ///< where the thread was stopped
  /// The thread is an M that runs a goroutine (m.curg set, in state
  /// running), not a plain thread and not the scheduler on g0.
  bool running_g = false;
  /// The M's P has a preemption request pending (p.preempt, set by
  /// sysmon's preemptone). False for a late signal whose request was
  /// already served.
  bool preempt = false;
  Stack gstack;   ///< the running goroutine's stack (if running_g)
  int locks = 0;  ///< runtime locks this thread holds (Go's m.locks)
  /// The user's code; null means an empty table.
  const UserCode* user_code = nullptr;
};

/// The bytes below sp that a function may use without moving sp (System
/// V x86-64 ABI): the interrupted code's data may be there.
inline constexpr std::uintptr_t kRedZone = 128;
/// The trampoline's frame and what runs under it (this model's figure;
/// stage 5's is larger: the XSAVE area, the yield's C++ frames).
inline constexpr std::uintptr_t kTrampolineFrame = 4096;
/// The room a preemption needs below the interrupted sp (Go's
/// asyncPreemptStack): the red zone it skips, the return address it
/// pushes, the trampoline's frame. check_safe_point demands
/// sp - gstack.lo >= kAsyncPreemptStack.
inline constexpr std::uintptr_t kAsyncPreemptStack =
    kRedZone + sizeof(std::uintptr_t) + kTrampolineFrame;

/// Why an interrupted point is, or is not, a safe point (stage 5's
/// SafePoint, in the order check_safe_point tests them).
enum class SafePoint : std::uint8_t {
  /// Every check passed: inject the call.
  kSafe,
  /// No goroutine running, or no preemption request pending.
  kNoRequest,
  /// sp is not inside the goroutine's stack: the thread is on g0, on the
  /// signal stack, or on another stack the runtime switched to.
  kNotOnGStack,
  /// The thread holds a runtime lock (m.locks > 0).
  kLocksHeld,
  /// pc is not in the user's code: the runtime, the C++ library, libc,
  /// the trampoline itself...
  kNotUserCode,
  /// Less than kAsyncPreemptStack bytes between gstack.lo and sp.
  kStackTooLow,
};

/// Go's wantAsyncPreempt then isAsyncSafePoint, in stage 5's order: the
/// first check that fails gives the answer.
///   1. kNoRequest unless running_g and preempt;
///   2. kNotOnGStack unless gstack.lo < sp <= gstack.hi;
///   3. kLocksHeld if locks > 0;
///   4. kNotUserCode unless user_code contains pc;
///   5. kStackTooLow if sp - gstack.lo < kAsyncPreemptStack;
///   6. else kSafe.
/// Reads nothing but `in` and the table; async-signal-safe. Any thread.
SafePoint check_safe_point(const Interrupted& in);

/// What the handler does at a safe point (Go's pushCall, and stage 5's
/// push_call): makes the interrupted code appear to have called
/// `trampoline` at regs.pc. Moves sp down past the red zone (kRedZone
/// bytes the interrupted function may be using below its sp), pushes
/// regs.pc there as the return address (8 bytes, at the new sp), and sets
/// pc to `trampoline`. Touches no other memory: the red zone, and
/// everything above it, stay as they were. The trampoline returns with
/// `ret $128`, which pops the return address and skips the red zone.
/// Requires check_safe_point(...) == kSafe for this context (there is
/// room). Async-signal-safe. On the interrupted thread (its handler).
void inject_async_preempt(Regs& regs, std::uintptr_t trampoline);

}  // namespace gmp::exercises::safepoint
