/** \file
 * Byte offsets of the fields of gmp::stage2::Context, shared by the
 * assembly (context_*.S, through the C preprocessor) and C++ (context.h,
 * where static_assert checks every one against offsetof). Plain C macros
 * only: the assembler reads this file too. */
#ifndef GMP_STAGE2_CONTEXT_OFFSETS_H_
#define GMP_STAGE2_CONTEXT_OFFSETS_H_

#if defined(__x86_64__)
#define CTX_RSP 0 /**< offsetof(Context, rsp) */
#define CTX_RIP 8 /**< offsetof(Context, rip) */
#define CTX_RBX 16 /**< offsetof(Context, rbx) */
#define CTX_RBP 24 /**< offsetof(Context, rbp) */
#define CTX_R12 32 /**< offsetof(Context, r12) */
#define CTX_R13 40 /**< offsetof(Context, r13) */
#define CTX_R14 48 /**< offsetof(Context, r14) */
#define CTX_R15 56 /**< offsetof(Context, r15) */
#define CTX_MXCSR 64 /**< offsetof(Context, mxcsr) */
#define CTX_X87CW 68 /**< offsetof(Context, x87cw) */
#define CTX_SIZE 72 /**< sizeof(Context) */
#elif defined(__aarch64__)
#define CTX_SP 0 /**< offsetof(Context, sp) */
#define CTX_PC 8 /**< offsetof(Context, pc) */
#define CTX_X19 16 /* x19..x28: 10 registers, 16..88 */
#define CTX_FP 96  /* x29 */
#define CTX_D8 104 /* d8..d15: 8 registers, 104..160 */
#define CTX_FPCR 168 /**< offsetof(Context, fpcr) */
#define CTX_SIZE 176 /**< sizeof(Context) */
#else
#error "gmp-course's context switch supports x86-64 and aarch64 only"
#endif

#endif /* GMP_STAGE2_CONTEXT_OFFSETS_H_ */
