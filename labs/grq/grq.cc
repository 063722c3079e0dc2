// Lab "grq": YOUR global run queue for stage 3 (labs/grq/README.md). With
// --define=lab=grq, stage 3 is built with this file in place of
// stage3_gmp/grq.cc: every overflow of a P's queue, every goroutine made
// without a P, and every M looking for work goes through your functions.
// What you may use: Runtime::grq_head_, grq_tail_ (sched_ held),
// grq_size_ (written with sched_ held, read without it), G::schedlink,
// gomaxprocs_, pp->runq.owner(), stats_.max_queue_len, and PCounters (see
// stage3_gmp/grq.cc's reference only after you are done).
#include <mutex>

#include "common/check.h"
#include "stage3_gmp/runtime.h"

namespace gmp::stage3 {

void Runtime::globrunqput(G* gp) {
  (void)gp;
  fatal("not written yet: Runtime::globrunqput (labs/grq/grq.cc)");
}

void Runtime::globrunqputhead(G* gp) {
  (void)gp;
  fatal("not written yet: Runtime::globrunqputhead (labs/grq/grq.cc)");
}

void Runtime::link_batch(G* const* gs, std::uint32_t n) noexcept {
  (void)gs;
  (void)n;
  fatal("not written yet: Runtime::link_batch (labs/grq/grq.cc)");
}

void Runtime::globrunqputbatch(G* head, G* tail, std::uint32_t n) {
  (void)head;
  (void)tail;
  (void)n;
  fatal("not written yet: Runtime::globrunqputbatch (labs/grq/grq.cc)");
}

G* Runtime::globrunqget(P* pp, std::uint32_t max) {
  (void)pp;
  (void)max;
  fatal("not written yet: Runtime::globrunqget (labs/grq/grq.cc)");
}

}  // namespace gmp::stage3
