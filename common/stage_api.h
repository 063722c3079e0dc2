/// \file
/// What "a stage" is to code written once for every stage (the shared API
/// tests in testing/, the workloads in benchmarks/): the StageApi concept,
/// met by each stage's Api type (for example gmp::stage1::Api in
/// stage1_threadpool/api.h).
#pragma once

#include <algorithm>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>

/// The course: what every stage shares (common/) is in `gmp` itself; each
/// stage is a namespace of its own (gmp::stage1 ... gmp::stage5).
namespace gmp {

/// The members every stage's Api type has: its runtime, configuration and
/// statistics types, Go's objects, and Go's free functions.
template <class A>
concept StageApi = requires(typename A::Config cfg, typename A::Runtime& rt,
                            typename A::template Chan<int>& ch,
                            typename A::WaitGroup& wg, typename A::Mutex& mu,
                            std::function<void()> fn) {
  { A::kName } -> std::convertible_to<std::string_view>;
  { A::kBlockingHoldsThread } -> std::convertible_to<bool>;
  cfg.procs = 1;  // how many goroutines may run at once
  rt.run(fn);
  { rt.stats().goroutines_created } -> std::convertible_to<std::uint64_t>;
  { rt.stats().goroutines_blocked } -> std::convertible_to<std::int64_t>;
  ch.send(1);
  { ch.recv() } -> std::same_as<std::optional<int>>;
  ch.close();
  wg.add(1);
  wg.done();
  wg.wait();
  mu.lock();
  mu.unlock();
  A::go(fn);
  A::yield();
  A::sleep_for(std::chrono::nanoseconds(1));
};

/// How many procs to give a runtime of stage `A` so that code which keeps
/// up to `max_blocked` goroutines blocked at once, besides one running, can
/// run with `procs`. On a stage where a blocked goroutine keeps its thread
/// (stage 1) the pool must be larger than that or it starves (which is
/// stage 1's lesson, demonstrated and tested on its own).
template <StageApi A>
int procs_for(int procs, int max_blocked) {
  if constexpr (A::kBlockingHoldsThread) {
    return std::max(procs, max_blocked + 1);
  } else {
    return procs;
  }
}

/// Runs `main` as the main goroutine of a fresh runtime of stage `A` with
/// `procs` procs, and returns the run's statistics. Any plain thread.
template <StageApi A>
typename A::Stats run_with(int procs, std::function<void()> main) {
  typename A::Config cfg;
  cfg.procs = procs;
  typename A::Runtime rt(cfg);
  rt.run(std::move(main));
  return rt.stats();
}

}  // namespace gmp
