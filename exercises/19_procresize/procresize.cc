// Exercise 19: write this function (see README.md and procresize.h).
#include "exercises/19_procresize/procresize.h"

#include "exercises/testing/skeleton.h"

namespace gmp::exercises::resize {

std::vector<P*> procresize(Sched& sched, M& self, int nprocs) {
  (void)sched;
  (void)self;
  (void)nprocs;
  not_written("procresize (exercises/19_procresize/procresize.cc)");
}

}  // namespace gmp::exercises::resize
