/// \file
/// Fatal errors and invariant checks shared by every stage.
///
/// ```unparsed
/// Go's runtime has two ways to die: `throw` for a broken runtime invariant
/// and `fatal` for a user error the program cannot survive (a deadlock, an
/// unlock of an unlocked mutex). Both print "fatal error: ..." and exit with
/// status 2. The course keeps that behaviour and that exit status, so a
/// student who knows Go recognises the failure at once.
/// ```
#pragma once

#include <string_view>

namespace gmp {

/// Ends the program like Go's runtime `fatal`: flushes stdout, prints
/// `fatal error: <message>` (and a newline) to stderr, exits with status 2.
///
/// For errors that cannot be reported by an exception: inside noexcept code,
/// or when the program can no longer make progress (a deadlock).
/// May be called from any thread, with any lock held; never returns.
[[noreturn]] void fatal(std::string_view message) noexcept;

namespace detail {
/// Makes the calling thread the one that ends the program. The first
/// caller returns at once, and so does that thread again (a report may
/// fail on its way and call fatal); any other thread never returns from
/// it: it sleeps until the exit. So that several goroutines that panic or
/// fault at once print one report, not interleaved ones (Go's fatalpanic
/// lets one thread print; the others sleep). Async-signal-safe.
void begin_dying() noexcept;

/// Flushes stdout, writes `text` to stderr with write(2) and exits with
/// status 2 (Go's status for fatal errors and unrecovered panics). The one
/// place where the runtimes end the program; only one thread gets to
/// print (begin_dying).
[[noreturn]] void die(std::string_view text) noexcept;

/// The slow path of GMP_CHECK; prints where the invariant broke.
[[noreturn]] void check_failed(const char* function, const char* condition,
                               std::string_view what, const char* file,
                               int line) noexcept;
}  // namespace detail

}  // namespace gmp

/// Checks a runtime invariant in every build, optimised ones included (the
/// checks are cheap, and a broken invariant must fail loudly, like Go's
/// `throw("wakep: negative nmspinning")`). `what` names what broke.
#define GMP_CHECK(cond, what)                                          \
  do {                                                                 \
    if (!(cond)) [[unlikely]] {                                        \
      ::gmp::detail::check_failed(__func__, #cond, (what), __FILE__,   \
                                  __LINE__);                           \
    }                                                                  \
  } while (0)
