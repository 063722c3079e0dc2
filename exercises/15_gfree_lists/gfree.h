// Exercise 15: the free lists of dead goroutines, per P and global (Go's
// gfput and gfget, runtime/proc.go, Go 1.19). See README.md for the
// statement.
//
// Given here: the G (its stack, if it has one), the P's list and the
// scheduler's global lists with their lock, which counts its acquisitions,
// and stackalloc/stackfree, which count what they do. Write gfput and
// gfget in gfree.cc.
//
//   P's gFree (owner M only, no lock)      sched.gFree (its lock)
//   [ g g g ... ]  --- 64 reached: down to 31 --->  stack:   [ g g ... ]
//         ^   |                                     noStack: [ g g ... ]
//   gfput |   v gfget  <--- empty: up to 32, with stacks first ---
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace gmp::exercises::gfree {

/// Go's startingStackSize (2 KiB in Go 1.19, its _FixedStack on Linux):
/// the size every new goroutine's stack starts with. A
/// stack of another size (Go grows stacks by copying them) is not kept.
inline constexpr std::size_t kStartingStackSize = 2048;
/// A P's list spills when it reaches this many Gs (Go's gfput: 64) ...
inline constexpr int kGFreeSpill = 64;
/// ... moving Gs to the global lists while it still holds at least this
/// many (Go: `for pp.gFree.n >= 32`), and gfget refills it up to this many.
inline constexpr int kGFreeBatch = 32;

/// A goroutine's stack: [lo, lo + size), or none (lo == 0).
struct Stack {
  std::uintptr_t lo = 0;  ///< 0: no stack
  std::size_t size = 0;   ///< bytes
};

/// A dead goroutine, as far as the free lists care.
struct G {
  int id = 0;              ///< a test's label
  Stack stack;             ///< its stack, or none
  G* schedlink = nullptr;  ///< the next G in whichever list holds it
};

/// A singly linked LIFO list of Gs through schedlink (Go's gList), with
/// its length. Not thread-safe: protected by whoever owns the list.
class GList {
 public:
  /// Whether it holds no G.
  bool empty() const { return head_ == nullptr; }
  /// Gs held.
  int size() const { return n_; }
  /// gp on top.
  void push(G* gp) {
    gp->schedlink = head_;
    head_ = gp;
    ++n_;
  }
  /// The top G (the last pushed), or null.
  G* pop() {
    G* gp = head_;
    if (gp == nullptr) return nullptr;
    head_ = gp->schedlink;
    gp->schedlink = nullptr;
    --n_;
    return gp;
  }
  /// The top G without removing it (for the tests), or null.
  const G* top() const { return head_; }

 private:
  G* head_ = nullptr;
  int n_ = 0;
};

/// A processor: its free list belongs to the M that holds it (no lock).
struct P {
  GList gfree;  ///< Go's pp.gFree
};

/// std::mutex that counts its acquisitions (Go's sched.gFree.lock), and
/// sums how much a watched counter (sched.n) changes while it is held.
class CountingLock {
 public:
  /// Takes the lock, counting it.
  void lock() {
    mu_.lock();
    ++acquisitions_;
    // relaxed: the counter is written under mu_, which orders it.
    if (watched_ != nullptr)
      at_lock_ = watched_->load(std::memory_order_relaxed);
  }
  /// Releases it.
  void unlock() {
    if (watched_ != nullptr) {
      changed_while_held_ +=
          watched_->load(std::memory_order_relaxed) - at_lock_;
    }
    mu_.unlock();
  }
  /// How many times it was taken (read it with the lock held, or when no
  /// other thread uses it).
  std::uint64_t acquisitions() const { return acquisitions_; }
  /// From now on, sum how much `n` changes between each lock() and its
  /// unlock() (for the tests; call it before any thread uses the lock).
  void watch(const std::atomic<int>* n) { watched_ = n; }
  /// That sum: how much the watched counter changed while the lock was
  /// held (read it as acquisitions()).
  std::int64_t changed_while_held() const { return changed_while_held_; }

 private:
  std::mutex mu_;
  std::uint64_t acquisitions_ = 0;             // protected by mu_
  const std::atomic<int>* watched_ = nullptr;  // set before any lock()
  int at_lock_ = 0;                            // protected by mu_
  std::int64_t changed_while_held_ = 0;        // protected by mu_
};

/// The scheduler's global free lists (Go's sched.gFree).
struct Sched {
  CountingLock lock;  ///< protects the two lists
  GList stack;        ///< dead Gs that kept a stack. lock held.
  GList no_stack;     ///< dead Gs without one. lock held.
  /// Gs on the two lists (Go's sched.gFree.n): written with the lock held;
  /// read without it as a hint (relaxed), so that a P finds out that there
  /// is nothing to take without taking the lock.
  std::atomic<int> n{0};

  /// Stacks allocated and freed so far (any thread; for the tests).
  std::uint64_t stacks_allocated = 0;  ///< written by stackalloc only
  std::uint64_t stacks_freed = 0;      ///< written by stackfree only
  std::mutex stack_mu;                 ///< protects the two counts

  /// Go's stackalloc: a new stack of kStartingStackSize bytes for gp, which
  /// has none. (A fake address: nothing here runs on it.)
  void stackalloc(G* gp) {
    std::lock_guard lk(stack_mu);
    gp->stack = Stack{
        0x10000 + static_cast<std::uintptr_t>(++stacks_allocated) * 0x100000,
        kStartingStackSize};
  }
  /// Go's stackfree: gp's stack goes back; gp has none afterwards.
  void stackfree(G* gp) {
    std::lock_guard lk(stack_mu);
    ++stacks_freed;
    gp->stack = Stack{};
  }
};

// ---- Yours: gfree.cc
// -----------------------------------------------------------

/// Go's gfput: puts dead gp on pp's free list. A stack of another size than
/// kStartingStackSize is freed first (stackfree). When the list reaches
/// kGFreeSpill Gs, moves Gs to the global lists (stack or no_stack, by
/// whether they have a stack) while the P still holds kGFreeBatch or more,
/// under one acquisition of sched.lock, and counts them in sched.n. The M
/// that holds pp.
void gfput(Sched& sched, P& pp, G* gp);

/// Go's gfget: a dead G for a new goroutine, from pp's list (the last put
/// first), or null if there is none anywhere. An empty list is first
/// refilled from the global lists up to kGFreeBatch Gs, Gs with a stack
/// first, under one acquisition of sched.lock, and only if sched.n says
/// there is something to take (no lock otherwise). The G returned has a
/// stack of kStartingStackSize (stackalloc if it had none). The M that
/// holds pp.
G* gfget(Sched& sched, P& pp);

}  // namespace gmp::exercises::gfree
