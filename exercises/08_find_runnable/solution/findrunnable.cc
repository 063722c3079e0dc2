// Exercise 08, reference solution: Go's findRunnable, stealWork,
// runqsteal and injectglist (proc.go, Go 1.19) over the model of
// findrunnable.h. Single-threaded: no memory orders to choose here; the
// real queues of stage 3 (runq.h) do the same moves with atomics.
#include "exercises/08_find_runnable/findrunnable.h"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace gmp::exercises::findrunnable {

G* runqsteal(P& pp, P& victim, bool steal_runnext) {
  // Go's runqgrab: half of the victim's queue, rounded up, from its head
  // (the oldest: the victim keeps the goroutines it readied last, whose
  // data is still warm in its cache).
  std::size_t n = victim.runq.size() - victim.runq.size() / 2;
  if (n == 0) {
    // The victim most likely just readied its runnext and is about to run
    // it: take it only when the caller has looked everywhere else.
    if (!steal_runnext || victim.runnext == nullptr) return nullptr;
    G* gp = victim.runnext;
    victim.runnext = nullptr;
    return gp;
  }
  // All but the last go to our (empty) queue, in order; the last runs now.
  for (std::size_t i = 0; i + 1 < n; ++i) {
    pp.runq.push_back(victim.runq.front());
    victim.runq.pop_front();
  }
  G* gp = victim.runq.front();
  victim.runq.pop_front();
  return gp;
}

G* steal_work(Sched& sched, int self) {
  StealOrder order(sched.gomaxprocs());
  P& pp = sched.allp[self];
  for (int round = 0; round < kStealTries; ++round) {
    // The last round also takes runnext: by then every queue was empty.
    bool steal_runnext = round == kStealTries - 1;
    // A fresh random order each round: over many Ms, no victim is always
    // the first to be robbed, and no thief always meets the same one.
    for (auto e = order.start(sched.fastrand()); !e.done(); e.next()) {
      auto victim = static_cast<int>(e.position());
      if (victim == self) continue;
      if (G* gp = runqsteal(pp, sched.allp[victim], steal_runnext)) return gp;
    }
  }
  return nullptr;
}

void injectglist(Sched& sched, int self, const std::vector<G*>& glist) {
  // One goroutine per idle P goes where an idle P can find it: the global
  // queue; those Ps are started. Busy Ps are left alone.
  std::size_t n = std::min(static_cast<std::size_t>(std::max(sched.npidle, 0)),
                           glist.size());
  for (std::size_t i = 0; i < n; ++i) sched.grq.push_back(glist[i]);
  startidle(sched, static_cast<int>(n));
  // Our own P runs the rest (Go's runqputbatch).
  for (std::size_t i = n; i < glist.size(); ++i) {
    runqput(sched, sched.allp[self], glist[i]);
  }
}

G* find_runnable(Sched& sched, int self) {
  P& pp = sched.allp[self];
  // 1. Fairness: a P that always has local work would otherwise never look
  //    at the global queue. One goroutine only: this P is busy.
  if (pp.schedtick % kFairnessTick == 0 && !sched.grq.empty()) {
    if (G* gp = globrunqget(sched, pp, 1)) return gp;
  }
  // 2. The local queue, runnext first: no lock in Go.
  if (G* gp = runqget(pp)) return gp;
  // 3. The global queue: a fair share of it, for one lock acquisition.
  if (G* gp = globrunqget(sched, pp, 0)) return gp;
  // 4. The network poller, without blocking: ready I/O before taking work
  //    that another P will get to anyway.
  if (sched.netpoll) {
    std::vector<G*> ready = sched.netpoll();
    if (!ready.empty()) {
      injectglist(sched, self, std::vector<G*>(ready.begin() + 1, ready.end()));
      return ready.front();
    }
  }
  // 5. Steal from the other Ps.
  if (G* gp = steal_work(sched, self)) return gp;
  // 6. Nothing anywhere: the caller parks.
  return nullptr;
}

}  // namespace gmp::exercises::findrunnable
