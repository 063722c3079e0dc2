// Exercise 11: entersyscall and exitsyscall's three paths (Go's
// entersyscall, exitsyscall, exitsyscallfast, exitsyscall0, and the
// syscall half of sysmon's retake; runtime/proc.go).
//
// A model with real atomics and real threads: Ps with an atomic status,
// an idle-P list and a global run queue under one lock, Ms as threads. The
// provided parts (the lists, acquirep/releasep, casgstatus, handoffp)
// check their preconditions and throw std::logic_error when one breaks,
// as Go's runtime throws. Write the five functions of syscall.cc. See
// README.md for the statement.
//
// The lazy hand-off
// =================
// An M entering a system call keeps nothing locked and wakes nobody: it
// lets go of its P (the P's owner becomes null) and marks it kSyscall,
// remembering it as m->oldp. From then on two threads may race for the P,
// and one compare-and-swap from kSyscall decides:
//   - the M, back from the kernel: kSyscall -> kRunning, and it runs on
//     with its old P (path 1, exitsyscallfast: no lock, nobody woken);
//   - sysmon, if the call lasts: kSyscall -> kIdle, and it hands the P off
//     (retake, handoffp: here, to the idle list).
// An M whose CAS fails takes any idle P (path 2); if there is none, it
// puts its goroutine on the global run queue and parks (path 3,
// exitsyscall0).
//
//   P status    owner (p->m)      where
//   kRunning    its M             held by the M
//   kSyscall    none              m->oldp of the M in the call
//   kIdle       none              the idle list (or being put there)
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace gmp::exercises::syscall {

// ---- Provided: a test hook --------------------------------------------------------

/// Test-only: a delay that the provided acquirep, releasep, casgstatus and
/// handoffp run on entry, where Go's runtime may lose the CPU. A test
/// thread sets its own (it is thread_local) to a Chaos point; empty by
/// default.
inline thread_local std::function<void()> chaos_hook;

/// Runs this thread's chaos_hook, if any. Provided code only.
inline void chaos_delay() {
  if (chaos_hook) chaos_hook();
}

/// std::atomic<T> (the part this model uses), whose plain load() and
/// store() also run chaos_delay(): after a load, the value read is already
/// stale during the delay; before a store, the world moves on. In a test,
/// that opens wide the window between a load and a later store that
/// should have been one compare-and-swap. compare_exchange_strong and
/// exchange stay single atomic steps, without delay.
template <class T>
class ChaosAtomic {
 public:
  constexpr ChaosAtomic(T v) noexcept : a_(v) {}  // NOLINT: as std::atomic
  ChaosAtomic(const ChaosAtomic&) = delete;
  ChaosAtomic& operator=(const ChaosAtomic&) = delete;

  T load(std::memory_order mo = std::memory_order_seq_cst) const {
    T v = a_.load(mo);
    chaos_delay();
    return v;
  }
  void store(T v, std::memory_order mo = std::memory_order_seq_cst) {
    chaos_delay();
    a_.store(v, mo);
  }
  T exchange(T v, std::memory_order mo = std::memory_order_seq_cst) {
    return a_.exchange(v, mo);
  }
  bool compare_exchange_strong(T& expected, T desired,
                               std::memory_order mo = std::memory_order_seq_cst) {
    return a_.compare_exchange_strong(expected, desired, mo);
  }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order success,
                               std::memory_order failure) {
    return a_.compare_exchange_strong(expected, desired, success, failure);
  }

 private:
  std::atomic<T> a_;
};

// ---- The model ----------------------------------------------------------------------

/// A P's state (Go's _Pidle, _Prunning, _Psyscall). See the table above.
enum class PStatus : std::uint8_t { kIdle, kRunning, kSyscall };

/// A goroutine's state (Go's _Grunnable, _Grunning, _Gsyscall).
enum class GStatus : std::uint8_t { kRunnable, kRunning, kSyscall };

