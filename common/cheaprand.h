/// \file
/// cheaprand: a fast, per-thread pseudo-random number (Go's cheaprand, the
/// wyrand generator), for choices that must be fair but not secret:
/// select's poll order. Not for cryptography; not reproducible by seed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>

namespace gmp {

namespace detail {
// The calling thread's generator state; 0: to be seeded by cheaprand's
// next call (not seeded yet, or, once in 2^64 steps, the state stepped to
// 0). Constant-initialized: a dynamic initializer would route every access
// through the thread_local's init function (a call, on every select).
inline thread_local std::uint64_t cheaprand_state = 0;

// A first state for this thread, from its id and the time; never 0.
[[gnu::cold, gnu::noinline]] inline std::uint64_t cheaprand_seed() noexcept {
  std::uint64_t s = std::hash<std::thread::id>{}(std::this_thread::get_id()) ^
                    static_cast<std::uint64_t>(
                        std::chrono::steady_clock::now().time_since_epoch().count());
  return s != 0 ? s : 1;
}
}  // namespace detail

/// A pseudo-random 32-bit number from the calling thread's own generator
/// (wyrand: one add and one 64x64->128 multiply). Any thread; each thread's
/// sequence starts from its id and the time.
inline std::uint32_t cheaprand() noexcept {
  std::uint64_t& state = detail::cheaprand_state;
  if (state == 0) [[unlikely]] state = detail::cheaprand_seed();
  state += 0xa0761d6478bd642fULL;
  __uint128_t m = static_cast<__uint128_t>(state) * (state ^ 0xe7037ed1a0b428dbULL);
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(m >> 64) ^
                                    static_cast<std::uint64_t>(m));
}

/// A pseudo-random number in [0, n), n > 0 (Lemire's multiply-shift, as
/// Go's cheaprandn: no division, a bias below 2^-32 * n).
inline std::uint32_t cheaprandn(std::uint32_t n) noexcept {
  return static_cast<std::uint32_t>(
      (static_cast<std::uint64_t>(cheaprand()) * n) >> 32);
}

}  // namespace gmp
