// Exercise 14: write these functions (see README.md and futex_lock.h).
#include "exercises/14_futex_lock/futex_lock.h"

#include "exercises/testing/skeleton.h"

namespace gmp::exercises::futex {

void Mutex::lock() {
  not_written("Mutex::lock (exercises/14_futex_lock/futex_lock.cc)");
}

void Mutex::unlock() {
  not_written("Mutex::unlock (exercises/14_futex_lock/futex_lock.cc)");
}

void Note::clear() {
  not_written("Note::clear (exercises/14_futex_lock/futex_lock.cc)");
}

void Note::wakeup() {
  not_written("Note::wakeup (exercises/14_futex_lock/futex_lock.cc)");
}

void Note::sleep() {
  not_written("Note::sleep (exercises/14_futex_lock/futex_lock.cc)");
}

bool Note::tsleep(std::int64_t ns) {
  (void)ns;
  not_written("Note::tsleep (exercises/14_futex_lock/futex_lock.cc)");
}

}  // namespace gmp::exercises::futex
