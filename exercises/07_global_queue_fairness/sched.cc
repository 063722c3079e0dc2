// Exercise 07: write these functions (see README.md).
#include "exercises/07_global_queue_fairness/sched.h"

#include "exercises/testing/skeleton.h"

namespace gmp::exercises::fairness {

G* globrunqget(Sched& sched, P& pp, int max) {
  (void)sched;
  (void)pp;
  (void)max;
  not_written("globrunqget (exercises/07_global_queue_fairness/sched.cc)");
}

std::pair<G*, bool> pick(Sched& sched, P& pp) {
  (void)sched;
  (void)pp;
  not_written("pick (exercises/07_global_queue_fairness/sched.cc)");
}

void execute(P& pp, bool inherit_time) {
  (void)pp;
  (void)inherit_time;
  not_written("execute (exercises/07_global_queue_fairness/sched.cc)");
}

}  // namespace gmp::exercises::fairness
