#include "stage2_global_queue/g.h"

#include <time.h>

#include <chrono>
#include <cstddef>
#include <iterator>
#include <string>
#include <vector>

#include "common/check.h"
#include "stage2_global_queue/goroutine_dump.h"

namespace gmp::stage2 {

std::chrono::steady_clock::time_point coarse_now() noexcept {
  // CLOCK_MONOTONIC_COARSE counts from the same origin as CLOCK_MONOTONIC,
  // which libstdc++'s steady_clock reads.
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return std::chrono::steady_clock::time_point(
      std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
}

void bad_gstatus(const G* gp, GStatus seen, GStatus from,
                 GStatus to) noexcept {
  fatal("casgstatus: goroutine " + std::to_string(gp->goid) + " is " +
        std::string(to_string(seen)) + ", expected " +
        std::string(to_string(from)) + " (to make it " +
        std::string(to_string(to)) + ")");
}

std::string_view to_string(GStatus s) noexcept {
  // Go's gStatusStrings, by Go's numbers (5 and 7 are unused in Go 1.19).
  static constexpr std::string_view kNames[] = {
      "idle", "runnable", "running", "syscall", "waiting",
      "",     "dead",     "",        "copystack", "preempted"};
  auto i = static_cast<std::size_t>(s);
  if (i < std::size(kNames) && !kNames[i].empty()) return kNames[i];
  return "unknown";
}

std::string deadlock_report(std::vector<const G*> waiting, LastP last_p) {
  return "all goroutines are asleep - deadlock!\n\n" +
         goroutine_dump(std::move(waiting), nullptr, last_p);
}

}  // namespace gmp::stage2
