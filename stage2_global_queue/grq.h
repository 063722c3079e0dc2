/// \file
/// Stage 2's global run queue (Go's globrunqput / globrunqget): the only
/// run queue, under the sched lock. Included by runtime.h, after Runtime.
/// Inline, where stage 3's are in grq.cc: every scheduling decision of this
/// stage goes through them (and casgstatus, inline in runtime.h), and as
/// calls into another file the three cost about 24 instructions more per
/// channel round trip (`./course bench --instructions`).
#pragma once

#include "stage2_global_queue/runtime.h"

namespace gmp::stage2 {

inline void Runtime::globrunqput(G* gp) {  // sched_ held
  gp->schedlink = nullptr;
  (grq_tail_ != nullptr ? grq_tail_->schedlink : grq_head_) = gp;
  grq_tail_ = gp;
  if (++grq_size_ > stats_.max_queue_len) stats_.max_queue_len = grq_size_;
}

inline G* Runtime::globrunqget() {  // sched_ held
  G* gp = grq_head_;
  if (gp == nullptr) return nullptr;
  grq_head_ = gp->schedlink;
  if (grq_head_ == nullptr) grq_tail_ = nullptr;
  --grq_size_;
  gp->schedlink = nullptr;
  return gp;
}

}  // namespace gmp::stage2
