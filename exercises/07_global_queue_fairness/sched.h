// Exercise 07: how a P takes from the global run queue (Go's globrunqget)
// and the 1-in-61 rule that keeps the global queue from starving.
//
// A single-threaded model of one P and the scheduler's global state (the
// model stands for code that holds sched.lock where Go does). Given: the
// structures and the local queue's put and get. Write globrunqget, pick
// and execute in sched.cc. See README.md for the statement.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>

namespace gmp::exercises::fairness {

/// A goroutine, as far as the queues care.
struct G {
  int id = 0;  ///< a test's label
};

/// Slots in a P's local queue (Go: len(p.runq)).
inline constexpr std::uint32_t kLocalCapacity = 256;

/// A P, reduced to what scheduling order needs.
struct P {
  std::deque<G*> runq;       ///< the local queue, at most kLocalCapacity
  G* runnext = nullptr;      ///< runs next, in the current time slice
  std::uint32_t schedtick = 0;  ///< Go's p.schedtick: schedules so far
};

/// The scheduler's global state (Go's sched).
struct Sched {
  std::deque<G*> grq;  ///< the global run queue (Go's sched.runq)
  int gomaxprocs = 1;  ///< how many Ps share the global queue
};

/// Given: Go's runqput without overflow (the tests never fill the queue).
inline void runqput(P& pp, G* gp, bool next) {
  if (next) {
    if (pp.runnext != nullptr) pp.runq.push_back(pp.runnext);
    pp.runnext = gp;
    return;
  }
  pp.runq.push_back(gp);
}

/// Given: Go's runqget. runnext first, with `.second` (inheritTime) true.
inline std::pair<G*, bool> runqget(P& pp) {
  if (G* next = pp.runnext) {
    pp.runnext = nullptr;
    return {next, true};
  }
  if (pp.runq.empty()) return {nullptr, false};
  G* gp = pp.runq.front();
  pp.runq.pop_front();
  return {gp, false};
}

/// Go's globrunqget: takes a batch of n goroutines from the head of the
/// global queue, n = len(grq) / gomaxprocs + 1, but no more than the queue
/// holds, no more than `max` if max > 0, and no more than half the local
/// queue's capacity. Returns the first to run now and appends the other
/// n - 1, in order, to pp's local queue. Null if the global queue is empty.
G* globrunqget(Sched& sched, P& pp, int max);

/// What schedule() runs next on pp, in Go's order: (1) if pp.schedtick is
/// a multiple of 61 and the global queue is not empty, one goroutine from
/// it; (2) the local queue (runqget, which may say inheritTime); (3) a
/// batch from the global queue. Returns {goroutine, inheritTime}, or
/// {null, false} when there is nothing to run.
std::pair<G*, bool> pick(Sched& sched, P& pp);

/// Go's execute, the part that counts: a goroutine that does not inherit
/// the current time slice starts a new schedule (pp.schedtick + 1).
void execute(P& pp, bool inherit_time);

}  // namespace gmp::exercises::fairness
