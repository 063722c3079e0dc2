// Exercise 06: write these functions (see README.md).
#include "exercises/06_runq_overflow/runq.h"

#include "exercises/testing/skeleton.h"

namespace gmp::exercises::overflow {

void LocalRunQueue::runqput(G* gp, bool next, GlobalRunQueue& grq) {
  (void)gp;
  (void)next;
  (void)grq;
  not_written("LocalRunQueue::runqput (exercises/06_runq_overflow/runq.cc)");
}

void LocalRunQueue::runqputslow(G* gp, GlobalRunQueue& grq) {
  (void)gp;
  (void)grq;
  not_written("LocalRunQueue::runqputslow (exercises/06_runq_overflow/runq.cc)");
}

std::pair<G*, bool> LocalRunQueue::runqget() {
  not_written("LocalRunQueue::runqget (exercises/06_runq_overflow/runq.cc)");
}

}  // namespace gmp::exercises::overflow
