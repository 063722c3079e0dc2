// Exercise 13: write these functions (see README.md and safepoint.h). All
// three run inside a signal handler: no allocation, no lock, no exception
// once written.
#include "exercises/13_safe_point/safepoint.h"

#include "exercises/testing/skeleton.h"

namespace gmp::exercises::safepoint {

bool UserCode::contains(std::uintptr_t pc) const {
  (void)pc;
  not_written("UserCode::contains (exercises/13_safe_point/safepoint.cc)");
}

SafePoint check_safe_point(const Interrupted& in) {
  (void)in;
  not_written("check_safe_point (exercises/13_safe_point/safepoint.cc)");
}

void inject_async_preempt(Regs& regs, std::uintptr_t trampoline) {
  (void)regs;
  (void)trampoline;
  not_written("inject_async_preempt (exercises/13_safe_point/safepoint.cc)");
}

}  // namespace gmp::exercises::safepoint
