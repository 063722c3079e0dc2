#if defined(__x86_64__)
/* gmp_async_preempt: where a goroutine stopped by SIGURG continues (Go's
 * asyncPreempt, preempt_amd64.s). See async_preempt.h.
 *
 * Not called: the signal handler (async_preempt.cc) made it look as if the
 * interrupted instruction had called us. It moved the stack pointer past
 * the interrupted function's red zone (128 bytes that leaf code may use
 * below rsp without moving rsp) and pushed the interrupted PC:
 *
 *   rsp+8 .. rsp+135   the red zone, untouched   (rsp+136: the old rsp)
 *   rsp                the interrupted PC
 *
 * Nothing in the interrupted code expected a call here, so nothing may
 * change: every general register, the flags, and the whole x87/SSE/AVX
 * state (XSAVE, with the size the CPU reports for the features the OS
 * enabled, in gmp_xsave_size) are saved, gmp_async_preempt2 (C++, which
 * yields to the scheduler) is called with the ABI's alignment and a clear
 * direction flag, and everything is put back exactly. `ret $128` returns
 * to the interrupted PC and skips the red zone: rsp is as it was. */

        .text
        .globl  gmp_async_preempt
        .hidden gmp_async_preempt
        .type   gmp_async_preempt, @function
        .p2align 4
gmp_async_preempt:
        .cfi_startproc
        .cfi_signal_frame          /* the "return address" follows no call */
        /* 1. A frame-pointer frame, for debuggers and stack traces. */
        pushq   %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        movq    %rsp, %rbp
        .cfi_def_cfa_register %rbp

        /* 2. The flags, then every other general register (rsp is rbp+16
         *    plus the 128 bytes we skip; rbp is saved above). rbx and
         *    r12-r15 would survive the call by the ABI anyway; saving all
         *    keeps the picture simple, as Go's asyncPreempt does. The
         *    tests catch a missing flags or caller-saved restore. */
        pushfq
        pushq   %rax
        pushq   %rbx
        pushq   %rcx
        pushq   %rdx
        pushq   %rsi
        pushq   %rdi
        pushq   %r8
        pushq   %r9
        pushq   %r10
        pushq   %r11
        pushq   %r12
        pushq   %r13
        pushq   %r14
        pushq   %r15

        /* 3. The vector and floating-point state: a 64-byte aligned area,
         *    its XSAVE header zeroed (XRSTOR faults on a dirty one), all
         *    components the OS enabled (mask edx:eax = all ones). */
        subq    gmp_xsave_size(%rip), %rsp
        andq    $-64, %rsp
        xorl    %eax, %eax
        movq    %rax, 512(%rsp)
        movq    %rax, 520(%rsp)
        movq    %rax, 528(%rsp)
        movq    %rax, 536(%rsp)
        movq    %rax, 544(%rsp)
        movq    %rax, 552(%rsp)
        movq    %rax, 560(%rsp)
        movq    %rax, 568(%rsp)
        movl    $-1, %eax
        movl    $-1, %edx
        xsave64 (%rsp)

        /* 4. Yield (rsp is 64-byte aligned, as a call needs 16). */
        cld
        call    gmp_async_preempt2

        /* 5. Back, perhaps on another M: restore in reverse order. */
        movl    $-1, %eax
        movl    $-1, %edx
        xrstor64 (%rsp)
        leaq    -120(%rbp), %rsp   /* 15 registers and the flags below rbp */
        popq    %r15
        popq    %r14
        popq    %r13
        popq    %r12
        popq    %r11
        popq    %r10
        popq    %r9
        popq    %r8
        popq    %rdi
        popq    %rsi
        popq    %rdx
        popq    %rcx
        popq    %rbx
        popq    %rax
        popfq
        popq    %rbp
        .cfi_def_cfa %rsp, 8
        /* 6. To the interrupted PC, and over the red zone. */
        ret     $128
        .cfi_endproc
        .size   gmp_async_preempt, .-gmp_async_preempt

        .section .note.GNU-stack,"",@progbits
#endif
