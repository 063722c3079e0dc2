/// \file
/// procyield: Go's spin-wait hint (runtime/asm_amd64.s, asm_arm64.s).
#pragma once

namespace gmp {

/// Go's procyield(n): n pause instructions, the CPU's hint that the caller
/// spins on a value another CPU will change (x86-64 `pause`, aarch64
/// `yield`). A spin with it slows down its own loads of the contended
/// cache line and leaves the core's resources to its sibling thread.
/// Used by RuntimeLock's spin (common/runtime_lock.cc) and given to
/// exercise 14.
inline void procyield(int n) noexcept {
  for (int i = 0; i < n; ++i) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
}

}  // namespace gmp