/// Which way exitsyscall went.
enum class ExitPath : std::uint8_t {
  kFast,    ///< path 1: took the old P back (exitsyscallfast)
  kIdleP,   ///< path 2: the old P was gone; took an idle P
  kParked,  ///< path 3: no P; the G went to the GRQ and the M parks
};

struct M;

/// A goroutine, as far as this model cares.
struct G {
  int id = 0;  ///< a test's label
  /// Go's atomicstatus. Changed only through Sched::casgstatus.
  std::atomic<GStatus> status{GStatus::kRunnable};
  /// On the global run queue now. Protected by Sched::lock.
  bool queued = false;
};

/// A processor (Go's p).
struct P {
  int id = 0;  ///< index in Sched's Ps
  /// Go's p.status: kRunning and kSyscall are set by the P's M;
  /// kSyscall -> anything only by whoever wins a compare-and-swap (the M
  /// back from its call, or sysmon); kIdle -> kRunning by acquirep. An
  /// atomic (with test delays: see ChaosAtomic).
  ChaosAtomic<PStatus> status{PStatus::kIdle};
  /// Go's p.m: the M that owns this P, or null (idle, or in a call). Set
  /// by acquirep, cleared by releasep, both with a checking CAS.
  std::atomic<M*> m{nullptr};
  /// Next on the idle list. Protected by Sched::lock.
  P* link = nullptr;
};

/// A machine (an OS thread; Go's m). Its fields belong to its thread.
struct M {
  int id = 0;          ///< a test's label
  P* p = nullptr;      ///< Go's m.p: the P it holds, or null
  P* oldp = nullptr;   ///< Go's m.oldp: its P before the call (in a call only)
  G* curg = nullptr;   ///< the goroutine it runs, or null
};

/// Go's sched.lock, which also knows its holder, so that the functions
/// that need it held can check (Go's assertLockHeld).
class SchedLock {
 public:
  void lock() {
    mu_.lock();
    owner_.store(std::this_thread::get_id(), std::memory_order_relaxed);
  }
  void unlock() {
    owner_.store(std::thread::id(), std::memory_order_relaxed);
    mu_.unlock();
    if (unlock_hook) unlock_hook();
  }
  /// For tests: run on the unlocking thread right after each unlock (that
  /// thread's own; empty by default), where another M could take the lock.
  static inline thread_local std::function<void()> unlock_hook;
  /// The calling thread holds the lock (relaxed: only the holder's own
  /// store can make it true for the caller).
  bool held() const {
    return owner_.load(std::memory_order_relaxed) == std::this_thread::get_id();
  }

 private:
  std::mutex mu_;
  std::atomic<std::thread::id> owner_{};
};

/// The scheduler's shared state: the Ps, the idle list, the global run
/// queue. Thread-safe as each function says.
class Sched {
 public:
  /// nprocs Ps (Go's GOMAXPROCS), all idle on the idle list, in id order
  /// from its head.
  explicit Sched(int nprocs) {
    for (int i = 0; i < nprocs; ++i) {
      allp_.push_back(std::make_unique<P>());
      allp_.back()->id = i;
    }
    std::lock_guard lk(lock);
    for (int i = nprocs - 1; i >= 0; --i) pidleput(allp_[i].get());
  }

  /// P `i` (Go's allp[i]). Any thread.
  P* allp(int i) const { return allp_.at(i).get(); }
  /// How many Ps there are. Any thread.
  int nprocs() const { return static_cast<int>(allp_.size()); }

  /// Go's sched.lock: protects the idle list and the GRQ.
  SchedLock lock;

  // ---- Provided: the idle list and the GRQ (lock held) ----------------------

  /// Go's pidleput: puts pp on the idle list. pp must be kIdle, owned by
  /// nobody, and not on the list already. lock held.
  void pidleput(P* pp) {
    need_lock("pidleput");
    if (pp->status.load(std::memory_order_relaxed) != PStatus::kIdle ||
        pp->m.load(std::memory_order_relaxed) != nullptr) {
      fail("pidleput: P " + std::to_string(pp->id) + " is " + describe(pp) +
           ", not idle and unowned");
    }
    for (P* q = pidle_; q != nullptr; q = q->link) {
      if (q == pp) fail("pidleput: P " + std::to_string(pp->id) + " is on the idle list already");
    }
    pp->link = pidle_;
    pidle_ = pp;
    ++npidle_;
  }

