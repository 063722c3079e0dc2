// Protocol 5 of runtime.h: deadlock and pool-starvation detection (Go's
// checkdead), and the report that names every goroutine.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "common/check.h"
#include "stage1_threadpool/runtime.h"
#include "stage1_threadpool/worker.h"

namespace gmp::stage1 {
namespace {

constexpr std::size_t kMaxQueuedListed = 20;  // keep reports readable

std::string describe_worker(const Worker& w,
                            std::chrono::steady_clock::time_point now) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  auto waited = duration_cast<milliseconds>(now - w.wait_since).count();
  return "goroutine " + std::to_string(w.goid) + " [" +
         std::string(to_string(w.wait_reason)) + "]: on worker " +
         std::to_string(w.id) + ", waiting " + std::to_string(waited) +
         " ms\n";
}

// "1 goroutine waits", "3 goroutines wait".
std::string goroutines_wait(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " goroutine waits" : " goroutines wait");
}

}  // namespace

// Called with mu_ held whenever a worker blocks or goes idle. Returns
// unless no goroutine can ever run again, in which case the program ends.
void Runtime::checkdead() {
  if (state_ != State::kRunning || main_done_) return;
  int running = config_.procs - nidle_ - nblocked_;  // sleepers included
  if (running > 0) return;
  if (!queue_.empty() && nidle_ > 0) return;  // an idle worker will start one
  // A timer will fire, or is firing: it may wake someone (protocol 6).
  if (!timers_.empty() || timers_firing_) return;

  std::string report;
  if (queue_.empty()) {
    report = "all goroutines are asleep - deadlock!\n\n";
  } else {
    report = "thread pool starvation - deadlock!\nAll " +
             std::to_string(config_.procs) + " workers are blocked, and " +
             goroutines_wait(queue_.size()) +
             " in the queue for a free worker.\n"
             "In stage 1 a blocked goroutine keeps its OS thread, so the "
             "queued goroutines\n(which may be the ones that would unblock "
             "the others) can never run. Raise\nConfig.procs, or see stage 2, "
             "where a blocked goroutine gives its thread back.\n\n";
  }
  std::vector<const Worker*> parked;  // listed by goroutine id, as Go does
  for (const auto& w : workers_) {
    if (w->parked != nullptr) parked.push_back(w.get());
  }
  std::sort(parked.begin(), parked.end(),
            [](const Worker* a, const Worker* b) { return a->goid < b->goid; });
  auto now = std::chrono::steady_clock::now();
  for (const Worker* w : parked) report += describe_worker(*w, now);
  std::size_t listed = 0;
  for (const Task& t : queue_) {
    if (listed++ == kMaxQueuedListed) {
      report += "... and " +
                std::to_string(queue_.size() - kMaxQueuedListed) +
                " more runnable goroutines\n";
      break;
    }
    report += "goroutine " + std::to_string(t.goid) +
              " [runnable]: queued, never started\n";
  }
  fatal(report);
}

}  // namespace gmp::stage1
