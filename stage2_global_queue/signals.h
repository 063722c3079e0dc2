/// \file
/// Stack overflow detection: a SIGSEGV handler that recognises a fault in the
/// guard below the running goroutine's stack (stack.h).
#pragma once

namespace gmp::stage2 {

struct MCore;

/// Gives the calling M's thread an alternate signal stack (a goroutine
/// that overflowed has no stack left to run a handler on), and installs the
/// process's SIGSEGV handler the first time. On the M's thread.
void install_signal_stack(MCore* m);

/// Removes the calling M's alternate signal stack. On the M's thread.
void remove_signal_stack(MCore* m) noexcept;

}  // namespace gmp::stage2
