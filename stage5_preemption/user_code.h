/// \file
/// Stage 5: which program counters belong to the user's code (Go's findfunc
/// and its function table, as isAsyncSafePoint uses them).
///
/// ```unparsed
/// Go's linker writes a table of every function's PC range, and the
/// compiler marks which PCs are unsafe; the signal handler looks the
/// interrupted PC up there. The course builds the same table once, at the
/// first asynchronous runtime, from the program's own ELF symbol table: every
/// function of the executable with its address range, kept if its code calls
/// __cyg_profile_func_enter, that is if it was compiled with
/// -finstrument-functions (the preemptible_cc_* rules of
/// tools/build/preemptible.bzl: the user's code, and what the compiler
/// inlined into it). The runtime, the course's headers,
/// the C++ library and libc are not instrumented, or live in other objects:
/// a PC there is never a safe point.
/// ```
#pragma once

#include <cstddef>
#include <cstdint>

/// Where the user's (preemptible) code lies: the table the signal
/// handler's safe-point check reads.
namespace gmp::stage5::user_code {

/// Builds the table (once per process; later calls return at once).
/// Returns false if the executable has no symbol table (stripped): then no
/// PC is user code. Thread-safe.
bool build() noexcept;

/// Whether `pc` lies in a function compiled with -finstrument-functions.
/// Async-signal-safe (a binary search in an immutable table); false before
/// build().
bool contains(std::uintptr_t pc) noexcept;

/// How many such functions the table holds (for tests and diagnostics).
std::size_t function_count() noexcept;

}  // namespace gmp::stage5::user_code
