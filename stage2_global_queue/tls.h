/// \file
/// The current M, through a path the compiler cannot cache.
///
/// ```unparsed
/// The hazard: a goroutine may call getm(), park, and resume on another OS
/// thread, then call getm() again. Compilers treat the thread pointer as
/// constant within a function, so they may compute the address of a
/// thread_local once and reuse it after a call: after the goroutine moved,
/// that address is the old thread's variable. getm_core() is therefore an
/// opaque call (never inlined, never analysed by the optimiser, with a
/// compiler barrier), so every call reads the TLS of the thread it runs on
/// now. Each stage's getm() (in its m.h) is a cast of it.
///
/// The same hazard exists for user code: do not keep a pointer or reference
/// to a thread_local (errno included: glibc's __errno_location() is declared
/// const) across a blocking call or yield() on stages 2 and later. The C++
/// runtime's own per-thread state, the exceptions being handled, is carried
/// across switches by the runtime (switch.cc), so blocking inside a catch
/// block is safe.
/// ```
#pragma once

namespace gmp::stage2 {

struct MCore;

/// The M whose thread is running the caller; null on other threads.
MCore* getm_core() noexcept;

/// Sets the calling thread's M (an M's thread, once, when it starts).
void setm_core(MCore* m) noexcept;

}  // namespace gmp::stage2
