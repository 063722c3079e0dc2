// Lab "gfree": YOUR free lists of dead Gs for stage 3 (labs/gfree/README.md).
// With --define=lab=gfree, stage 3 is built with this file in place of
// stage3_gmp/gfree.cc: every go() and every goroutine's end goes through
// your gfget and gfput. What you may use: P::gfree and P::gfreecnt (the
// P's list, owner M only), Runtime::gfree_ and ngfree_ (the global list,
// gfree_lock_ held; ngfree_ may be peeked without it), G::schedlink.
#include <mutex>

#include "common/check.h"
#include "stage3_gmp/runtime.h"

namespace gmp::stage3 {

G* Runtime::gfget(P* pp) {
  (void)pp;
  fatal("not written yet: Runtime::gfget (labs/gfree/gfree.cc)");
}

void Runtime::gfput(P* pp, G* gp) {
  (void)pp;
  (void)gp;
  fatal("not written yet: Runtime::gfput (labs/gfree/gfree.cc)");
}

}  // namespace gmp::stage3
