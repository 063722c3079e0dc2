/// \file
/// Stage 1's configuration.
#pragma once

namespace gmp::stage1 {

/// Largest accepted Config::procs. Every proc is an OS thread with its own
/// stack (8 MiB of address space by default), so the real limit is usually
/// the system's (ulimit -u, kernel.threads-max, vm.max_map_count); reaching
/// it makes Runtime::run throw std::system_error, naming those limits.
inline constexpr int kMaxProcs = 100'000;

/// How a stage 1 Runtime is set up. The same field names exist in every
/// stage, so code written for one stage configures the others.
struct Config {
  /// Worker threads in the pool: how many goroutines can run, or block, at
  /// the same time. Must be in [1, kMaxProcs]. Default: the GOMAXPROCS
  /// environment variable if it is a number above 0 (anything else is
  /// ignored, as Go ignores it), else the number of hardware threads
  /// (std::thread::hardware_concurrency()), at least 1.
  int procs = default_procs();

  /// Throws gmp::ConfigError naming the field, the value and the accepted
  /// range if a field is invalid.
  void validate() const;

  /// The default for `procs`.
  static int default_procs() noexcept;
};

}  // namespace gmp::stage1
