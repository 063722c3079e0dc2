#if defined(__x86_64__)
/* Exercise 13's test code for the real signal (safepoint_test.cc): a loop
 * to interrupt, and a trampoline for the handler to inject.
 *
 * gmp_test_spin(const int* stop)      rdi = stop
 *   The user's code: a leaf function that keeps data in its red zone (the
 *   128 bytes below rsp, which the System V ABI lets a leaf function use
 *   without moving rsp). It fills the red zone with a pattern, then loops
 *   until *stop != 0, checking on every iteration that rsp and the whole
 *   red zone are as it left them. Returns the iterations (rax), or -1 if
 *   anything changed under it. Uses rax, rcx, rdx, r8, r9, the flags.
 *   gmp_test_spin_end marks the end of its code: [gmp_test_spin,
 *   gmp_test_spin_end) goes into the test's user code table.
 *
 * gmp_test_trampoline
 *   Where the injected "call" goes. The frame the handler made:
 *     rsp+8 .. rsp+135   the red zone, untouched  (rsp+136: the old rsp)
 *     rsp                the interrupted PC
 *   It counts itself in gmp_test_trampoline_runs and returns: `ret $128`
 *   pops the interrupted PC and then skips the red zone, so rsp is as it
 *   was. It changes no register: the flags are saved around the count.
 *   (Stage 5's gmp_async_preempt saves every register and yields here.)
 */
        .text
        .globl  gmp_test_spin
        .hidden gmp_test_spin
        .type   gmp_test_spin, @function
        .p2align 4
gmp_test_spin:
        /* 1. The pattern into the red zone, rsp at entry into r9. */
        movabsq $0x5afe5afe5afe5afe, %rax
        movq    %rsp, %r9
        xorl    %ecx, %ecx
1:      movq    %rax, -128(%rsp,%rcx,8)
        incl    %ecx
        cmpl    $16, %ecx
        jne     1b
        xorl    %r8d, %r8d

        /* 2. Loop: rsp and the 16 quadwords unchanged, then count and
         *    look at *stop. */
2:      cmpq    %rsp, %r9
        jne     9f
        xorl    %ecx, %ecx
3:      cmpq    %rax, -128(%rsp,%rcx,8)
        jne     9f
        incl    %ecx
        cmpl    $16, %ecx
        jne     3b
        incq    %r8
        movl    (%rdi), %edx
        testl   %edx, %edx
        je      2b

        /* 3. Stopped: the iterations, or -1 if something changed. */
        movq    %r8, %rax
        ret
9:      movq    $-1, %rax
        ret
        .globl  gmp_test_spin_end
        .hidden gmp_test_spin_end
gmp_test_spin_end:
        .size   gmp_test_spin, .-gmp_test_spin

        .globl  gmp_test_trampoline
        .hidden gmp_test_trampoline
        .type   gmp_test_trampoline, @function
        .p2align 4
gmp_test_trampoline:
        pushfq                                   /* the interrupted flags */
        lock incq gmp_test_trampoline_runs(%rip)
        popfq
        ret     $128                             /* back, over the red zone */
        .size   gmp_test_trampoline, .-gmp_test_trampoline

        .bss
        .p2align 3
        .globl  gmp_test_trampoline_runs
        .hidden gmp_test_trampoline_runs
        .type   gmp_test_trampoline_runs, @object
gmp_test_trampoline_runs:
        .zero   8
        .size   gmp_test_trampoline_runs, 8

        .section .note.GNU-stack,"",@progbits
#endif
