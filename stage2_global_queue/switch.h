/// \file
/// Switching between an M's g0 and its goroutines, with the sanitizers told.
///
/// ```unparsed
/// Every switch in stage 2 goes through g0: g0 -> G (gogo) and G -> g0
/// (mcall). ThreadSanitizer and AddressSanitizer must be told about each
/// switch (a "fiber" switch to them), or they report races and stack errors
/// that do not exist; outside sanitizer builds these functions are just
/// gmp_context_switch.
/// ```
#pragma once

#include <chrono>

#include "common/runtime_lock.h"
#include "common/sudog.h"
#include "common/wait_reason.h"
#include "stage2_global_queue/g.h"
#include "stage2_global_queue/mcore.h"

namespace gmp::stage2 {

/// Go's gogo: runs `gp` on `m` until it switches back to g0. On m's g0.
void gogo(MCore* m, G* gp) noexcept;

/// Go's mcall: switches from `gp` to its M's g0, which then does what the
/// goroutine asked (park_m, gosched_m, ...). Returns when `gp` is resumed, maybe on another M, with its C++
/// exception state (G::eh) carried over to that M's thread. On gp.
void mcall(MCore* m, G* gp) noexcept;

/// The last switch of a goroutine that is ending: its stack will be
/// reused. Never returns. On gp.
[[noreturn]] void mcall_exit(MCore* m, G* gp) noexcept;

/// Parks the running goroutine `gp`: records the request on its M (Go's
/// gopark) and switches to g0, whose park_m marks it waiting and then
/// calls `unlock`. `until` is the wake time of a kSleep. Returns whether
/// the wait succeeded (false: cancelled at exit). On gp.
bool park_current(G* gp, Sudog<G*>& s, ParkUnlock unlock, WaitReason why,
                  std::chrono::steady_clock::time_point until) noexcept;

/// Parks the running goroutine `gp` for `d` (positive) on its own timer,
/// with the sleep's sudog in its G (G::sudog): sleep_for's park, for
/// every stage's. Returns false when cancelled at exit. On gp.
bool park_sleep(G* gp, std::chrono::nanoseconds d) noexcept;

/// First thing a goroutine does on its new stack.
void on_goroutine_start() noexcept;

/// Sets up g0's sanitizer state; on the M's thread before any switch.
void init_g0(MCore* m) noexcept;

/// 1 in a sanitizer build, where create_fiber and destroy_fiber do
/// something (switch.cc); 0 otherwise, where they are empty and inline.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GMP_FIBER_HOOKS 1
#else
#define GMP_FIBER_HOOKS 0
#endif

/// Prepares a goroutine's sanitizer state before it first runs: a clean
/// AddressSanitizer shadow for its reused stack. (Its ThreadSanitizer fiber
/// it takes at its first switch in, gogo, and gives back when it dies,
/// goexit0: destroy_fiber, to a process-wide pool, where the next G that
/// needs one takes it. TSan counts fibers as threads, 8,128 at most, and
/// zeroes about a megabyte for each new one, which made a goroutine's
/// first start cost milliseconds. The pool's lock orders the goroutines
/// that share a fiber, and a dead goroutine leaves no frame on its fiber's
/// shadow stack: goroutine_entry is not instrumented.) In other builds an
/// empty inline function: no call on every goroutine's start for nothing.
#if GMP_FIBER_HOOKS
void create_fiber(G* gp) noexcept;
#else
inline void create_fiber(G*) noexcept {}
#endif

/// When the runtime frees the G, or its goroutine has died (never while
/// the fiber runs), its ThreadSanitizer fiber goes back to the pool (see
/// create_fiber). Empty and inline in other builds.
#if GMP_FIBER_HOOKS
void destroy_fiber(G* gp) noexcept;
#else
inline void destroy_fiber(G*) noexcept {}
#endif

}  // namespace gmp::stage2
