/* Byte offsets of the fields of gmp::stage2::Context, shared by the
 * assembly (context_*.S, through the C preprocessor) and C++ (context.h,
 * where static_assert checks every one against offsetof). Plain C macros
 * only: the assembler reads this file too. */
#ifndef GMP_STAGE2_CONTEXT_OFFSETS_H_
#define GMP_STAGE2_CONTEXT_OFFSETS_H_

#if defined(__x86_64__)
#define CTX_RSP 0
#define CTX_RIP 8
#define CTX_RBX 16
#define CTX_RBP 24
#define CTX_R12 32
#define CTX_R13 40
#define CTX_R14 48
#define CTX_R15 56
#define CTX_MXCSR 64
#define CTX_X87CW 68
#define CTX_SIZE 72
#elif defined(__aarch64__)
#define CTX_SP 0
#define CTX_PC 8
#define CTX_X19 16 /* x19..x28: 10 registers, 16..88 */
#define CTX_FP 96  /* x29 */
#define CTX_D8 104 /* d8..d15: 8 registers, 104..160 */
#define CTX_FPCR 168
#define CTX_SIZE 176
#else
#error "gmp-course's context switch supports x86-64 and aarch64 only"
#endif

#endif /* GMP_STAGE2_CONTEXT_OFFSETS_H_ */
