/// \file
/// An M's thread and signals: its kernel id (for signals sent to it), its
/// alternate signal stack, and Go's reports of faults in its goroutines
/// (common/fault.h): a stack overflow into the guard below the running
/// goroutine's stack (stack.h), a nil dereference, any other bad address.
#pragma once

namespace gmp::stage2 {

struct MCore;

/// Sets up the calling M's thread (see the file's comment). On the M's
/// thread, when it starts.
void init_m_signals(MCore* m);

/// Undoes init_m_signals. On the M's thread, when it ends.
void fini_m_signals(MCore* m) noexcept;

}  // namespace gmp::stage2
