// Helpers for tests written once for every stage (template parameter Api:
// a stage's Api type, e.g. gmp::stage1::Api).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>

namespace gmp::testing {

/// How many procs a test needs to run with `procs`, when up to
/// `max_blocked` goroutines may be blocked at once besides the one running.
/// On a stage where a blocked goroutine keeps its thread (stage 1) the pool
/// must be larger than that, or it starves (which is stage 1's lesson, and
/// tested on its own).
template <class Api>
int procs_for(int procs, int max_blocked) {
  if constexpr (Api::kBlockingHoldsThread) {
    return std::max(procs, max_blocked + 1);
  } else {
    return procs;
  }
}

/// Runs `main` on a fresh runtime of `procs` procs; returns its stats.
template <class Api>
typename Api::Stats run_with(int procs, const std::function<void()>& main) {
  typename Api::Config cfg;
  cfg.procs = procs;
  typename Api::Runtime rt(cfg);
  rt.run(main);
  return rt.stats();
}

/// From inside a goroutine of `rt`: yields until at least `n` goroutines
/// are parked on runtime objects (so a test knows they really blocked).
template <class Api>
void wait_until_blocked(const typename Api::Runtime& rt, std::int64_t n) {
  while (rt.stats().goroutines_blocked < n) {
    Api::sleep_for(std::chrono::microseconds(20));
  }
}

/// Checks the conservation law of every run: each goroutine created either
/// finished, was unwound at exit, or never started.
template <class Stats>
bool conserved(const Stats& s) {
  return s.goroutines_created ==
         s.goroutines_finished + s.goroutines_exited +
             s.goroutines_never_started;
}

}  // namespace gmp::testing
