/// \file
/// Note 003's adaptiveGOMAXPROCS (docs/course/notes.md), for the stages with a
/// GOMAXPROCS that changes at run time (3-5):
///
/// ```unparsed
/// func adaptiveGOMAXPROCS(ctx context.Context) {
///     ticker := time.NewTicker(30 * time.Second)
///     defer ticker.Stop()
///     for {
///         select {
///         case <-ctx.Done():
///             return
///         case <-ticker.C:
///             usage := getCurrentCPUUsage()
///             current := runtime.GOMAXPROCS(0)
///             if usage > 90 && current < runtime.NumCPU() {
///                 runtime.GOMAXPROCS(current + 1)
///                 log.Printf("GOMAXPROCS increased to %d", current+1)
///             } else if usage < 30 && current > 1 {
///                 runtime.GOMAXPROCS(current - 1)
///                 log.Printf("GOMAXPROCS decreased to %d", current-1)
///             }
///         }
///     }
/// }
/// ```
///
/// The note's own verdict stands: Go's scheduler adapts already (an idle P
/// costs no CPU), so this is rarely worth it; each change is a stop of the
/// world.
#pragma once

#include <sys/resource.h>

#include <chrono>
#include <functional>
#include <string>

#include "common/select.h"
#include "common/stage_api.h"

namespace gmp::notes {

/// The note's loop: every `period`, `usage()` (percent) moves GOMAXPROCS
/// by one, up to `num_cpu` above 90, down to 1 below 30, and `log` is told.
/// Returns when `ctx` is done. On a goroutine of a stage whose Api has
/// gomaxprocs (3-5).
template <StageApi A>
void adaptive_gomaxprocs(const typename A::Context::Ptr& ctx,
                         std::chrono::nanoseconds period, int num_cpu,
                         const std::function<double()>& usage,
                         const std::function<void(const std::string&)>& log) {
  // [note 003]
  auto ticker = A::Timer::new_ticker(period);  // stopped when it goes
  for (;;) {
    if (select(recv_case(ctx->done()), recv_case(ticker.c())) == 0) return;
    double u = usage();
    int current = A::gomaxprocs(0);
    if (u > 90 && current < num_cpu) {
      A::gomaxprocs(current + 1);
      log("GOMAXPROCS increased to " + std::to_string(current + 1));
    } else if (u < 30 && current > 1) {
      A::gomaxprocs(current - 1);
      log("GOMAXPROCS decreased to " + std::to_string(current - 1));
    }
  }
  // [note 003]
}

/// The note's getCurrentCPUUsage: the process's CPU time (user and
/// system, getrusage) since the last call, as a percentage of what
/// GOMAXPROCS threads running all the time would have used. Spinning Ms
/// count: they use the CPU. One caller at a time.
template <StageApi A>
class CpuUsage {
 public:
  CpuUsage() : cpu_(cpu_now()), wall_(Clock::now()) {}

  /// Percent of GOMAXPROCS busy since the last call (or construction).
  double operator()() {
    Clock::duration cpu = cpu_now(), cpu_used = cpu - cpu_;
    Clock::time_point wall = Clock::now();
    Clock::duration elapsed = wall - wall_;
    cpu_ = cpu;
    wall_ = wall;
    if (elapsed <= Clock::duration::zero()) return 0;
    return 100.0 * static_cast<double>(cpu_used.count()) /
           (static_cast<double>(elapsed.count()) * A::gomaxprocs(0));
  }

 private:
  using Clock = std::chrono::steady_clock;
  static Clock::duration cpu_now() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto tv = [](const timeval& t) {
      return std::chrono::seconds(t.tv_sec) +
             std::chrono::microseconds(t.tv_usec);
    };
    return std::chrono::duration_cast<Clock::duration>(tv(ru.ru_utime) +
                                                       tv(ru.ru_stime));
  }
  Clock::duration cpu_;
  Clock::time_point wall_;
};

}  // namespace gmp::notes
