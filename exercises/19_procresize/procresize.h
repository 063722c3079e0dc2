// Exercise 19: changing GOMAXPROCS with the world stopped (Go's procresize
// and p.destroy, runtime/proc.go, Go 1.19). See README.md.
//
// The world is stopped: no other M runs, so nothing here is concurrent.
// Given: the model of the scheduler's state (Ps with their run queues,
// runnext, timers and free Gs; the global run queue; the idle P list; the
// idle Ms). Write procresize in procresize.cc.
#pragma once

#include <deque>
#include <memory>
#include <vector>

namespace gmp::exercises::resize {

/// A goroutine (a label is enough here).
struct G {
  int id = 0;
};

/// An M (a label, and the P it holds).
struct P;
struct M {
  int id = 0;
  P* p = nullptr;  ///< the P it holds, or null
};

/// A P's status, as procresize leaves it.
enum class PStatus { kIdle, kRunning, kDead };

/// A processor.
struct P {
  int id = 0;
  PStatus status = PStatus::kIdle;
  M* m = nullptr;            ///< the M it is handed to, or null
  G* runnext = nullptr;      ///< Go's runnext
  std::deque<G*> runq;       ///< its local run queue, head first
  std::vector<long> timers;  ///< its timers (their deadlines; order free)
  std::vector<G*> gfree;     ///< its free dead Gs
};

/// The scheduler's state that procresize reads and writes.
struct Sched {
  /// allp: allp[i]->id == i; the first gomaxprocs are in use.
  std::vector<std::unique_ptr<P>> allp;
  int gomaxprocs = 0;
  std::deque<G*> grq;  ///< the global run queue, head first
  /// Idle Ps: pidleput pushes at the back, pidleget pops it.
  std::vector<P*> pidle;
  std::vector<M*> midle;  ///< idle Ms; mget pops the back (null if none)
  std::vector<G*> gfree;  ///< the global free list of dead Gs
  /// Ps trimmed from allp (Go keeps them too: an M in a system call may
  /// still point at one). procresize appends to it, in id order.
  std::vector<std::unique_ptr<P>> retired;

  /// Go's pidleput: pp (kIdle, no M) on the idle list.
  void pidleput(P* pp) { pidle.push_back(pp); }
  /// Go's mget: an idle M, or null.
  M* mget() {
    if (midle.empty()) return nullptr;
    M* m = midle.back();
    midle.pop_back();
    return m;
  }
  /// Go's globrunqputhead: gp at the head of the global run queue.
  void globrunqputhead(G* gp) { grq.push_front(gp); }
};

/// Go's procresize(nprocs), with sched.lock held and the world stopped, on
/// the M `self` (which may hold a P, or none at start-up): sets the number
/// of Ps to nprocs and returns the Ps that have work, each handed to an idle
/// M (`m`, or null if none was left), lowest id first (Go's runnablePs
/// list). In order:
///  1. nprocs <= 0: throws std::invalid_argument("procresize: invalid arg"),
///     nothing changed;
///  2. Ps from gomaxprocs to nprocs - 1 are made, with their id, kIdle;
///  3. self keeps its P if its id < nprocs (kRunning); otherwise it lets it
///     go and takes allp[0] (kRunning);
///  4. each P from nprocs to the old gomaxprocs - 1 is destroyed (Go's
///     p.destroy): its runq, from its tail, and then its runnext go to the
///     global queue's head one by one, so that they run first and in their
///     order; its timers move to self's P; its free Gs to the global list;
///     it becomes kDead;
///  5. allp is trimmed to nprocs Ps, the removed ones moved to `retired`;
///  6. every P but self's, from nprocs - 1 down to 0, becomes kIdle and,
///     with an empty queue (runq and runnext), goes on the idle list;
///     with work, it takes an idle M (mget) and joins the returned list;
///  7. gomaxprocs = nprocs.
std::vector<P*> procresize(Sched& sched, M& self, int nprocs);

}  // namespace gmp::exercises::resize
