/* Exercise 03: write ex_swap_context here (see context.h for what to save
 * and README.md for the statement).
 *
 *   void ex_swap_context(Context* from (rdi), Context* to (rsi))
 *
 * Frame at entry (reached by `call`):
 *
 *   rsp+8   the caller's frame
 *   rsp     return address      <- SwitchFrame.ret of the frame you build
 *
 * Use the offsets of frame_offsets.h (FRAME_RBX(%rsp), CTX_RSP(%rdi)...). */
#include "exercises/03_context_switch/frame_offsets.h"

        .text
        .globl  ex_swap_context
        .type   ex_swap_context, @function
        .p2align 4
ex_swap_context:
        .cfi_startproc
        /* Not written yet: a tail jump to a C++ function that throws
         * NotWritten (context.h). Replace this line with the switch. */
        jmp     ex_swap_context_not_written@PLT
        .cfi_endproc
        .size   ex_swap_context, .-ex_swap_context

/* No executable stack needed. */
        .section .note.GNU-stack,"",%progbits
