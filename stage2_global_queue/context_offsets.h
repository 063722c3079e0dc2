/** \file
 * Byte offsets of the fields of gmp::stage2::Gobuf, shared by the
 * assembly (context_*.S, through the C preprocessor) and C++ (context.h,
 * where static_assert checks every one against offsetof). Plain C macros
 * only: the assembler reads this file too. */
#ifndef GMP_STAGE2_CONTEXT_OFFSETS_H_
#define GMP_STAGE2_CONTEXT_OFFSETS_H_

#if defined(__x86_64__)
#define CTX_RSP 0 /**< offsetof(Gobuf, rsp) */
#define CTX_RIP 8 /**< offsetof(Gobuf, rip) */
#define CTX_RBX 16 /**< offsetof(Gobuf, rbx) */
#define CTX_RBP 24 /**< offsetof(Gobuf, rbp) */
#define CTX_R12 32 /**< offsetof(Gobuf, r12) */
#define CTX_R13 40 /**< offsetof(Gobuf, r13) */
#define CTX_R14 48 /**< offsetof(Gobuf, r14) */
#define CTX_R15 56 /**< offsetof(Gobuf, r15) */
#define CTX_MXCSR 64 /**< offsetof(Gobuf, mxcsr) */
#define CTX_X87CW 68 /**< offsetof(Gobuf, x87cw) */
#define CTX_SIZE 72 /**< sizeof(Gobuf) */
#elif defined(__aarch64__)
#define CTX_SP 0 /**< offsetof(Gobuf, sp) */
#define CTX_PC 8 /**< offsetof(Gobuf, pc) */
#define CTX_X19 16 /* x19..x28: 10 registers, 16..88 */
#define CTX_FP 96  /* x29 */
#define CTX_D8 104 /* d8..d15: 8 registers, 104..160 */
#define CTX_FPCR 168 /**< offsetof(Gobuf, fpcr) */
#define CTX_SIZE 176 /**< sizeof(Gobuf) */
#else
#error "gmp-course's context switch supports x86-64 and aarch64 only"
#endif

#endif /* GMP_STAGE2_CONTEXT_OFFSETS_H_ */
