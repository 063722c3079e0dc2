/// \file
/// Stage 1 as one type, for code written once for every stage (the shared
/// API tests in testing/, the workloads in benchmarks/).
#pragma once

#include <chrono>
#include <functional>
#include <string_view>
#include <utility>

#include "common/stage_api.h"
#include "stage1_threadpool/runtime.h"

namespace gmp::stage1 {

/// Stage 1's runtime, objects and free functions gathered in one type, so
/// that a template can take "a stage" as its parameter. Every stage has an
/// Api with the same members.
struct Api {
  /// The stage's name, for tables and test names.
  static constexpr std::string_view kName = "stage1_threadpool";
  /// True when a blocked goroutine keeps its OS thread (stage 1 only): code
  /// that blocks k goroutines at once needs procs > k on such a stage.
  static constexpr bool kBlockingHoldsThread = true;

  using Config = stage1::Config;    ///< see stage1::Config
  using Runtime = stage1::Runtime;  ///< see stage1::Runtime
  using Stats = stage1::Stats;      ///< see stage1::Stats
  template <class T>
  using Chan = stage1::Chan<T>;        ///< see gmp::BasicChan
  using Mutex = stage1::Mutex;         ///< see gmp::BasicMutex
  using WaitGroup = stage1::WaitGroup;  ///< see gmp::BasicWaitGroup
  using Timer = stage1::Timer;  ///< see gmp::BasicTimer (also Go's Ticker)
  using Context = stage1::Context;  ///< see gmp::BasicContext

  /// stage1::go
  template <class F>
  static void go(F&& fn) {
    stage1::go(std::forward<F>(fn));
  }
  /// stage1::yield
  static void yield() { stage1::yield(); }
  /// stage1::num_goroutine
  static int num_goroutine() { return stage1::num_goroutine(); }
  /// stage1::block (Go's `select {}`)
  [[noreturn]] static void block() { stage1::block(); }
  /// stage1::sleep_for
  static void sleep_for(std::chrono::nanoseconds d) { stage1::sleep_for(d); }
};

static_assert(StageApi<Api>);

}  // namespace gmp::stage1
