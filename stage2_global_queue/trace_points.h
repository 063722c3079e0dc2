/// \file
/// The trace events every green-thread stage records the same way: a
/// goroutine made and stopped (trace/tracer.h); each stage records the
/// start where it picks the goroutine.
///
/// ```unparsed
/// Each is one test of a pointer when tracing is off: the M's `trace`
/// buffer, or the runtime's buffer for run()'s own thread. The stop reason
/// is the request the goroutine left its M when it switched to g0 (MCall),
/// so one call after every switch back covers yield, park and exit; a
/// scheduler with requests of its own names their reasons itself.
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

/// Why a goroutine switched to g0 with one of this stage's requests, as
/// the trace's stop reason (kExit for kGoexit, and for any other).
inline trace::StopReason stop_reason(MCall call) noexcept {
  switch (call) {
    case MCall::kPark: return trace::StopReason::kPark;
    case MCall::kGosched: return trace::StopReason::kYield;
    default: return trace::StopReason::kExit;
  }
}

/// kGoStop into m's buffer (the caller tested it): gp has just switched
/// back to m's g0, asking for m->call, which `why` names.
inline void trace_go_stop(MCore* m, const G* gp, trace::StopReason why) {
  m->trace->go_stop(gp->goid.load(std::memory_order_relaxed), why,
                    m->call == MCall::kPark ? m->park_reason
                                            : WaitReason::kNone);
}

/// kGoStop for this stage's requests, if m is tracing.
inline void trace_go_stop(MCore* m, const G* gp) {
  if (m->trace != nullptr) [[unlikely]] {
    trace_go_stop(m, gp, stop_reason(m->call));
  }
}

}  // namespace gmp::stage2
