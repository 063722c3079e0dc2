// Stage 2's free list of dead Gs (Go's gfget / gfput): one list, under
// the sched lock, each G with its stack.
#include "stage2_global_queue/runtime.h"

namespace gmp::stage2 {

G* Runtime::gfget() {
  G* gp = gfree_;
  if (gp != nullptr) gfree_ = gp->schedlink;
  return gp;
}

void Runtime::gfput(G* gp) {  // gp is dead
  gp->schedlink = gfree_;
  gfree_ = gp;
}

}  // namespace gmp::stage2
