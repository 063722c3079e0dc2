/// \file
/// The trace's clock: the CPU's own counter where the kernel trusts it,
/// turned into nanoseconds once, when the file is written.
///
/// ```unparsed
/// Every event reads the clock, so its price is the price of tracing:
/// steady_clock::now() is clock_gettime, a call into the vDSO that reads
/// the time-stamp counter and converts it; rdtsc is the one instruction
/// that reads it. Go's tracer makes the same choice:
/// it stamps events with cputicks() and converts with ticksPerSec, which it
/// measures over the trace. Here:
///
///   x86-64   rdtsc, if the kernel's clocksource is "tsc" (it then found
///            the counter constant-rate and in step on every CPU, which
///            merging threads' events by time needs); else steady_clock
///   aarch64  the generic timer's virtual count (cntvct_el0): constant
///            rate, the same on every CPU by the architecture
///   other    steady_clock
///
/// ns_per_tick() compares the counter with steady_clock over the whole
/// run, at its end: the file's times are steady_clock's.
/// ```
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace gmp::trace {

/// A clock for trace events: now() is cheap; ns_per_tick() converts.
/// Immutable after construction: any thread may read it.
class Clock {
 public:
  /// Picks the counter (see the file's comment) and notes time 0.
  Clock() noexcept;

  /// Ticks since time 0.
  std::int64_t now() const noexcept { return raw() - origin_; }

  /// Nanoseconds per tick, measured from time 0 until now (1 for
  /// steady_clock, whose ticks are nanoseconds).
  double ns_per_tick() const noexcept;

  /// Whether the ticks are the CPU's counter (not steady_clock's).
  bool cycle_counter() const noexcept { return cycles_; }

 private:
  std::int64_t raw() const noexcept {
    if (cycles_) {
#if defined(__x86_64__)
      return static_cast<std::int64_t>(__rdtsc());
#elif defined(__aarch64__)
      std::uint64_t v;
      asm volatile("mrs %0, cntvct_el0" : "=r"(v));  // the virtual count
      return static_cast<std::int64_t>(v);
#endif
    }
    return steady_ns();
  }
  static std::int64_t steady_ns() noexcept;

  bool cycles_;
  std::int64_t origin_;     // raw() at time 0
  std::int64_t origin_ns_;  // steady_ns() at time 0
};

}  // namespace gmp::trace
