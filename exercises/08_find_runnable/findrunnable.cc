// Exercise 08: write these functions (see README.md and the order in
// findrunnable.h). The provided pieces (runqget, runqput, globrunqget,
// startidle, StealOrder) are in findrunnable.h.
#include "exercises/08_find_runnable/findrunnable.h"

#include "exercises/testing/skeleton.h"

namespace gmp::exercises::findrunnable {

G* runqsteal(P& pp, P& victim, bool steal_runnext) {
  (void)pp;
  (void)victim;
  (void)steal_runnext;
  not_written("runqsteal (exercises/08_find_runnable/findrunnable.cc)");
}

G* steal_work(Sched& sched, int self) {
  (void)sched;
  (void)self;
  not_written("steal_work (exercises/08_find_runnable/findrunnable.cc)");
}

void injectglist(Sched& sched, int self, const std::vector<G*>& glist) {
  (void)sched;
  (void)self;
  (void)glist;
  not_written("injectglist (exercises/08_find_runnable/findrunnable.cc)");
}

G* find_runnable(Sched& sched, int self) {
  (void)sched;
  (void)self;
  not_written("find_runnable (exercises/08_find_runnable/findrunnable.cc)");
}

}  // namespace gmp::exercises::findrunnable