  /// Go's pidleget: takes a P off the idle list (still kIdle, unowned), or
  /// returns null. lock held.
  P* pidleget() {
    need_lock("pidleget");
    P* pp = pidle_;
    if (pp == nullptr) return nullptr;
    if (pp->status.load(std::memory_order_relaxed) != PStatus::kIdle ||
        pp->m.load(std::memory_order_relaxed) != nullptr) {
      fail("pidleget: P " + std::to_string(pp->id) + " on the idle list is " +
           describe(pp));
    }
    pidle_ = pp->link;
    pp->link = nullptr;
    --npidle_;
    return pp;
  }

  /// Ps on the idle list (Go's sched.npidle). lock held.
  int npidle() const {
    need_lock("npidle");
    return npidle_;
  }

  /// The idle list, head first. lock held. For tests.
  std::vector<P*> idle_ps() const {
    need_lock("idle_ps");
    std::vector<P*> ps;
    for (P* q = pidle_; q != nullptr; q = q->link) ps.push_back(q);
    return ps;
  }

  /// Go's globrunqput: puts gp, kRunnable and not queued, at the GRQ's
  /// tail. lock held.
  void globrunqput(G* gp) {
    need_lock("globrunqput");
    if (gp->status.load(std::memory_order_relaxed) != GStatus::kRunnable || gp->queued) {
      fail("globrunqput: G " + std::to_string(gp->id) +
           (gp->queued ? " is on the GRQ already" : " is not runnable"));
    }
    gp->queued = true;
    grq_.push_back(gp);
  }

  /// Go's globrunqget (one G): the G at the GRQ's head, or null. lock held.
  G* globrunqget() {
    need_lock("globrunqget");
    if (grq_.empty()) return nullptr;
    G* gp = grq_.front();
    grq_.pop_front();
    gp->queued = false;
    return gp;
  }

  /// Gs on the GRQ (Go's sched.runqsize). lock held.
  std::size_t grq_size() const {
    need_lock("grq_size");
    return grq_.size();
  }

  // ---- Provided: ownership and states (any thread, no lock) ------------------

  /// Go's acquirep (wirep): m, which holds no P, takes pp, which nobody
  /// owns and which is kIdle (off the idle list) or kRunning (just won from
  /// kSyscall by exitsyscallfast); pp becomes kRunning. Throws if another M
  /// owns pp. The M's thread.
  void acquirep(M* m, P* pp) {
    chaos_delay();
    if (m->p != nullptr) {
      fail("acquirep: M " + std::to_string(m->id) + " holds P " +
           std::to_string(m->p->id) + " already");
    }
    PStatus s = pp->status.load(std::memory_order_relaxed);
    if (s == PStatus::kSyscall) {
      fail("acquirep: P " + std::to_string(pp->id) + " is in a system call");
    }
    M* none = nullptr;
    // acq_rel: the P's previous owner's writes are ours; ours go to the next.
    if (!pp->m.compare_exchange_strong(none, m, std::memory_order_acq_rel)) {
      fail("acquirep: P " + std::to_string(pp->id) + " is owned by M " +
           std::to_string(none->id) + "; M " + std::to_string(m->id) +
           " takes it too");
    }
    pp->status.store(PStatus::kRunning, std::memory_order_relaxed);  // ours now
    m->p = pp;
  }

  /// Go's releasep, without the status change: m lets go of its P (whose
  /// owner becomes null) and returns it; the caller sets the status. The
  /// M's thread.
  P* releasep(M* m) {
    chaos_delay();
    P* pp = m->p;
    if (pp == nullptr) fail("releasep: M " + std::to_string(m->id) + " holds no P");
    M* me = m;
    // release: what m wrote as the owner goes to the P's next owner.
    if (!pp->m.compare_exchange_strong(me, nullptr, std::memory_order_release,
                                       std::memory_order_relaxed)) {
      fail("releasep: M " + std::to_string(m->id) + " holds P " +
           std::to_string(pp->id) + ", but its owner is " +
           (me == nullptr ? std::string("nobody") : "M " + std::to_string(me->id)));
    }
    m->p = nullptr;
    return pp;
  }

