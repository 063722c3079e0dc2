/// \file
/// An M's thread and signals: its alternate signal stack, and Go's reports
/// of faults in its goroutines (common/fault.h): a stack overflow into the
/// guard below the running goroutine's stack (stack.h), a nil dereference,
/// any other bad address.
#pragma once

#include "common/fault.h"

namespace gmp::stage2 {

struct G;
struct MCore;

/// Describes the calling M's current goroutine to a fault report (every
/// field but the P, which this stage has not) and returns it, or returns
/// null on g0 or a thread that is no M. Async-signal-safe: it only reads
/// (relaxed atomics, and fields set before the goroutine ran).
const G* describe_curg(FaultGoroutine* out) noexcept;

/// Sets up the calling M's thread (see the file's comment), describing its
/// goroutines with `lookup`: describe_curg's, or a scheduler's own that
/// adds to it (a P). On the M's thread, when it starts.
void init_m_signals(MCore* m, FaultLookup lookup = nullptr);

/// Undoes init_m_signals. On the M's thread, when it ends.
void fini_m_signals(MCore* m) noexcept;

}  // namespace gmp::stage2
