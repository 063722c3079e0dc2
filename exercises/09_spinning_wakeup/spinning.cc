// Exercise 09: write these three functions (see README.md and the essay in
// spinning.h). Every operation on nmspinning_ should come with its memory
// order and a one-line reason.
#include "exercises/09_spinning_wakeup/spinning.h"

#include "exercises/testing/skeleton.h"

namespace gmp::exercises::spinning {

void Pool::wakep() {
  not_written("Pool::wakep (exercises/09_spinning_wakeup/spinning.cc)");
}

Task Pool::find_runnable(Worker& w) {
  (void)w;
  not_written("Pool::find_runnable (exercises/09_spinning_wakeup/spinning.cc)");
}

void Pool::resetspinning(Worker& w) {
  (void)w;
  not_written("Pool::resetspinning (exercises/09_spinning_wakeup/spinning.cc)");
}

}  // namespace gmp::exercises::spinning
