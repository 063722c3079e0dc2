// Protocol 5 of runtime.h: deadlock detection (Go's checkdead) and its
// report, listing every waiting goroutine as Go does.
#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"
#include "stage2_global_queue/runtime.h"

namespace gmp::stage2 {

// Called with sched_ held whenever an M goes idle. Returns unless no
// goroutine can ever run again, in which case the program ends.
void Runtime::checkdead() {
  if (!running_ || main_done_ || live_ == 0) return;
  // An M is running a goroutine (one waiting for its locked goroutine is
  // idle: Go's nmidlelocked).
  if (nmidle_ + nmidlelocked_ < mcount_) return;
  if (!timers_.empty() || grq_size_ > 0) return;  // a sleeper will wake

  std::vector<const G*> waiting;  // listed by goroutine id, as Go does
  for (const auto& g : allgs_) {
    if (g->readgstatus() == GStatus::kWaiting) waiting.push_back(g.get());
  }
  fatal(deadlock_report(std::move(waiting)));
}

}  // namespace gmp::stage2
