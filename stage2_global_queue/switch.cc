#include "stage2_global_queue/switch.h"

#include <pthread.h>

#include "stage2_global_queue/context.h"

#if defined(__SANITIZE_ADDRESS__)
#define GMP_ASAN 1
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(__SANITIZE_THREAD__)
#define GMP_TSAN 1
#include <sanitizer/tsan_interface.h>
#endif

namespace gmp::stage2 {

void init_g0(M* m) noexcept {
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

void create_fiber([[maybe_unused]] G* gp) noexcept {
#if GMP_TSAN
  gp->tsan_fiber = __tsan_create_fiber(0);
#endif
}

void destroy_fiber([[maybe_unused]] G* gp) noexcept {
#if GMP_TSAN
  if (gp->tsan_fiber != nullptr) __tsan_destroy_fiber(gp->tsan_fiber);
  gp->tsan_fiber = nullptr;
#endif
}

void gogo(M* m, G* gp) noexcept {
#if GMP_ASAN
  __sanitizer_start_switch_fiber(&m->asan_g0_fake_stack, gp->stack.lo,
                                 gp->stack.size);
#endif
#if GMP_TSAN
  __tsan_switch_to_fiber(gp->tsan_fiber, 0);
#endif
  gmp_context_switch(&m->g0, &gp->ctx);
#if GMP_ASAN
  __sanitizer_finish_switch_fiber(m->asan_g0_fake_stack, nullptr, nullptr);
#endif
}

void mcall(M* m, G* gp) noexcept {
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
}

void mcall_exit(M* m, G* gp) noexcept {
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

void on_goroutine_start() noexcept {
#if GMP_ASAN
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
}

}  // namespace gmp::stage2
