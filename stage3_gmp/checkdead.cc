// Stage 3's checkdead (Go's): when the last M goes idle, with no timer
// pending, no goroutine can ever run again. And the sample of the other
// state a broken scheduler is stuck in: work queued, a P idle, nobody
// looking (idle_p_with_queued_work).
#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"
#include "stage3_gmp/runtime.h"

namespace gmp::stage3 {

void Runtime::checkdead() {
  if (!running_ || main_done_ || gcwaiting_.load(std::memory_order_relaxed) ||
      stopping_.load(std::memory_order_relaxed) ||
      live_.load(std::memory_order_relaxed) == 0) {
    return;
  }
  // An M runs, spins, or is being made (one waiting for its locked
  // goroutine is idle: Go's nmidlelocked).
  if (nmidle_ + nmidlelocked_ < mcount_) return;
  if (outside_work_ > 0) return;  // a P or goroutines on their way to an M
  // Sleepers, or (a later stage's) I/O waiters: no deadlock.
  if (any_timers() || idle_duty_wanted()) return;
  // Every M is idle. A runnable goroutine now would be a lost wakeup.
  int procs = gomaxprocs_.load(std::memory_order_relaxed);
  for (int i = 0; i < procs; ++i) {
    GMP_CHECK(allp_[i]->runq.stealer().empty(),
              "runnable goroutines on a P but every M is idle");
  }
  GMP_CHECK(grq_size_.load(std::memory_order_relaxed) == 0,
            "runnable goroutines on the GRQ but every M is idle");

  std::vector<const G*> waiting;  // listed by goroutine id, as Go does
  {
    std::lock_guard gl(allglock_);
    for (const auto& g : allgs_) {
      if (g->readgstatus() == GStatus::kWaiting) waiting.push_back(g.get());
    }
  }
  fatal(stage2::deadlock_report(std::move(waiting), &read_last_p));
}

void Runtime::outside_work_begin() {
  std::lock_guard lk(sched_);
  ++outside_work_;
}

void Runtime::outside_work_end() {
  std::lock_guard lk(sched_);
  --outside_work_;
  checkdead();
}

bool Runtime::idle_p_with_queued_work() const {
  // Loads are seq_cst (the default): a test's sample, not a hot path.
  std::lock_guard lk(sched_);
  if (!running_ || gcwaiting_.load() || stopping_.load() ||
      npidle_.load() == 0 || nmspinning_.load() != 0) {
    return false;
  }
  if (grq_size_.load() > 0) return true;
  for (int i = 0; i < nprocs(); ++i) {
    const P& pp = *allp(i);
    if (pp.status.load() == PStatus::kRunning && !pp.runq.empty()) {
      return true;
    }
  }
  return false;
}

}  // namespace gmp::stage3
