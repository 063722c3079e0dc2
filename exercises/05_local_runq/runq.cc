// Exercise 05: write these functions (see README.md). Each memory order you
// choose should come with a one-line reason.
#include "exercises/05_local_runq/runq.h"

#include "exercises/testing/skeleton.h"

namespace gmp::exercises::runq {

bool LocalRunQueue::runqput(G* gp) {
  (void)gp;
  not_written("LocalRunQueue::runqput (exercises/05_local_runq/runq.cc)");
}

G* LocalRunQueue::runqget() {
  not_written("LocalRunQueue::runqget (exercises/05_local_runq/runq.cc)");
}

std::uint32_t LocalRunQueue::runqgrab(std::array<G*, kCapacity / 2>& batch) {
  (void)batch;
  not_written("LocalRunQueue::runqgrab (exercises/05_local_runq/runq.cc)");
}

G* LocalRunQueue::runqsteal(LocalRunQueue& victim) {
  (void)victim;
  not_written("LocalRunQueue::runqsteal (exercises/05_local_runq/runq.cc)");
}

std::uint32_t LocalRunQueue::size() const {
  not_written("LocalRunQueue::size (exercises/05_local_runq/runq.cc)");
}

}  // namespace gmp::exercises::runq
