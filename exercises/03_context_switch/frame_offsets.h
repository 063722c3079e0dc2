/* Exercise 03: byte offsets of the switch frame (ex::ctx::SwitchFrame in
 * context.h) and of Context, shared by the assembly (switch_x86_64.S,
 * through the C preprocessor) and C++ (context.h, where static_assert
 * checks each one against offsetof). Plain C macros only: the assembler
 * reads this file too.
 *
 * The frame, at the saved stack pointer, lowest address first:
 *
 *   +0   MXCSR (4 bytes)        SSE control and status
 *   +4   x87 control word (2)   then 2 bytes of padding
 *   +8   r15
 *   +16  r14
 *   +24  r13
 *   +32  r12
 *   +40  rbx
 *   +48  rbp
 *   +56  return address         pushed by the `call` to ex_swap_context
 *   +64  (the caller's frame)   where rsp is once the switch returns
 */
#ifndef GMP_EXERCISES_03_FRAME_OFFSETS_H_
#define GMP_EXERCISES_03_FRAME_OFFSETS_H_

#define FRAME_MXCSR 0
#define FRAME_X87CW 4
#define FRAME_R15 8
#define FRAME_R14 16
#define FRAME_R13 24
#define FRAME_R12 32
#define FRAME_RBX 40
#define FRAME_RBP 48
#define FRAME_RET 56 /* also: the bytes ex_swap_context adds below it */
#define FRAME_SIZE 64

#define CTX_RSP 0 /* Context::rsp */

#endif /* GMP_EXERCISES_03_FRAME_OFFSETS_H_ */
