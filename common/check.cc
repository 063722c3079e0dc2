#include "common/check.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <string>

namespace gmp {

void fatal(std::string_view message) noexcept {
  std::string text = "fatal error: ";
  text += message;
  text += '\n';
  detail::die(text);
}

namespace detail {

void begin_dying() noexcept {
  // The kernel's thread id of the thread that is ending the program, or 0.
  // seq_cst: one winner, whatever else the threads do.
  static std::atomic<pid_t> dying{0};
  const pid_t self = ::gettid();
  pid_t expected = 0;
  if (dying.compare_exchange_strong(expected, self) || expected == self) {
    return;
  }
  for (;;) ::pause();  // another thread is printing its report: it exits
}

void die(std::string_view text) noexcept {
  begin_dying();
  std::fflush(stdout);  // keep what the program printed before dying
  // write(2) until done: the process ends next, nothing may stay buffered.
  while (!text.empty()) {
    ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.remove_prefix(static_cast<size_t>(n));
  }
  ::_exit(2);  // Go's exit status for fatal errors and unrecovered panics
}

void check_failed(const char* function, const char* condition,
                  std::string_view what, const char* file, int line) noexcept {
  std::string text = std::string(function) + ": " + std::string(what) +
                     " (runtime invariant `" + condition + "` broken at " +
                     file + ":" + std::to_string(line) + ")";
  fatal(text);
}

}  // namespace detail
}  // namespace gmp
