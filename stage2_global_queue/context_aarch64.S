#if defined(__aarch64__)
/* gmp_context_switch for aarch64 (AAPCS64). See context.h for what is
 * saved and why; context_offsets.h for where.
 *
 *   void gmp_context_switch(Gobuf* save (x0), const Gobuf* load (x1))
 *
 * At entry x30 (lr) holds the return address: where the saved context
 * continues. sp is the caller's (a call does not push anything on aarch64).
 * Clobbers only x9, which the ABI lets a callee clobber. */
#include "stage2_global_queue/context_offsets.h"

        .text
        .globl  gmp_context_switch
        .type   gmp_context_switch, %function
        .p2align 4
gmp_context_switch:
        .cfi_startproc
        /* 1. Stack pointer and where to continue. */
        mov     x9, sp
        stp     x9, x30, [x0, #CTX_SP]

        /* 2. The callee-saved registers, two at a time. */
        stp     x19, x20, [x0, #CTX_X19]
        stp     x21, x22, [x0, #CTX_X19 + 16]
        stp     x23, x24, [x0, #CTX_X19 + 32]
        stp     x25, x26, [x0, #CTX_X19 + 48]
        stp     x27, x28, [x0, #CTX_X19 + 64]
        str     x29,      [x0, #CTX_FP]

        /* 3. The callee-saved FP halves and the FP control register. */
        stp     d8, d9,   [x0, #CTX_D8]
        stp     d10, d11, [x0, #CTX_D8 + 16]
        stp     d12, d13, [x0, #CTX_D8 + 32]
        stp     d14, d15, [x0, #CTX_D8 + 48]
        mrs     x9, fpcr
        str     x9,       [x0, #CTX_FPCR]

        /* 4. Load the other context, in the same order. */
        ldp     x19, x20, [x1, #CTX_X19]
        ldp     x21, x22, [x1, #CTX_X19 + 16]
        ldp     x23, x24, [x1, #CTX_X19 + 32]
        ldp     x25, x26, [x1, #CTX_X19 + 48]
        ldp     x27, x28, [x1, #CTX_X19 + 64]
        ldr     x29,      [x1, #CTX_FP]
        ldp     d8, d9,   [x1, #CTX_D8]
        ldp     d10, d11, [x1, #CTX_D8 + 16]
        ldp     d12, d13, [x1, #CTX_D8 + 32]
        ldp     d14, d15, [x1, #CTX_D8 + 48]
        ldr     x9,       [x1, #CTX_FPCR]
        msr     fpcr, x9

        /* 5. Switch stacks and continue where that context stopped. */
        ldp     x9, x30, [x1, #CTX_SP]
        .cfi_undefined x30      /* no caller frame to unwind to any more */
        mov     sp, x9
        ret
        .cfi_endproc
        .size   gmp_context_switch, .-gmp_context_switch

/* First code of a new context (context_init): x19 = entry, x20 = arg,
 * sp 16-byte aligned as AAPCS64 requires at every call. */
        .globl  gmp_context_trampoline
        .type   gmp_context_trampoline, %function
        .p2align 4
gmp_context_trampoline:
        .cfi_startproc
        .cfi_undefined x30      /* outermost frame: unwinders stop here */
        mov     x0, x20         /* entry(arg) */
        blr     x19
        brk     #0              /* entry must never return */
        .cfi_endproc
        .size   gmp_context_trampoline, .-gmp_context_trampoline

#endif

/* No executable stack needed (also for the other architecture's empty
 * object). */
        .section .note.GNU-stack,"",%progbits
