// An M's signals: its goroutines' faults are described to the fault handler
// of common/fault.h by reading the M's current goroutine.
#include "stage2_global_queue/signals.h"

#include <cstdint>

#include "stage2_global_queue/mcore.h"
#include "stage2_global_queue/stack.h"
#include "stage2_global_queue/tls.h"

namespace gmp::stage2 {
namespace {

// common/fault.h's FaultLookup for an M of this stage.
bool lookup(FaultGoroutine* out) noexcept { return describe_curg(out) != nullptr; }

}  // namespace

const G* describe_curg(FaultGoroutine* out) noexcept {
  MCore* m = getm_core();  // this thread's TLS was set up long ago
  if (m == nullptr || m->curg == nullptr) return nullptr;  // on g0, or none
  const G* gp = m->curg;
  out->goid = gp->goid.load(std::memory_order_relaxed);
  out->parent = gp->parent_goid.load(std::memory_order_relaxed);
  out->stack_lo = reinterpret_cast<std::uintptr_t>(gp->stack.lo);
  out->stack_hi = out->stack_lo + gp->stack.size;
  out->guard_size = StackPool::kGuardSize;
  out->m = gp->last_m.load(std::memory_order_relaxed);
  out->stack_size_field = m->stack_size_field;
  return gp;
}

void init_m_signals(MCore* m, FaultLookup lookup_curg) {
  m->faults.emplace(lookup_curg != nullptr ? lookup_curg : &lookup);
}

void fini_m_signals(MCore* m) noexcept { m->faults.reset(); }

}  // namespace gmp::stage2
