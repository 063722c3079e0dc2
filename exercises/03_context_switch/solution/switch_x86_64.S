/* Exercise 03, reference solution: the x86-64 System V context switch.
 * See context.h for what is saved and why, frame_offsets.h for where.
 *
 *   void ex_swap_context(Context* from (rdi), Context* to (rsi))
 *
 * Frame at entry (reached by `call`):
 *
 *   rsp+8   the caller's frame
 *   rsp     return address      <- SwitchFrame.ret of the frame we build
 *
 * Clobbers only what the ABI lets a callee clobber (the flags here). */
#include "exercises/03_context_switch/frame_offsets.h"

        .text
        .globl  ex_swap_context
        .type   ex_swap_context, @function
        .p2align 4
ex_swap_context:
        .cfi_startproc
        /* 1. Make room for the frame below the return address. Not above
         *    it: the caller's frame is there. */
        subq    $FRAME_RET, %rsp
        .cfi_adjust_cfa_offset FRAME_RET

        /* 2. Save the caller's callee-saved registers into the frame. */
        movq    %rbx, FRAME_RBX(%rsp)
        movq    %rbp, FRAME_RBP(%rsp)
        movq    %r12, FRAME_R12(%rsp)
        movq    %r13, FRAME_R13(%rsp)
        movq    %r14, FRAME_R14(%rsp)
        movq    %r15, FRAME_R15(%rsp)

        /* 3. And its floating-point control registers. */
        stmxcsr FRAME_MXCSR(%rsp)
        fnstcw  FRAME_X87CW(%rsp)

        /* 4. Switch stacks: `from` keeps where its frame is, `to`'s frame
         *    becomes ours. From here on we run as `to`. (Its frame has
         *    the same layout, so the CFI above stays true.) */
        movq    %rsp, CTX_RSP(%rdi)
        movq    CTX_RSP(%rsi), %rsp

        /* 5. Restore `to`'s registers from its frame. */
        movq    FRAME_RBX(%rsp), %rbx
        movq    FRAME_RBP(%rsp), %rbp
        movq    FRAME_R12(%rsp), %r12
        movq    FRAME_R13(%rsp), %r13
        movq    FRAME_R14(%rsp), %r14
        movq    FRAME_R15(%rsp), %r15
        ldmxcsr FRAME_MXCSR(%rsp)
        fldcw   FRAME_X87CW(%rsp)

        /* 6. Drop the frame and return, into `to`: after its own call to
         *    ex_swap_context or, the first time, into ex_context_start. */
        addq    $FRAME_RET, %rsp
        .cfi_adjust_cfa_offset -FRAME_RET
        ret
        .cfi_endproc
        .size   ex_swap_context, .-ex_swap_context

/* No executable stack needed. */
        .section .note.GNU-stack,"",%progbits
