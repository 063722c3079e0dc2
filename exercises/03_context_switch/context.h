// Exercise 03: the x86-64 context switch (Go's gogo and mcall, at their
// core) and how a new context gets its first frame (Go's gostartcall).
//
// Write ex_swap_context in switch_x86_64.S and make_context in
// make_context.cc; the rest of this file is given. See README.md.
//
// The calling convention
// ----------------------
// ex_swap_context(from, to) is an ordinary C function call (System V
// AMD64 ABI: `from` in rdi, `to` in rsi). So the compiler has already
// saved, around the call, every register the ABI lets a callee clobber
// (rax, rcx, rdx, rsi, rdi, r8-r11, xmm0-xmm15, the flags): the switch
// needs to keep only what a callee must preserve:
//
//   - rbx, rbp, r12, r13, r14, r15   (the callee-saved registers)
//   - rsp                            (into Context::rsp: the frame's address)
//   - the MXCSR control bits and the x87 control word (rounding modes,
//     exception masks), which the ABI also counts as callee-saved
//   - where to continue: the return address the `call` pushed, which is
//     already on the stack, at the top of the frame
//
// Deliberately not saved: the caller-saved registers (dead across a call),
// the flags, the vector registers (all caller-saved on x86-64), and fs,
// the thread pointer: TLS belongs to the OS thread, and a context resumed
// on another thread must see that thread's.
//
// The switch keeps them in a frame on the stack of the context that stops
// (SwitchFrame below, laid out in frame_offsets.h): it makes room below
// the return address, stores the registers there, saves rsp into `from`,
// loads rsp from `to`, restores `to`'s registers from its frame, and
// `ret`urns, into `to`.
//
// A new context (make_context) gets a frame made by hand, as if it had
// called ex_swap_context itself: its return address is ex_context_start
// (given below), which calls entry(arg).
#pragma once

#if !defined(__x86_64__) || !defined(__linux__)
#error "exercise 03 (the x86-64 context switch) is for x86-64 Linux only"
#endif

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "exercises/03_context_switch/frame_offsets.h"
#include "exercises/testing/skeleton.h"

namespace gmp::exercises::ctx {

/// A suspended execution context: all it needs is where its stack pointer
/// was, since everything else is in the SwitchFrame that lies there.
/// Written by ex_swap_context (as `from`) and make_context; read by
/// ex_swap_context (as `to`). Owner: whoever switches; not thread-safe.
struct Context {
  void* rsp = nullptr;  ///< the saved rsp: the address of a SwitchFrame
};

/// What lies at Context::rsp while the context is suspended: the
/// callee-saved state of the code that called ex_swap_context (or, for a
/// new context, what make_context put there). Lowest address first; the
/// offsets are frame_offsets.h's (checked below).
struct SwitchFrame {
  std::uint32_t mxcsr = 0;  ///< SSE control/status (stmxcsr / ldmxcsr)
  std::uint16_t x87cw = 0;  ///< x87 control word (fnstcw / fldcw)
  std::uint16_t pad = 0;    ///< unused
  std::uint64_t r15 = 0;    ///< callee-saved
  std::uint64_t r14 = 0;    ///< callee-saved
  std::uint64_t r13 = 0;    ///< callee-saved; arg for ex_context_start
  std::uint64_t r12 = 0;    ///< callee-saved; entry for ex_context_start
  std::uint64_t rbx = 0;    ///< callee-saved
  std::uint64_t rbp = 0;    ///< callee-saved (the frame pointer, if used)
  std::uint64_t ret = 0;    ///< where `ret` continues: the return address
};

static_assert(offsetof(Context, rsp) == CTX_RSP);
static_assert(offsetof(SwitchFrame, mxcsr) == FRAME_MXCSR);
static_assert(offsetof(SwitchFrame, x87cw) == FRAME_X87CW);
static_assert(offsetof(SwitchFrame, r15) == FRAME_R15);
static_assert(offsetof(SwitchFrame, r14) == FRAME_R14);
static_assert(offsetof(SwitchFrame, r13) == FRAME_R13);
static_assert(offsetof(SwitchFrame, r12) == FRAME_R12);
static_assert(offsetof(SwitchFrame, rbx) == FRAME_RBX);
static_assert(offsetof(SwitchFrame, rbp) == FRAME_RBP);
static_assert(offsetof(SwitchFrame, ret) == FRAME_RET);
static_assert(sizeof(SwitchFrame) == FRAME_SIZE);

extern "C" {

/// Suspends the caller into `*from` and continues `*to`: from a running
/// context's point of view, it returns when someone switches back to
/// `*from` (maybe from another OS thread). `*to` must be suspended (saved
/// by an earlier switch, or made by make_context), and `from` != `to`.
/// Preserves rbx, rbp, r12-r15, the MXCSR and the x87 control word per
/// context; touches no memory below the frame it pushes. Written in
/// switch_x86_64.S.
void ex_swap_context(Context* from, Context* to);

/// Given: where a new context begins (make_context puts its address in
/// the frame's `ret`). Expects r12 = entry, r13 = arg, and rsp a multiple
/// of 16 (so that after its `call` pushes the return address, entry sees
/// rsp + 8 a multiple of 16, as the ABI promises every function). Calls
/// entry(arg); if entry ever returns, calls ex_entry_returned. Not to be
/// called from C++. (Naked: no prologue, the body is all there is; `used`
/// and inline: one copy in the program, whoever includes this header.)
[[gnu::naked, gnu::used]] inline void ex_context_start() {
  asm(".cfi_undefined rip\n\t"  // the outermost frame: unwinders stop here
      "movq   %r13, %rdi\n\t"   // entry(arg)
      "callq  *%r12\n\t"
      "callq  ex_entry_returned@PLT\n\t");  // entry returned: a bug
}

/// Given: reports a context whose entry function returned (there is no
/// caller to return to), then aborts.
[[noreturn, gnu::used]] inline void ex_entry_returned() {
  std::fputs(
      "exercise 03: a context's entry function returned; it must never "
      "return, but end by switching away for good (ex_context_start)\n",
      stderr);
  std::abort();
}

/// Given: what the skeleton's ex_swap_context jumps to. A tail jump (no
/// return address pushed), so its return address is ex_swap_context's
/// caller's: the NotWritten exception it throws unwinds straight into the
/// caller, as if ex_swap_context had thrown it. Once you write the switch
/// nothing jumps here; leave it.
[[gnu::used]] inline void ex_swap_context_not_written(Context*, Context*) {
  not_written("ex_swap_context (exercises/03_context_switch/switch_x86_64.S)");
}

}  // extern "C"

/// Go's gostartcall, for a new context: prepares `*c` so that the first
/// ex_swap_context(&some, c) starts entry(arg) on the stack
/// [stack_lo, stack_lo + size), using that stack from its top, with
///   - the stack aligned as the ABI wants at entry's first instruction
///     (rsp + 8 a multiple of 16), whatever stack_lo and size are;
///   - the MXCSR and x87 control word of the thread calling make_context
///     (as a new POSIX thread inherits its creator's).
/// The frame's ret is ex_context_start, r12 = entry, r13 = arg, rbp = 0
/// (ends frame-pointer chains). `entry` must never return (if it does,
/// ex_entry_returned says so and aborts). `size` >= 1024. Any thread.
/// Writes nothing outside *c and the top 80 bytes of the stack.
void make_context(Context* c, void* stack_lo, std::size_t size,
                  void (*entry)(void*), void* arg);

}  // namespace gmp::exercises::ctx
