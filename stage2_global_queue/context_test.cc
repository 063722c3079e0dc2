// The context switch on its own, without a scheduler: two contexts passing
// control back and forth. Built with -O2 (see BUILD), so that the values
// below really live in callee-saved registers across each switch.
#include <gtest/gtest.h>

#include <cfenv>
#include <cstdint>

#include "stage2_global_queue/context.h"
#include "stage2_global_queue/stack.h"

namespace gmp::stage2 {
namespace {

struct Pair {
  Gobuf main;
  Gobuf other;
  int switches = 0;
  int other_rounding = 0;  // what the other context saw after each resume
};

// Overwrites every callee-saved register, so that the switch back to main
// must restore main's own values rather than find them still in place.
[[gnu::noinline]] void scramble_callee_saved() {
#if defined(__x86_64__)
  asm volatile(
      "movq $0x5a5a5a5a, %%rbx\n\t"
      "movq $0x6b6b6b6b, %%r12\n\t"
      "movq $0x7c7c7c7c, %%r13\n\t"
      "movq $0x8d8d8d8d, %%r14\n\t"
      "movq $0x9e9e9e9e, %%r15\n\t" ::
          : "rbx", "r12", "r13", "r14", "r15");
#elif defined(__aarch64__)
  asm volatile(
      "mov x19, #0x5a5a\n\tmov x20, #0x6b6b\n\tmov x21, #0x7c7c\n\t"
      "mov x22, #0x8d8d\n\tmov x23, #0x9e9e\n\tmov x24, #0x5a5a\n\t"
      "mov x25, #0x6b6b\n\tmov x26, #0x7c7c\n\tmov x27, #0x8d8d\n\t"
      "mov x28, #0x9e9e\n\tfmov d8, x19\n\tfmov d9, x20\n\t"
      "fmov d10, x21\n\tfmov d11, x22\n\tfmov d12, x23\n\t"
      "fmov d13, x24\n\tfmov d14, x25\n\tfmov d15, x26\n\t" ::
          : "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27",
            "x28", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15");
#endif
}

void other_entry(void* arg) {
  auto* p = static_cast<Pair*>(arg);
  std::fesetround(FE_UPWARD);  // this context's own rounding mode
  for (;;) {
    ++p->switches;
    scramble_callee_saved();
    gmp_context_switch(&p->other, &p->main);
    p->other_rounding = std::fegetround();
  }
}

// Six values kept live across every switch: at -O2 in callee-saved
// registers (integer and floating point).
[[gnu::noinline]] std::uint64_t mix_across_switches(Pair* p,
                                                    std::uint64_t seed,
                                                    bool do_switch) {
  std::uint64_t a = seed * 3, b = seed ^ 0x55, c = seed + 7, d = seed * 11;
  double x = static_cast<double>(seed) * 0.5, y = x + 1.25;
  for (int i = 0; i < 100; ++i) {
    if (do_switch) gmp_context_switch(&p->main, &p->other);
    a += 1;
    b ^= a;
    c += b;
    d -= c;
    x = x * 1.0001 + y;
    y -= 0.5;
  }
  return a ^ b ^ c ^ d ^ static_cast<std::uint64_t>(x) ^
         static_cast<std::uint64_t>(y * 8);
}

class ContextSwitchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    stack_ = pool_.alloc();
    context_init(&pair_.other, stack_.lo, stack_.size, &other_entry, &pair_);
  }
  void TearDown() override { pool_.free(stack_); }

  StackPool pool_{64 * 1024};
  Stack stack_;
  Pair pair_;
};

TEST_F(ContextSwitchTest, PreservesCalleeSavedRegisters) {
  volatile std::uint64_t seed = 0x1234567;  // unknown to the optimiser
  std::uint64_t expected = mix_across_switches(&pair_, seed, false);
  EXPECT_EQ(mix_across_switches(&pair_, seed, true), expected);
  EXPECT_EQ(pair_.switches, 100);
}

TEST_F(ContextSwitchTest, EachContextKeepsItsFloatingPointControl) {
  std::fesetround(FE_TOWARDZERO);
  gmp_context_switch(&pair_.main, &pair_.other);  // it sets FE_UPWARD
  EXPECT_EQ(std::fegetround(), FE_TOWARDZERO);
  gmp_context_switch(&pair_.main, &pair_.other);
  EXPECT_EQ(pair_.other_rounding, FE_UPWARD);  // and it kept its own
  EXPECT_EQ(std::fegetround(), FE_TOWARDZERO);
  std::fesetround(FE_TONEAREST);
}

TEST_F(ContextSwitchTest, ANewContextInheritsItsCreatorsRoundingMode) {
  Pair fresh;
  Stack s = pool_.alloc();
  std::fesetround(FE_DOWNWARD);
  context_init(&fresh.other, s.lo, s.size,
               [](void* arg) {
                 auto* p = static_cast<Pair*>(arg);
                 p->other_rounding = std::fegetround();
                 gmp_context_switch(&p->other, &p->main);
                 __builtin_trap();  // never resumed
               },
               &fresh);
  std::fesetround(FE_TONEAREST);
  gmp_context_switch(&fresh.main, &fresh.other);
  EXPECT_EQ(fresh.other_rounding, FE_DOWNWARD);
  pool_.free(s);
}

TEST_F(ContextSwitchTest, ANewContextStartsOnAnAlignedStackInsideItsStack) {
  static std::uintptr_t seen_sp;
  Pair fresh;
  Stack s = pool_.alloc();
  context_init(&fresh.other, s.lo, s.size,
               [](void* arg) {
                 auto* p = static_cast<Pair*>(arg);
                 // The frame address, not a local's: AddressSanitizer may put
                 // locals on a "fake stack" elsewhere. It is the stack
                 // pointer at entry, minus the return address (x86-64).
                 seen_sp = reinterpret_cast<std::uintptr_t>(
                     __builtin_frame_address(0));
                 gmp_context_switch(&p->other, &p->main);
                 __builtin_trap();
               },
               &fresh);
  gmp_context_switch(&fresh.main, &fresh.other);
  auto lo = reinterpret_cast<std::uintptr_t>(s.lo);
  EXPECT_GT(seen_sp, lo);
  EXPECT_LT(seen_sp, lo + s.size);
  EXPECT_EQ(seen_sp % 16, 0u);  // so the entry's stack was ABI-aligned
  pool_.free(s);
}

}  // namespace
}  // namespace gmp::stage2
