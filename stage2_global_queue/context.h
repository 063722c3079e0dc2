/// \file
/// The context switch: the one piece of assembly of the course.
///
/// ```unparsed
/// A goroutine (or an M's scheduler context, g0) that stops running keeps
/// its registers in a Gobuf, and continues later, maybe on another OS
/// thread, from exactly where it stopped. Which registers? Only those a
/// function call must preserve (callee-saved in the ABI), the stack pointer
/// and where to continue: context_switch is an ordinary function call, so
/// the compiler has already saved every caller-saved register it needed
/// around the call. Plus the floating-point control registers (rounding
/// mode, exception masks), which the ABI also asks callees to preserve.
///
///   x86-64 System V: rbx rbp r12-r15, rsp, return address; MXCSR and the
///                    x87 control word (context_x86_64.S).
///   aarch64 AAPCS64: x19-x28, x29 (fp), sp, x30 (lr) as the pc to resume;
///                    d8-d15 (low halves of v8-v15); FPCR (context_aarch64.S).
///
/// Deliberately not saved: caller-saved registers (dead at a call), flags,
/// the vector registers beyond d8-d15, MXCSR/FPSR status bits meaning
/// "an exception happened" (x86 keeps them in MXCSR: saved with it), and
/// the thread pointer (fs on x86-64, tpidr_el0 on aarch64): it belongs to
/// the OS thread, and a goroutine that moves to another thread must see
/// that thread's TLS (see tls.h for the hazard this creates).
///
/// Not supported: Intel CET shadow stacks (a switch jumps, it does not
/// return); Debian's toolchain and kernel do not enable them.
/// ```
#pragma once

#include <cstddef>
#include <cstdint>

#include "stage2_global_queue/context_offsets.h"

namespace gmp::stage2 {

/// The saved registers of a suspended execution context (Go's gobuf, the
/// `sched` field of every g). Field order and offsets are fixed by
/// context_offsets.h (checked below).
struct Gobuf {
#if defined(__x86_64__)
  std::uint64_t rsp = 0;  ///< stack pointer once context_switch returns
  std::uint64_t rip = 0;  ///< where to continue (its return address)
  // The callee-saved registers of the System V ABI, in the order that
  // context_offsets.h and the assembly rely on.
  std::uint64_t rbx = 0;  ///< callee-saved
  std::uint64_t rbp = 0;  ///< callee-saved; the frame pointer
  std::uint64_t r12 = 0;  ///< callee-saved
  std::uint64_t r13 = 0;  ///< callee-saved
  std::uint64_t r14 = 0;  ///< callee-saved
  std::uint64_t r15 = 0;  ///< callee-saved
  std::uint32_t mxcsr = 0;  ///< SSE control and status
  std::uint16_t x87cw = 0;  ///< x87 control word
#elif defined(__aarch64__)
  std::uint64_t sp = 0;         ///< stack pointer
  std::uint64_t pc = 0;         ///< where to continue (x30 at the call)
  std::uint64_t x19_x28[10] = {};  ///< callee-saved general registers
  std::uint64_t fp = 0;         ///< x29, the frame pointer
  std::uint64_t d8_d15[8] = {};  ///< callee-saved halves of v8-v15
  std::uint64_t fpcr = 0;       ///< floating-point control register
#endif
};

#if defined(__x86_64__)
static_assert(offsetof(Gobuf, rsp) == CTX_RSP);
static_assert(offsetof(Gobuf, rip) == CTX_RIP);
static_assert(offsetof(Gobuf, rbx) == CTX_RBX);
static_assert(offsetof(Gobuf, rbp) == CTX_RBP);
static_assert(offsetof(Gobuf, r12) == CTX_R12);
static_assert(offsetof(Gobuf, r13) == CTX_R13);
static_assert(offsetof(Gobuf, r14) == CTX_R14);
static_assert(offsetof(Gobuf, r15) == CTX_R15);
static_assert(offsetof(Gobuf, mxcsr) == CTX_MXCSR);
static_assert(offsetof(Gobuf, x87cw) == CTX_X87CW);
#elif defined(__aarch64__)
static_assert(offsetof(Gobuf, sp) == CTX_SP);
static_assert(offsetof(Gobuf, pc) == CTX_PC);
static_assert(offsetof(Gobuf, x19_x28) == CTX_X19);
static_assert(offsetof(Gobuf, fp) == CTX_FP);
static_assert(offsetof(Gobuf, d8_d15) == CTX_D8);
static_assert(offsetof(Gobuf, fpcr) == CTX_FPCR);
#endif
static_assert(sizeof(Gobuf) == CTX_SIZE);

extern "C" {
/// Saves the caller's context into `*save` and continues `*load`; returns
/// when someone switches back to `*save`. Calling convention: the
/// platform's C ABI (save in rdi / x0, load in rsi / x1). Does not touch
/// memory below the stack pointer (the x86-64 red zone stays intact).
/// noexcept (it throws nothing): a noexcept caller, gogo, may then jump to
/// it as its last act (a tail call) instead of calling it, so that g0 is
/// resumed straight in gogo's caller (stage3_gmp/runtime.h, execute).
void gmp_context_switch(Gobuf* save, const Gobuf* load) noexcept;

/// Where a new context starts (context_init): calls entry(arg), which must
/// never return. Not to be called.
void gmp_context_trampoline();
}

/// Prepares `ctx` so that switching to it calls entry(arg) on the stack
/// [stack_lo, stack_lo + size), with the calling thread's floating-point
/// control settings (as a new POSIX thread inherits its creator's).
/// `entry` must never return: it ends by switching away for good.
void context_init(Gobuf* ctx, void* stack_lo, std::size_t size,
                  void (*entry)(void*), void* arg) noexcept;

}  // namespace gmp::stage2
