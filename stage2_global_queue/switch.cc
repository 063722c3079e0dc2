#include "stage2_global_queue/switch.h"

#include <cxxabi.h>
#include <pthread.h>

#include "common/timer.h"
#include "stage2_global_queue/context.h"
#include "stage2_global_queue/tls.h"

#if defined(__SANITIZE_ADDRESS__)
#define GMP_ASAN 1
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(__SANITIZE_THREAD__)
#define GMP_TSAN 1
#include <sanitizer/tsan_interface.h>

#include <mutex>
#include <vector>
#endif

namespace gmp::stage2 {
namespace {

// The C++ runtime's per-thread exception state, __cxa_eh_globals in the
// Itanium C++ ABI used on x86-64 and aarch64 Linux (libstdc++'s
// unwind-cxx.h, libc++abi's cxa_exception.h): the stack of exceptions being
// handled, and the count of exceptions thrown but not yet caught.
struct EhGlobals {
  void* caught_exceptions;
  unsigned int uncaught_exceptions;
};

#if GMP_TSAN
// ThreadSanitizer fibers of freed Gs, for the Gs of any later runtime in
// the process: tsan zeroes about a megabyte for each new fiber, which made
// a first spawn cost milliseconds. Grows to the most Gs that existed at once.
std::mutex fiber_pool_mu;
std::vector<void*> fiber_pool;  // guarded by fiber_pool_mu

void* get_fiber() {
  {
    std::lock_guard lk(fiber_pool_mu);
    if (!fiber_pool.empty()) {
      void* f = fiber_pool.back();
      fiber_pool.pop_back();
      return f;
    }
  }
  return __tsan_create_fiber(0);
}
#endif

// Leaving a goroutine for g0: keep its exception state, and give the thread
// g0's (always empty: the scheduler handles no exception across a switch).
void save_eh(MCore* m, G* gp) noexcept {
  auto* eh = static_cast<EhGlobals*>(m->eh_globals);
  gp->eh = {eh->caught_exceptions, eh->uncaught_exceptions};
  *eh = EhGlobals{nullptr, 0};
}

// Back in the goroutine, on whatever thread it resumed on: that thread's
// M, looked up afresh (getm_core is opaque, tls.h), holds its pointer.
void restore_eh(const G* gp) noexcept {
  *static_cast<EhGlobals*>(getm_core()->eh_globals) =
      EhGlobals{gp->eh.caught_exceptions, gp->eh.uncaught_exceptions};
}

}  // namespace

void init_g0(MCore* m) noexcept {
  m->eh_globals = abi::__cxa_get_globals();  // on the M's own thread
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* lo = nullptr;
    std::size_t size = 0;
    pthread_attr_getstack(&attr, &lo, &size);
    pthread_attr_destroy(&attr);
    m->g0_stack_lo = lo;
    m->g0_stack_size = size;
  }
#if GMP_TSAN
  m->tsan_g0_fiber = __tsan_get_current_fiber();
#endif
}

#if GMP_FIBER_HOOKS  // otherwise inline no-ops (switch.h)
void create_fiber([[maybe_unused]] G* gp) noexcept {
#if GMP_ASAN
  // A reused stack keeps the shadow of its last goroutine's frames (those
  // abandoned mid-call by a switch, or unwound by an exception, are never
  // unpoisoned); the new goroutine starts from a clean stack.
  __asan_unpoison_memory_region(gp->stack.lo, gp->stack.size);
#endif
}

void destroy_fiber([[maybe_unused]] G* gp) noexcept {
#if GMP_TSAN
  if (gp->tsan_fiber == nullptr) return;
  std::lock_guard lk(fiber_pool_mu);
  fiber_pool.push_back(gp->tsan_fiber);  // for a later G (get_fiber)
  gp->tsan_fiber = nullptr;
#endif
}
#endif

void gogo(MCore* m, G* gp) noexcept {
#if GMP_ASAN
  __sanitizer_start_switch_fiber(&m->asan_g0_fake_stack, gp->stack.lo,
                                 gp->stack.size);
#endif
#if GMP_TSAN
  // Its fiber at its first switch in, not at go(): 10,000 goroutines
  // queued at once would take 10,000 fibers (TSan's threads) at once.
  if (gp->tsan_fiber == nullptr) gp->tsan_fiber = get_fiber();
  __tsan_switch_to_fiber(gp->tsan_fiber, 0);
#endif
  gmp_context_switch(&m->g0, &gp->ctx);
#if GMP_ASAN
  __sanitizer_finish_switch_fiber(m->asan_g0_fake_stack, nullptr, nullptr);
#endif
}

void mcall(MCore* m, G* gp) noexcept {
  save_eh(m, gp);
#if GMP_ASAN
  __sanitizer_start_switch_fiber(&gp->asan_fake_stack, m->g0_stack_lo,
                                 m->g0_stack_size);
#endif
#if GMP_TSAN
  __tsan_switch_to_fiber(m->tsan_g0_fiber, 0);
#endif
  gmp_context_switch(&gp->ctx, &m->g0);
  // Resumed, perhaps by another M: do not use `m` from here on.
#if GMP_ASAN
  __sanitizer_finish_switch_fiber(gp->asan_fake_stack, nullptr, nullptr);
#endif
  restore_eh(gp);
}

// Not instrumented by ThreadSanitizer: it never returns (see
// goroutine_entry, proc.cc).
__attribute__((no_sanitize("thread"))) void mcall_exit(MCore* m,
                                                        G* gp) noexcept {
  save_eh(m, gp);  // empty by now: the goroutine left every catch block
#if GMP_ASAN
  // null: this fiber is leaving for good; ASan frees its fake stack.
  __sanitizer_start_switch_fiber(nullptr, m->g0_stack_lo, m->g0_stack_size);
#endif
#if GMP_TSAN
  __tsan_switch_to_fiber(m->tsan_g0_fiber, 0);
#endif
  gmp_context_switch(&gp->ctx, &m->g0);
  __builtin_trap();  // goexit0 never switches back to a dead goroutine
}

bool park_current(G* gp, Sudog<G*>& s, ParkUnlock unlock, WaitReason why,
                  std::chrono::steady_clock::time_point until) noexcept {
  MCore* m = getm_core();
  m->call = MCall::kPark;
  m->park_sudog = &s;
  m->park_unlock = unlock;
  m->park_reason = why;
  m->park_until = until;
  mcall(m, gp);
  return s.claimed();
}

bool park_sleep(G* gp, std::chrono::nanoseconds d) noexcept {
  Sudog<G*>& s = gp->sudog.emplace(gp, gp->goid);
  bool woke = park_current(gp, s, ParkUnlock{}, WaitReason::kSleep,
                           timer_when(std::chrono::steady_clock::now(), d));
  gp->sudog.reset();
  return woke;
}

void on_goroutine_start() noexcept {
#if GMP_ASAN
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
}

}  // namespace gmp::stage2
