// Exercise 07, reference solution: Go's globrunqget, the start of
// schedule()/findRunnable with the 1-in-61 check, and execute's tick.
#include "exercises/07_global_queue_fairness/sched.h"

#include <algorithm>

namespace gmp::exercises::fairness {

G* globrunqget(Sched& sched, P& pp, int max) {
  int size = static_cast<int>(sched.grq.size());
  if (size == 0) return nullptr;
  // A fair share: the queue split over the Ps, plus one so a single P
  // still drains a short queue.
  int n = std::min(size / sched.gomaxprocs + 1, size);
  if (max > 0) n = std::min(n, max);
  // Leave room in the local queue for the goroutines this P will ready.
  n = std::min(n, static_cast<int>(kLocalCapacity / 2));
  G* gp = sched.grq.front();
  sched.grq.pop_front();
  for (int i = 1; i < n; ++i) {
    runqput(pp, sched.grq.front(), false);
    sched.grq.pop_front();
  }
  return gp;
}

std::pair<G*, bool> pick(Sched& sched, P& pp) {
  // Check the global queue once in a while: two goroutines that keep
  // readying each other would otherwise keep this P's local queue busy
  // forever. 61 is prime, so the check does not fall into step with a
  // workload's own period.
  if (pp.schedtick % 61 == 0 && !sched.grq.empty()) {
    return {globrunqget(sched, pp, 1), false};
  }
  if (std::pair<G*, bool> local = runqget(pp); local.first != nullptr) {
    return local;
  }
  return {globrunqget(sched, pp, 0), false};
}

void execute(P& pp, bool inherit_time) {
  if (!inherit_time) ++pp.schedtick;
}

}  // namespace gmp::exercises::fairness
