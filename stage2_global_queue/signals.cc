// An M's signals: its goroutines' faults are described to the fault handler
// of common/fault.h by reading the M's current goroutine.
#include "stage2_global_queue/signals.h"

#include <unistd.h>

#include <cstdint>

#include "stage2_global_queue/mcore.h"
#include "stage2_global_queue/stack.h"
#include "stage2_global_queue/tls.h"

namespace gmp::stage2 {
namespace {

// common/fault.h's FaultLookup for an M: its current goroutine, if any.
// Only reads (relaxed atomics and fields set before the goroutine ran).
bool lookup(FaultGoroutine* out) noexcept {
  MCore* m = getm_core();  // this thread's TLS was set up long ago
  if (m == nullptr || m->curg == nullptr) return false;  // on g0, or none
  const G* gp = m->curg;
  out->goid = gp->goid.load(std::memory_order_relaxed);
  out->parent = gp->parent_goid.load(std::memory_order_relaxed);
  out->stack_lo = reinterpret_cast<std::uintptr_t>(gp->stack.lo);
  out->stack_hi = out->stack_lo + gp->stack.size;
  out->guard_size = StackPool::kGuardSize;
  out->m = gp->last_m.load(std::memory_order_relaxed);
  out->p = gp->last_p.load(std::memory_order_relaxed);
  out->stack_size_field = m->stack_size_field;
  return true;
}

}  // namespace

void init_m_signals(MCore* m) {
  m->tid.store(static_cast<int>(::gettid()), std::memory_order_relaxed);
  m->faults.emplace(&lookup);
}

void fini_m_signals(MCore* m) noexcept { m->faults.reset(); }

}  // namespace gmp::stage2
