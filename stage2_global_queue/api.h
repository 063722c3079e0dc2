/// \file
/// Stage 2 as one type, for code written once for every stage (see
/// common/stage_api.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>

#include "common/stage_api.h"
#include "stage2_global_queue/runtime.h"

namespace gmp::stage2 {

/// Stage 2's runtime, objects and free functions gathered in one type.
struct Api {
  /// The stage's name, for tables and test names.
  static constexpr std::string_view kName = "stage2_global_queue";
  /// A blocked goroutine parks and gives its M back.
  static constexpr bool kBlockingHoldsThread = false;

  using Config = stage2::Config;    ///< see stage2::Config
  using Runtime = stage2::Runtime;  ///< see stage2::Runtime
  using Stats = stage2::Stats;      ///< see stage2::Stats
  template <class T>
  using Chan = stage2::Chan<T>;         ///< see gmp::BasicChan
  using Mutex = stage2::Mutex;          ///< see gmp::BasicMutex
  using WaitGroup = stage2::WaitGroup;  ///< see gmp::BasicWaitGroup
  using Timer = stage2::Timer;  ///< see gmp::BasicTimer (also Go's Ticker)
  using Context = stage2::Context;  ///< see gmp::BasicContext

  /// stage2::go
  template <class F>
  static void go(F&& fn) {
    stage2::go(std::forward<F>(fn));
  }
  /// stage2::yield
  static void yield() { stage2::yield(); }
  /// stage2::num_goroutine
  static int num_goroutine() { return stage2::num_goroutine(); }
  /// stage2::lock_os_thread (Go's runtime.LockOSThread)
  static void lock_os_thread() { stage2::lock_os_thread(); }
  /// stage2::unlock_os_thread (Go's runtime.UnlockOSThread)
  static void unlock_os_thread() { stage2::unlock_os_thread(); }
  /// stage2::lock_os_count (Go's export_test LockOSCounts, its first value)
  static std::uint32_t lock_os_count() { return stage2::lock_os_count(); }
  /// stage2::block (Go's `select {}`)
  [[noreturn]] static void block() { stage2::block(); }
  /// stage2::sleep_for
  static void sleep_for(std::chrono::nanoseconds d) { stage2::sleep_for(d); }
};

static_assert(StageApi<Api>);

}  // namespace gmp::stage2
