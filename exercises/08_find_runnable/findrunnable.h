// Exercise 08: where an M looks for work, and in which order (Go's
// findRunnable, stealWork, runqsteal and injectglist; proc.go).
//
// A single-threaded model of the scheduler's state: the Ps (each a local
// queue, runnext and schedtick), the global run queue, an injectable
// network poller and an injectable random source. The model stands for
// code that holds sched.lock where Go does and owns a P: nothing here is
// concurrent, the lesson is the order and its effects. Given: the
// structures and the pieces other exercises teach (runqget, runqput,
// globrunqget, the random steal order). Write runqsteal, steal_work,
// injectglist and find_runnable in findrunnable.cc. See README.md.
//
// findRunnable's order (Go 1.19, without timers, GC and the spinning limit)
// =========================================================================
//   1. Every 61st schedtick, if the global queue has work, one goroutine
//      from it (globrunqget with max 1): fairness for the global queue.
//   2. The local queue: runnext first, then the head (runqget).
//   3. The global queue: a batch (globrunqget with max 0).
//   4. The network poller, without blocking (netpoll(0)): the first ready
//      goroutine runs, the others are injected (injectglist, below).
//   5. Stealing (stealWork): up to 4 rounds; each round visits every other
//      P once, in a fresh random order, and steals half of the first
//      non-empty local queue it meets; only the last round may take a
//      victim's runnext.
//   6. Nothing anywhere: return null, which means "park" (Go releases the
//      P and stops the M; exercise 09 is that part).
//
// injectglist's model (Go's injectglist, with the caller holding a P)
// -------------------------------------------------------------------
// The ready goroutines other than the first are a list L, in netpoll's
// order. Let n = min(sched.npidle, len(L)): the first n of L go to the
// tail of the global queue, in order, and startidle(n) starts that many
// idle Ps (each will take one of them). The rest of L go to the tail of
// the caller's local queue, in order (runqput: a full queue overflows to
// the global queue). Busy Ps are not disturbed: only an idle P can run an
// injected goroutine at once, and the caller's own P runs the rest.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <numeric>
#include <vector>

namespace gmp::exercises::findrunnable {

/// A goroutine, as far as the queues care.
struct G {
  int id = 0;  ///< a test's label
};

/// Slots in a P's local queue (Go: len(p.runq)).
inline constexpr std::size_t kLocalCapacity = 256;
/// Go's 1-in-61 global queue check: a prime, so that no workload with a
/// period of its own keeps falling between two checks (exercise 07).
inline constexpr std::uint32_t kFairnessTick = 61;
/// Go's stealTries: rounds of stealWork over all the Ps.
inline constexpr int kStealTries = 4;

/// A P, reduced to what the order needs. The whole model is one thread.
struct P {
  std::deque<G*> runq;          ///< local queue, oldest at the front, <= 256
  G* runnext = nullptr;         ///< runs next (the goroutine readied last)
  std::uint32_t schedtick = 0;  ///< Go's p.schedtick: schedules so far
};

/// The scheduler's state (Go's sched and allp).
struct Sched {
  std::vector<P> allp;  ///< every P; gomaxprocs() == allp.size()
  std::deque<G*> grq;   ///< the global run queue (Go's sched.runq), FIFO
  /// Go's sched.npidle: how many Ps are idle. The model keeps only the
  /// count; an idle P's queue is empty (Go's pidleput checks it), so the
  /// tests leave that many Ps other than the caller's empty.
  int npidle = 0;
  /// Ps started by startidle (Go: startm on an idle P), for the tests.
  int wakeups = 0;
  /// Go's netpoll(0): the goroutines whose I/O is ready, in order, without
  /// blocking; each is returned once. Empty: no poller (Go's
  /// netpollinited() false).
  std::function<std::vector<G*>()> netpoll;
  /// Go's fastrand: the only random source stealing may use (the tests
  /// seed it, so a failure replays).
  std::function<std::uint32_t()> fastrand;

