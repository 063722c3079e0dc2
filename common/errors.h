/// \file
/// The errors the course runtimes report, the same in every stage.
///
/// ```unparsed
///   gmp::ConfigError  an invalid configuration value; thrown by a Runtime's
///                     constructor before anything starts.
///   gmp::UsageError   an API call made where it is not allowed (go() from a
///                     plain thread, Runtime::run() from inside a goroutine);
///                     thrown before anything changed, so nothing is lost.
///   gmp::Panic        what Go reports with a panic: "close of closed channel",
///                     "send on closed channel", "sync: negative WaitGroup
///                     counter". Catch it inside the goroutine to recover.
///   gmp::Goexit       not an error: how the runtime unwinds a goroutine that
///                     it ends when main returns (Go's runtime.Goexit).
///
/// An exception that escapes a goroutine ends the program like an unrecovered
/// panic in Go (see die_of_panic); errors the program cannot survive end it
/// with gmp::fatal (common/check.h). docs/errors.md lists every message.
/// ```
#pragma once

#include <cstdint>
#include <exception>
#include <stdexcept>

namespace gmp {

/// A Go panic raised by the runtime for a misuse of a Go object, with Go's
/// message (for example "close of closed channel"). The object is left
/// unchanged.
class Panic : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An API call made from a place where it is not allowed. Thrown before the
/// call changed anything. The message says what was called, from where, and
/// what to do instead.
class UsageError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// An invalid configuration value. The message names the field, the value
/// given and the accepted range.
class ConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Thrown by a blocking call (channel operation, WaitGroup::wait,
/// Mutex::lock, sleep_for) when the runtime ends the goroutine because main
/// has returned. It runs the goroutine's destructors as Go's runtime.Goexit
/// runs its deferred calls. It is deliberately not a std::exception: a
/// `catch (const std::exception&)` does not swallow it, and a `catch (...)`
/// must rethrow it (if it does not, the next blocking call throws again).
struct Goexit final {};

/// Ends the program for exception `e` that escaped goroutine `goid`, the way
/// Go reports an unrecovered panic:
///
///     panic: <what()>            (prefixed by the exception's type unless
///                                 it is a gmp::Panic)
///
///     goroutine <goid> [running]:
///
/// (or, if given, `goroutines`: the green-thread stages' dump of every
/// goroutine, the panicking one first) and exits with status 2. Called by
/// the runtimes, on the goroutine's thread.
[[noreturn]] void die_of_panic(std::uint64_t goid, std::exception_ptr e,
                               std::string_view goroutines = {}) noexcept;

}  // namespace gmp
