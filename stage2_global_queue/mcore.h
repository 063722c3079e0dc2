// MCore: what the goroutine machinery needs of an M, whatever the
// scheduler around it. Stage 2's M and the later stages' Ms extend it; the
// switch (switch.h), the overflow handler (signals.h) and the current-M
// lookup (tls.h) only know this part.
#pragma once

#include <signal.h>

#include <cstddef>
#include <memory>

#include "stage2_global_queue/context.h"
#include "stage2_global_queue/g.h"

namespace gmp::stage2 {

/// The core of an M (an OS thread that runs goroutines): its g0 and the
/// goroutine it runs. Every field belongs to the M's own thread.
struct MCore {
  Context g0;         ///< g0's registers while a goroutine runs
  G* curg = nullptr;  ///< the goroutine running on this M, or null on g0

  // Sanitizer and signal bookkeeping.
  void* tsan_g0_fiber = nullptr;       ///< ThreadSanitizer's fiber for g0
  void* asan_g0_fake_stack = nullptr;  ///< AddressSanitizer's, for g0
  const void* g0_stack_lo = nullptr;   ///< g0's stack, for AddressSanitizer
  std::size_t g0_stack_size = 0;
  std::unique_ptr<char[]> signal_stack;  ///< sigaltstack for SIGSEGV
  stack_t previous_signal_stack{};       ///< the thread's, put back at exit
};

}  // namespace gmp::stage2
