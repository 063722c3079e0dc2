#include "stage2_global_queue/tls.h"

namespace gmp::stage2 {
namespace {
thread_local MCore* tls_m = nullptr;  // each M's thread: its own M
}  // namespace

#if defined(__clang__)
#define GMP_OPAQUE __attribute__((noinline))
#else
#define GMP_OPAQUE __attribute__((noinline, noipa))
#endif

// Opaque on purpose (see tls.h): noinline keeps the TLS access in here,
// noipa stops GCC from deducing that the function is pure, and the empty
// asm with a memory clobber stops any compiler from assuming so.
GMP_OPAQUE MCore* getm_core() noexcept {
  asm volatile("" ::: "memory");
  return tls_m;
}

GMP_OPAQUE void setm_core(MCore* m) noexcept {
  asm volatile("" ::: "memory");
  tls_m = m;
}

}  // namespace gmp::stage2
