#include "exercises/testing/lock_count.h"

#include <pthread.h>
#include <time.h>

namespace gmp::exercises {
namespace {
// This thread's count (a thread_local of a trivial type: no lock to make).
thread_local std::uint64_t taken = 0;
}  // namespace

std::uint64_t locks_taken_by_this_thread() noexcept { return taken; }

}  // namespace gmp::exercises

// The wrappers: with -Wl,--wrap=F every call to F in the binary's objects
// comes here, and __real_F is the libc (or sanitizer) function.
extern "C" {
int __real_pthread_mutex_lock(pthread_mutex_t* m);
int __real_pthread_mutex_trylock(pthread_mutex_t* m);
int __real_pthread_mutex_timedlock(pthread_mutex_t* m, const timespec* t);
int __real_pthread_spin_lock(pthread_spinlock_t* l);

int __wrap_pthread_mutex_lock(pthread_mutex_t* m) {
  ++gmp::exercises::taken;
  return __real_pthread_mutex_lock(m);
}
int __wrap_pthread_mutex_trylock(pthread_mutex_t* m) {
  ++gmp::exercises::taken;
  return __real_pthread_mutex_trylock(m);
}
int __wrap_pthread_mutex_timedlock(pthread_mutex_t* m, const timespec* t) {
  ++gmp::exercises::taken;
  return __real_pthread_mutex_timedlock(m, t);
}
int __wrap_pthread_spin_lock(pthread_spinlock_t* l) {
  ++gmp::exercises::taken;
  return __real_pthread_spin_lock(l);
}
}
