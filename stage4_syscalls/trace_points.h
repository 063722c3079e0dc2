/// \file
/// The trace events of a blocking call (trace/tracer.h), recorded the same
/// way by stage 4's eager hand-off and stage 5's lazy one.
///
/// ```unparsed
/// Each is one test of the M's `trace` pointer when tracing is off. The
/// return with a P also keeps the goroutine dump exact: the goroutine runs
/// on from here, perhaps on another P than the one execute() gave it.
/// ```
#pragma once

#include <atomic>
#include <cstdint>

#include "stage2_global_queue/g.h"
#include "stage3_gmp/g_with_p.h"
#include "stage3_gmp/m.h"
#include "trace/tracer.h"

namespace gmp::stage4 {

/// kGoSyscall: gp, on m, enters a blocking call and leaves P p.
inline void trace_go_syscall(const stage3::M* m, const stage2::G* gp,
                             std::int32_t p) {
  if (trace::Buffer* t = m->trace) [[unlikely]] {
    t->go_syscall(gp->goid.load(std::memory_order_relaxed), p);
  }
}

/// gp is back from its call on m, holding P p, or trace::kNoP (it will
/// wait in the GRQ): its last P for the dumps, and kGoSysExit.
inline void note_go_sysexit(const stage3::M* m, stage2::G* gp,
                            std::int32_t p) {
  if (p != trace::kNoP) stage3::last_p(gp).store(p, std::memory_order_relaxed);
  if (trace::Buffer* t = m->trace) [[unlikely]] {
    t->go_sysexit(gp->goid.load(std::memory_order_relaxed), p);
  }
}

}  // namespace gmp::stage4
