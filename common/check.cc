#include "common/check.h"

#include <unistd.h>

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

void die(std::string_view text) noexcept {
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
