// Exercise 03: write make_context (see context.h and README.md).
#include "exercises/03_context_switch/context.h"

namespace gmp::exercises::ctx {

void make_context(Context* c, void* stack_lo, std::size_t size,
                  void (*entry)(void*), void* arg) {
  (void)c;
  (void)stack_lo;
  (void)size;
  (void)entry;
  (void)arg;
  not_written("make_context (exercises/03_context_switch/make_context.cc)");
}

}  // namespace gmp::exercises::ctx
