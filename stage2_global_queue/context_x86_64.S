#if defined(__x86_64__)
/* gmp_context_switch for x86-64 System V. See context.h for what is saved
 * and why; context_offsets.h for where.
 *
 *   void gmp_context_switch(Gobuf* save  (rdi), const Gobuf* load (rsi))
 *
 * Frame at entry (we were reached by `call`):
 *
 *   rsp+8   caller's frame   <- the caller's rsp once we "return"
 *   rsp     return address   <- where the saved context continues
 *
 * Clobbers only what the ABI lets a callee clobber (rax here). */
#include "stage2_global_queue/context_offsets.h"

        .text
        .globl  gmp_context_switch
        .type   gmp_context_switch, @function
        .p2align 4
gmp_context_switch:
        .cfi_startproc
        /* 1. Where to continue, and the stack pointer as the caller will
         *    see it after our return: the return address is popped. */
        movq    (%rsp), %rax
        movq    %rax, CTX_RIP(%rdi)
        leaq    8(%rsp), %rax
        movq    %rax, CTX_RSP(%rdi)

        /* 2. The callee-saved registers. */
        movq    %rbx, CTX_RBX(%rdi)
        movq    %rbp, CTX_RBP(%rdi)
        movq    %r12, CTX_R12(%rdi)
        movq    %r13, CTX_R13(%rdi)
        movq    %r14, CTX_R14(%rdi)
        movq    %r15, CTX_R15(%rdi)

        /* 3. The floating-point control registers. */
        stmxcsr CTX_MXCSR(%rdi)
        fnstcw  CTX_X87CW(%rdi)

        /* 4. Load the other context, in the same order. ldmxcsr and fldcw
         *    stall the pipeline, so each is skipped when the value is the
         *    one just saved (nearly always: few programs change them). */
        movq    CTX_RBX(%rsi), %rbx
        movq    CTX_RBP(%rsi), %rbp
        movq    CTX_R12(%rsi), %r12
        movq    CTX_R13(%rsi), %r13
        movq    CTX_R14(%rsi), %r14
        movq    CTX_R15(%rsi), %r15
        movl    CTX_MXCSR(%rsi), %eax
        cmpl    CTX_MXCSR(%rdi), %eax
        je      1f
        ldmxcsr CTX_MXCSR(%rsi)
1:      movzwl  CTX_X87CW(%rsi), %eax
        cmpw    CTX_X87CW(%rdi), %ax
        je      2f
        fldcw   CTX_X87CW(%rsi)
2:

        /* 5. Switch stacks and continue where that context stopped: as if
         *    its own call to gmp_context_switch returned. */
        movq    CTX_RSP(%rsi), %rsp
        .cfi_undefined rip      /* no caller frame on this stack to unwind to */
        jmpq    *CTX_RIP(%rsi)
        .cfi_endproc
        .size   gmp_context_switch, .-gmp_context_switch

/* First code of a new context (context_init): r12 = entry, r13 = arg, rsp
 * 16-byte aligned, so that after `call` pushes the return address the
 * callee sees the alignment the ABI promises (rsp+8 a multiple of 16). */
        .globl  gmp_context_trampoline
        .type   gmp_context_trampoline, @function
        .p2align 4
gmp_context_trampoline:
        .cfi_startproc
        .cfi_undefined rip      /* outermost frame: unwinders stop here */
        movq    %r13, %rdi      /* entry(arg) */
        callq   *%r12
        ud2                     /* entry must never return */
        .cfi_endproc
        .size   gmp_context_trampoline, .-gmp_context_trampoline

#endif

/* No executable stack needed (also for the other architecture's empty
 * object). */
        .section .note.GNU-stack,"",%progbits
