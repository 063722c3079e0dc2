// Stage 5: stall reports (opt-in, Config::stall_threshold). Go has no such
// report; its execution tracer and `GODEBUG=schedtrace` show the same
// facts. sysmon already watches every P's slice and every call, so it can
// say which goroutine keeps a P, or a thread, for too long.
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "stage5_preemption/runtime.h"

namespace gmp::stage5 {

namespace {
std::string ms(std::chrono::steady_clock::duration d) {
  return std::to_string(
      std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}
}  // namespace

// On sysmon, after retake (whose P snapshot, with the goroutine each P's
// M ran, and ticks it reads). Each stall is reported once: a slice by its
// schedtick, a call by its entry. Durations count from sysmon's first
// sight of the slice or call, so they are lower bounds.
void Runtime::report_stalls(Clock::time_point now) {
  std::vector<std::string> lines;
  for (const auto& [pp, goid] : sysmon_ps_) {
    Tick& t = ticks_[static_cast<std::size_t>(pp->id)];
    if (goid == 0 ||  // the M is between goroutines, or there is none
        pp->status.load(std::memory_order_relaxed) != PStatus::kRunning ||
        t.stall_reported || t.since == Clock::time_point{} ||
        now - t.since < stall_threshold_) {
      continue;
    }
    int mid = pp->m_id.load(std::memory_order_relaxed);
    if (mid < 0) continue;  // its M let it go since retake looked
    t.stall_reported = true;
    lines.push_back("goroutine " + std::to_string(goid) + " has run for " +
                    ms(now - t.since) + " ms without yielding (P" +
                    std::to_string(pp->id) + ", M" + std::to_string(mid) +
                    ")");
  }
  {
    std::lock_guard lk(in_calls_mu_);
    for (auto& [m, call] : in_calls_) {
      if (call.reported || now - call.since < stall_threshold_) continue;
      call.reported = true;
      lines.push_back("goroutine " + std::to_string(call.goid) +
                      " has been in one blocking call for " +
                      ms(now - call.since) + " ms (M" +
                      std::to_string(m->id) + ")");
    }
  }
  for (const std::string& line : lines) stall(line);
}

void Runtime::stall(const std::string& what) {
  stalls_reported_.fetch_add(1, std::memory_order_relaxed);
  if (stall_sink_) {
    stall_sink_(what);
  } else {
    std::fprintf(stderr, "gmp: sysmon: %s\n", what.c_str());
  }
}

}  // namespace gmp::stage5