  /// Go's casgstatus: gp goes from `from` to `to`; throws if it was not in
  /// `from`. Any thread.
  void casgstatus(G* gp, GStatus from, GStatus to) {
    chaos_delay();
    GStatus old = from;
    // acq_rel: a G's state change publishes what its previous holder did.
    if (!gp->status.compare_exchange_strong(old, to, std::memory_order_acq_rel)) {
      fail("casgstatus: G " + std::to_string(gp->id) + " is " + name(old) +
           ", not " + name(from));
    }
  }

  /// Go's handoffp, in this model: pp, which its caller has just made
  /// kIdle (and owns: nobody else can reach it), goes to the idle list.
  /// (Go would start an M for it if there were work; here the Ms without a
  /// P look at the idle list themselves.) Takes the lock. Any thread.
  void handoffp(P* pp) {
    chaos_delay();
    std::lock_guard lk(lock);
    pidleput(pp);
  }

  // ---- The exercise -----------------------------------------------------------

  /// Go's entersyscall: m, running m->curg on m->p, is about to block in
  /// the kernel. The G becomes kSyscall; the P is let go of (owner null)
  /// and marked kSyscall, and kept as m->oldp; m->p becomes null. Takes no
  /// lock. The M's thread.
  void entersyscall(M* m);

  /// Go's exitsyscall: m is back from the kernel with m->curg. Takes one of
  /// the three paths and returns which. On kFast and kIdleP, m holds a P
  /// (kRunning, owned by m) and runs m->curg (kRunning). On kParked, m
  /// holds no P, m->curg is null, and the G is kRunnable on the GRQ. In
  /// all cases m->oldp becomes null. The M's thread.
  ExitPath exitsyscall(M* m);

  /// The syscall half of Go's retake, on sysmon: takes pp from the M in a
  /// call (kSyscall -> kIdle) and hands it off (handoffp). Returns false,
  /// changing nothing, if pp is not in a call (its M came back first, or
  /// it never was). Any thread.
  bool retake(P* pp);

 private:
  /// Path 1 (Go's exitsyscallfast): takes `oldp` back if it is still
  /// kSyscall. The M's thread.
  bool exitsyscallfast(M* m, P* oldp);
  /// Path 3 (Go's exitsyscall0): no P was free. One more look for an idle
  /// P under the lock (kIdleP); else the G goes to the GRQ (kParked). The
  /// M's thread.
  ExitPath exitsyscall0(M* m);

  // Provided helpers.
  void need_lock(const char* fn) const {
    if (!lock.held()) fail(std::string(fn) + ": sched.lock must be held");
  }
  [[noreturn]] static void fail(const std::string& what) {
    throw std::logic_error(what);
  }
  static std::string name(PStatus s) {
    return s == PStatus::kIdle ? "idle" : s == PStatus::kRunning ? "running" : "in a syscall";
  }
  static std::string name(GStatus s) {
    return s == GStatus::kRunnable ? "runnable" : s == GStatus::kRunning ? "running" : "in a syscall";
  }
  static std::string describe(const P* pp) {
    M* owner = pp->m.load(std::memory_order_relaxed);
    return name(pp->status.load(std::memory_order_relaxed)) + " (owner: " +
           (owner == nullptr ? std::string("none") : "M " + std::to_string(owner->id)) + ")";
  }

  std::vector<std::unique_ptr<P>> allp_;  // immutable after construction
  // Protected by lock:
  P* pidle_ = nullptr;     // the idle list (Go's sched.pidle)
  int npidle_ = 0;         // its length
  std::deque<G*> grq_;     // the global run queue (Go's sched.runq)
};

}  // namespace gmp::exercises::syscall
