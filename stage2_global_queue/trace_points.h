/// \file
/// The trace events every green-thread stage records the same way: a
/// goroutine made and stopped (trace/tracer.h); each stage records the
/// start where it picks the goroutine.
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
#include <typeinfo>

#include "stage2_global_queue/g.h"
#include "stage2_global_queue/mcore.h"
#include "trace/tracer.h"

namespace gmp::stage2 {

/// newproc's bookkeeping for the dumps (Go keeps the same in g.parentGoid
/// and g.startpc): gp was made by goroutine `parent` (0: by run()) to run
/// a function of type `type` (gmp::function_type).
inline void note_go_create(G* gp, std::uint64_t parent,
                           const std::type_info* type) {
  gp->parent_goid.store(parent, std::memory_order_relaxed);
  gp->fn_type.store(type, std::memory_order_relaxed);
}

/// kGoCreate into `t`: gp, noted by note_go_create, is queued on P `p`
/// (trace::kNoP: none). The caller tests `t` (the test is then all that
/// tracing costs when off: the arguments are not even computed).
inline void trace_go_create(trace::Buffer* t, const G* gp, std::int32_t p) {
  t->go_create(gp->goid.load(std::memory_order_relaxed),
               gp->parent_goid.load(std::memory_order_relaxed),
               gp->fn_type.load(std::memory_order_relaxed), p);
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
