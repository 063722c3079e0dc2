/// \file
/// The trace events every green-thread stage records the same way: a
/// goroutine made, started, stopped (trace/tracer.h).
///
/// ```unparsed
/// Each is one test of a pointer when tracing is off: the M's `trace`
/// buffer, or the runtime's buffer for run()'s own thread. The stop reason
/// is the request the goroutine left its M when it switched to g0 (MCall),
/// so one call after every switch back covers yield, park, exit, and the
/// later stages' back-from-syscall and preempted.
/// ```
#pragma once

#include <cstdint>
#include <functional>

#include "stage2_global_queue/g.h"
#include "stage2_global_queue/mcore.h"
#include "trace/tracer.h"

namespace gmp::stage2 {

/// newproc's bookkeeping for dumps and traces: gp was made by goroutine
/// `parent` (0: by run()) to run `fn`, on P `p` (trace::kNoP: none).
/// Records kGoCreate into `t` if it is not null.
inline void note_go_create(trace::Buffer* t, G* gp, std::uint64_t parent,
                           const std::function<void()>& fn, std::int32_t p) {
  gp->parent_goid.store(parent, std::memory_order_relaxed);
  gp->fn_type.store(&fn.target_type(), std::memory_order_relaxed);
  if (t != nullptr) [[unlikely]] {
    t->go_create(gp->goid.load(std::memory_order_relaxed), parent,
                 &fn.target_type(), p);
  }
}

/// kGoStart: gp starts running on m, which holds P p.
inline void trace_go_start(MCore* m, const G* gp, std::int32_t p) {
  if (trace::Buffer* t = m->trace) [[unlikely]] {
    t->go_start(gp->goid.load(std::memory_order_relaxed), p);
  }
}

/// Why a goroutine switched to g0, as the trace's stop reason.
inline trace::StopReason stop_reason(MCall call) noexcept {
  switch (call) {
    case MCall::kPark: return trace::StopReason::kPark;
    case MCall::kGosched: return trace::StopReason::kYield;
    case MCall::kExitsyscall: return trace::StopReason::kSyscall;
    case MCall::kPreempt: return trace::StopReason::kPreempt;
    case MCall::kGoexit:
    case MCall::kNone: break;
  }
  return trace::StopReason::kExit;
}

/// kGoStop: gp has just switched back to m's g0, asking for m->call.
inline void trace_go_stop(MCore* m, const G* gp) {
  if (trace::Buffer* t = m->trace) [[unlikely]] {
    t->go_stop(gp->goid.load(std::memory_order_relaxed), stop_reason(m->call),
               m->call == MCall::kPark ? m->park_reason : WaitReason::kNone);
  }
}

}  // namespace gmp::stage2