  /// Go's gomaxprocs.
  int gomaxprocs() const { return static_cast<int>(allp.size()); }
};

// ---- Provided: pieces other exercises teach ---------------------------------

/// Given: Go's runqget. runnext first, then the head; null if both empty.
/// (Go also returns inheritTime; exercise 07 is about it.)
inline G* runqget(P& pp) {
  if (G* next = pp.runnext) {
    pp.runnext = nullptr;
    return next;
  }
  if (pp.runq.empty()) return nullptr;
  G* gp = pp.runq.front();
  pp.runq.pop_front();
  return gp;
}

/// Given: Go's runqput(pp, gp, next=false), with a simplified overflow: gp
/// goes to the tail of pp's queue, or, if it is full, to the tail of the
/// global queue (Go moves half the queue along with it: exercise 06).
inline void runqput(Sched& sched, P& pp, G* gp) {
  if (pp.runq.size() < kLocalCapacity) {
    pp.runq.push_back(gp);
  } else {
    sched.grq.push_back(gp);
  }
}

/// Given: Go's globrunqget (exercise 07). Takes n goroutines from the head
/// of the global queue, n = len / gomaxprocs + 1, capped by len, by `max`
/// if max > 0, and by half the local capacity; returns the first and puts
/// the other n - 1, in order, at the tail of pp's queue. Null if empty.
inline G* globrunqget(Sched& sched, P& pp, int max) {
  std::size_t len = sched.grq.size();
  if (len == 0) return nullptr;
  std::size_t n = len / static_cast<std::size_t>(sched.gomaxprocs()) + 1;
  n = std::min(n, len);
  if (max > 0) n = std::min(n, static_cast<std::size_t>(max));
  n = std::min(n, kLocalCapacity / 2);
  G* first = sched.grq.front();
  sched.grq.pop_front();
  for (std::size_t i = 1; i < n; ++i) {
    runqput(sched, pp, sched.grq.front());
    sched.grq.pop_front();
  }
  return first;
}

/// Given: Go's startIdle inside injectglist: starts up to n idle Ps (Go:
/// pidleget + startm for each). In the model, each takes one off npidle
/// and counts in wakeups.
inline void startidle(Sched& sched, int n) {
  for (int i = 0; i < n && sched.npidle > 0; ++i) {
    --sched.npidle;
    ++sched.wakeups;
  }
}

/// Given: Go's randomOrder (stealOrder): enumerates 0..count-1, each once,
/// in an order picked by one random number: a random start and a random
/// stride coprime with count. Usage:
///
///   StealOrder order(sched.gomaxprocs());
///   for (auto e = order.start(sched.fastrand()); !e.done(); e.next())
///     ... e.position() ...
class StealOrder {
 public:
  /// One enumeration (Go's randomEnum).
  class Enum {
   public:
    /// Visited every position.
    bool done() const { return left_ == 0; }
    /// Moves to the next position.
    void next() {
      --left_;
      pos_ = (pos_ + inc_) % count_;
    }
    /// The current position, in [0, count).
    std::uint32_t position() const { return pos_; }

   private:
    friend class StealOrder;
    Enum(std::uint32_t count, std::uint32_t pos, std::uint32_t inc)
        : left_(count), pos_(pos), inc_(inc), count_(count) {}
    std::uint32_t left_, pos_, inc_, count_;
  };

  /// An order over `count` positions (count >= 1).
  explicit StealOrder(int count) : count_(static_cast<std::uint32_t>(count)) {
    for (std::uint32_t i = 1; i <= count_; ++i) {
      if (std::gcd(i, count_) == 1) coprimes_.push_back(i);
    }
  }

  /// An enumeration picked by the random number r (Go: stealOrder.start).
  Enum start(std::uint32_t r) const {
    std::uint32_t inc = coprimes_[r / count_ % coprimes_.size()];
    return Enum(count_, r % count_, inc);
  }

 private:
  std::uint32_t count_;
  std::vector<std::uint32_t> coprimes_;  // strides that visit every position
};

// ---- Write these in findrunnable.cc -----------------------------------------

/// Go's runqsteal (with runqgrab), on the model's queues: moves the oldest
/// half of victim's local queue, rounded up (1 of 1, 2 of 3, 4 of 7), in
/// order, to pp's; keeps all but the last of them at pp's tail and returns
/// the last, to run now. If victim's queue is empty and `steal_runnext`,
/// takes victim's runnext instead (and returns it). Null if nothing was
/// taken. pp's queue is empty (we steal only when out of work).
G* runqsteal(P& pp, P& victim, bool steal_runnext);

/// Go's stealWork: up to kStealTries rounds; each visits every P other than
/// allp[self] once, in the order of a StealOrder started with a fresh
/// sched.fastrand(), and returns what the first successful runqsteal gives.
/// Only the last round may take a runnext. Null if all rounds find nothing.
G* steal_work(Sched& sched, int self);

/// Go's injectglist, as the file comment models it: the goroutines of
/// `glist` (in order) go to the global queue, one per idle P (starting
/// those Ps), and the rest to the tail of allp[self]'s queue.
void injectglist(Sched& sched, int self, const std::vector<G*>& glist);

/// Go's findRunnable for the M holding allp[self], in the order of the file
/// comment: returns the goroutine to run, or null, which means "park" (every
/// queue, every runnext and the poller had nothing). Calls sched.netpoll at
/// most once, and only when steps 1-3 found nothing. Does not change
/// schedtick (execute does that).
G* find_runnable(Sched& sched, int self);

}  // namespace gmp::exercises::findrunnable
