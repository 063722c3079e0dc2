/// \file
/// Note 003's (docs/course/notes.md) anti-pattern "too many goroutines" next to
/// its cure. Both functions sum f(i) over i in [0, n): one starts a goroutine
/// per item, the other hands the items to GOMAXPROCS workers. Goroutines are
/// cheap, not free: each costs a G, a trip through the run queues and, while it
/// runs, a stack (the course maps at least one page per goroutine, Go
/// 2 KiB; on stage 2 a queued goroutine holds its stack from its go(), from
/// stage 3 it gets one at its first run), and a million runnable goroutines
/// do not run any faster on 2 Ps than 2 workers do.
/// `bazel run //examples/patterns:demo` measures both.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "common/stage_api.h"

namespace gmp::patterns {

/// The anti-pattern: `for i := 0; i < n; i++ { go process(i) }`. Starts
/// n goroutines, all of which may be alive at once. Call from a goroutine.
template <StageApi A, class F>
std::int64_t sum_spawn_per_item(std::int64_t n, F f) {
  // [spawn per item]
  std::atomic<std::int64_t> sum{0};  // relaxed: wg.wait() orders the reads
  typename A::WaitGroup wg;
  wg.add(n);
  for (std::int64_t i = 0; i < n; ++i) {
    A::go([&, i] {
      sum.fetch_add(f(i), std::memory_order_relaxed);
      wg.done();
    });
  }
  wg.wait();
  // [spawn per item]
  return sum.load(std::memory_order_relaxed);
}

/// The cure: `workers` goroutines take the items from a buffered channel
/// (the notes: `jobs := make(chan int, 100)` and GOMAXPROCS workers).
/// Starts exactly `workers` goroutines. Throws std::invalid_argument if
/// `workers` is below 1. Call from a goroutine.
template <StageApi A, class F>
std::int64_t sum_with_workers(std::int64_t n, int workers, F f) {
  if (workers < 1) {
    throw std::invalid_argument("sum_with_workers: workers must be at least "
                                "1, got " + std::to_string(workers));
  }
  // [sum with workers]
  typename A::template Chan<std::int64_t> jobs(100);
  std::atomic<std::int64_t> sum{0};  // relaxed: wg.wait() orders the reads
  typename A::WaitGroup wg;
  wg.add(workers);
  for (int w = 0; w < workers; ++w) {
    A::go([&] {
      std::int64_t local = 0;
      while (std::optional<std::int64_t> i = jobs.recv()) local += f(*i);
      sum.fetch_add(local, std::memory_order_relaxed);
      wg.done();
    });
  }
  for (std::int64_t i = 0; i < n; ++i) jobs.send(i);  // parks when full
  jobs.close();
  wg.wait();
  // [sum with workers]
  return sum.load(std::memory_order_relaxed);
}

}  // namespace gmp::patterns
