// Stage 5's safe point for cooperative preemption: GCC calls
// __cyg_profile_func_enter at the entry of every function compiled with
// -finstrument-functions (the user's code; see BUILD), as Go's compiler put
// a stack-bound check in every function prologue. This file and the runtime
// are not instrumented.
#include "common/runtime_lock.h"
#include "stage3_gmp/m.h"
#include "stage5_preemption/runtime.h"

extern "C" {

__attribute__((no_instrument_function)) void __cyg_profile_func_enter(
    void* /*fn*/, void* /*call_site*/) {
  auto* m = gmp::stage3::getm();  // one opaque TLS read
  if (m == nullptr || m->curg == nullptr || m->p == nullptr) return;
  if (!m->p->preempt.load(std::memory_order_relaxed)) return;
  // Runtime code inlined into the user's function may hold a runtime lock
  // (a Timer's, a channel's): not a safe point then (Go's m.locks check).
  if (gmp::RuntimeLock::held_by_this_thread() != 0) return;
  m->rt->preempt_now(m);  // stage 3's safe point, as at a runtime call
}

__attribute__((no_instrument_function)) void __cyg_profile_func_exit(
    void* /*fn*/, void* /*call_site*/) {}

}  // extern "C"
