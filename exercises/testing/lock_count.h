// Counts the locks a thread takes, for tests that grade "takes no lock"
// (exercise 05's lock-free queue): every pthread mutex and spin lock
// acquisition in the test binary, std::mutex's included, goes through a
// counting wrapper (the linker's --wrap, set by the lock_count library).
// A lock built by hand from atomics is not seen; a mutex, the plausible
// shortcut, is.
#pragma once

#include <cstdint>

namespace gmp::exercises {

/// Locks the calling thread has taken (or tried to take) since it started:
/// pthread_mutex_lock, pthread_mutex_trylock, pthread_mutex_timedlock and
/// pthread_spin_lock calls. Compare two readings around the code checked.
std::uint64_t locks_taken_by_this_thread() noexcept;

}  // namespace gmp::exercises
