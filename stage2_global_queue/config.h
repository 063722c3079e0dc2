/// \file
/// Stage 2's configuration.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace gmp::stage2 {

/// Largest accepted Config::procs (Go 1.0 capped GOMAXPROCS at 256; later
/// versions at 1024).
inline constexpr int kMaxProcs = 1024;
/// Smallest and largest accepted Config::stack_size.
inline constexpr std::size_t kMinStackSize = 16 * 1024;
inline constexpr std::size_t kMaxStackSize = std::size_t{1} << 30;  ///< 1 GiB
/// Default Config::stack_size: 64 KiB (Go starts goroutines at 2 KiB and
/// grows them; C++ frames cannot move, so the course picks a fixed size
/// that fits ordinary code). AddressSanitizer's redzones make frames several
/// times larger, so its builds default to 256 KiB.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr std::size_t kDefaultStackSize = 256 * 1024;
#else
inline constexpr std::size_t kDefaultStackSize = 64 * 1024;
#endif

/// How a stage 2 Runtime is set up (the same field names in every stage).
struct Config {
  /// Ms (OS threads) running goroutines: at most this many goroutines run
  /// at the same time (Go's GOMAXPROCS). In [1, kMaxProcs]. Default: the
  /// GOMAXPROCS environment variable if it is a number above 0 (capped at
  /// kMaxProcs; anything else is ignored, as Go ignores it), else the
  /// number of hardware threads, at least 1.
  int procs = default_procs();

  /// Usable bytes of each goroutine's stack; a guard lies below it. A
  /// multiple of the page size in [kMinStackSize, kMaxStackSize].
  std::size_t stack_size = kDefaultStackSize;

  /// The execution trace's file (trace/tracer.h): each run() writes its
  /// Chrome Trace Event JSON there when it ends; "" turns tracing off. A
  /// "%r" in it becomes the run's number in the process, so that runs do
  /// not overwrite each other. Unset: the GMP_TRACE environment variable,
  /// else off.
  std::optional<std::string> trace = std::nullopt;

  /// Throws gmp::ConfigError naming the field, the value and the accepted
  /// range if a field is invalid.
  void validate() const;

  /// This config with `trace` decided (from `gmp_trace_env`, the variable's
  /// value or null) and every field validated.
  Config resolve(const char* gmp_trace_env) const;

  /// The default for `procs`.
  static int default_procs() noexcept;
};

/// Throws gmp::ConfigError unless `stack_size` is a page multiple in
/// [kMinStackSize, kMaxStackSize]; `field` names it in the message
/// ("stage2::Config.stack_size"). Shared by the later stages' configs.
void check_stack_size(std::size_t stack_size, const char* field);

}  // namespace gmp::stage2
