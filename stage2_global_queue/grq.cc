// Stage 2's global run queue (Go's globrunqput / globrunqget): the only
// run queue, under the sched lock.
#include "stage2_global_queue/runtime.h"

namespace gmp::stage2 {

void Runtime::globrunqput(G* gp) {  // sched_ held
  gp->schedlink = nullptr;
  (grq_tail_ != nullptr ? grq_tail_->schedlink : grq_head_) = gp;
  grq_tail_ = gp;
  if (++grq_size_ > stats_.max_queue_len) stats_.max_queue_len = grq_size_;
}

G* Runtime::globrunqget() {  // sched_ held
  G* gp = grq_head_;
  if (gp == nullptr) return nullptr;
  grq_head_ = gp->schedlink;
  if (grq_head_ == nullptr) grq_tail_ = nullptr;
  --grq_size_;
  gp->schedlink = nullptr;
  return gp;
}

}  // namespace gmp::stage2
