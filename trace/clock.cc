// The trace's clock (clock.h): which counter, and its rate.
#include "trace/clock.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

namespace gmp::trace {
namespace {

// Whether this machine's cycle counter can stamp events (clock.h). Read
// once per process.
bool cycle_counter_usable() {
#if defined(__x86_64__)
  static const bool usable = [] {
    int fd = ::open(
        "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char source[16] = {};
    ssize_t n = ::read(fd, source, sizeof source - 1);
    ::close(fd);
    return n >= 3 && std::strncmp(source, "tsc", 3) == 0 &&
           (source[3] == '\n' || source[3] == '\0');
  }();
  return usable;
#elif defined(__aarch64__)
  return true;
#else
  return false;
#endif
}

}  // namespace

Clock::Clock() noexcept
    : cycles_(cycle_counter_usable()), origin_(raw()), origin_ns_(steady_ns()) {}

std::int64_t Clock::steady_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double Clock::ns_per_tick() const noexcept {
  if (!cycles_) return 1.0;
  const std::int64_t ticks = raw() - origin_;
  const std::int64_t ns = steady_ns() - origin_ns_;
  // A run too short to measure: a guess that keeps the order and the
  // magnitude (counters tick at about 1 to 4 GHz).
  if (ticks <= 0 || ns <= 0) return 0.5;
  return static_cast<double>(ns) / static_cast<double>(ticks);
}

}  // namespace gmp::trace
