/// \file
/// Stage 3's configuration: GOMAXPROCS as Go decides it, and tracing.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "stage2_global_queue/config.h"

namespace gmp::stage3 {

/// Largest accepted number of Ps.
inline constexpr int kMaxProcs = 1024;
using stage2::kDefaultStackSize;
using stage2::kMaxStackSize;
using stage2::kMinStackSize;

/// How a stage 3 Runtime is set up. Unset fields are decided when the
/// Runtime is made (Config::resolve), from the environment as Go does.
struct Config {
  /// GOMAXPROCS: the number of Ps, the most goroutines running at once.
  /// In [1, kMaxProcs]. Unset: the GOMAXPROCS environment variable if it is
  /// a number above 0 (capped at kMaxProcs; anything else is ignored, as Go
  /// ignores it: gmp::parse_gomaxprocs), else Go 1.25's default: the CPUs
  /// the process may run on, capped by its cgroup's CPU limit (cgroup.h).
  std::optional<int> procs;

  /// Usable bytes of each goroutine's stack (as in stage 2).
  std::size_t stack_size = kDefaultStackSize;

  /// Scheduler tracing, in the syntax of Go's GODEBUG:
  /// "schedtrace=1000" prints a summary line every 1000 ms to stderr,
  /// "schedtrace=1000,scheddetail=1" adds a line per P, M and goroutine.
  /// Unset: the GMP_DEBUG environment variable; "" turns tracing off.
  std::optional<std::string> debug;

  /// The execution trace's file, as in stage 2 (trace/tracer.h). Unset:
  /// the GMP_TRACE environment variable, else off.
  std::optional<std::string> trace = std::nullopt;

  /// Throws gmp::ConfigError naming the field, the value and the accepted
  /// range if a set field is invalid.
  void validate() const;

  /// This config with every unset field decided from `gomaxprocs_env`,
  /// `gmp_debug_env` and `gmp_trace_env` (the environment variables'
  /// values, null if unset) and the machine. Throws gmp::ConfigError if any
  /// value is invalid.
  Config resolve(const char* gomaxprocs_env, const char* gmp_debug_env,
                 const char* gmp_trace_env = nullptr) const;
};

/// The parsed form of Config::debug.
struct DebugSettings {
  int schedtrace_ms = 0;     ///< 0: no trace
  bool scheddetail = false;  ///< also per-P, per-M, per-G lines
};

/// Parses "schedtrace=X,scheddetail=1"; `where` names the source in errors.
/// Throws gmp::ConfigError on unknown keys or invalid values.
DebugSettings parse_debug(const std::string& text, const std::string& where);

}  // namespace gmp::stage3
