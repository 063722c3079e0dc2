// Exercise 03, reference solution: a new context's first frame (Go's
// gostartcall: make the stack look as if the new code had been called).
#include "exercises/03_context_switch/context.h"

namespace gmp::exercises::ctx {

void make_context(Context* c, void* stack_lo, std::size_t size,
                  void (*entry)(void*), void* arg) {
  // The usable top, rounded down to 16: the ABI's stack alignment.
  std::uintptr_t top =
      (reinterpret_cast<std::uintptr_t>(stack_lo) + size) & ~std::uintptr_t{15};
  // The frame ends at the top. The first switch into it pops all of it,
  // ret included, so ex_context_start begins with rsp == top: a multiple
  // of 16, as it expects.
  auto* frame = reinterpret_cast<SwitchFrame*>(top - sizeof(SwitchFrame));
  *frame = SwitchFrame{};
  frame->ret = reinterpret_cast<std::uintptr_t>(&ex_context_start);
  frame->r12 = reinterpret_cast<std::uintptr_t>(entry);
  frame->r13 = reinterpret_cast<std::uintptr_t>(arg);
  frame->rbp = 0;  // ends frame-pointer chains (debuggers, profilers)
  // The creator's floating-point control. Not zeros: an MXCSR of 0
  // unmasks every SSE exception, and the first inexact division traps.
  asm volatile("stmxcsr %0" : "=m"(frame->mxcsr));
  asm volatile("fnstcw %0" : "=m"(frame->x87cw));
  c->rsp = frame;
}

}  // namespace gmp::exercises::ctx
