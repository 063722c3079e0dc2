#include "stage2_global_queue/context.h"

namespace gmp::stage2 {

void context_init(Gobuf* ctx, void* stack_lo, std::size_t size,
                  void (*entry)(void*), void* arg) noexcept {
  auto top = (reinterpret_cast<std::uintptr_t>(stack_lo) + size) &
             ~std::uintptr_t{15};  // both ABIs: 16-byte aligned stacks
  *ctx = Gobuf{};
#if defined(__x86_64__)
  ctx->rsp = top;
  ctx->rip = reinterpret_cast<std::uintptr_t>(&gmp_context_trampoline);
  ctx->r12 = reinterpret_cast<std::uintptr_t>(entry);
  ctx->r13 = reinterpret_cast<std::uintptr_t>(arg);
  // rbp = 0 ends frame-pointer chains. FP control: the caller's own.
  asm volatile("stmxcsr %0" : "=m"(ctx->mxcsr));
  asm volatile("fnstcw %0" : "=m"(ctx->x87cw));
#elif defined(__aarch64__)
  ctx->sp = top;
  ctx->pc = reinterpret_cast<std::uintptr_t>(&gmp_context_trampoline);
  ctx->x19_x28[0] = reinterpret_cast<std::uintptr_t>(entry);
  ctx->x19_x28[1] = reinterpret_cast<std::uintptr_t>(arg);
  // fp = 0 ends frame-pointer chains. FP control: the caller's own.
  asm volatile("mrs %0, fpcr" : "=r"(ctx->fpcr));
#endif
}

}  // namespace gmp::stage2
