#include "stage2_global_queue/g.h"

#include <time.h>

#include <chrono>
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
  switch (s) {
    case GStatus::kIdle: return "idle";
    case GStatus::kRunnable: return "runnable";
    case GStatus::kRunning: return "running";
    case GStatus::kSyscall: return "syscall";
    case GStatus::kWaiting: return "waiting";
    case GStatus::kDead: return "dead";
  }
  return "unknown";
}

std::string deadlock_report(std::vector<const G*> waiting) {
  return "all goroutines are asleep - deadlock!\n\n" +
         goroutine_dump(std::move(waiting));
}

}  // namespace gmp::stage2
