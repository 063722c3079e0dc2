/// \file
/// Stage 3 as one type, for code written once for every stage (see
/// common/stage_api.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>

#include "common/stage_api.h"
#include "stage3_gmp/runtime.h"

namespace gmp::stage3 {

/// Stage 3's runtime, objects and free functions gathered in one type.
struct Api {
  /// The stage's name, for tables and test names.
  static constexpr std::string_view kName = "stage3_gmp";
  /// A blocked goroutine parks and gives its M back.
  static constexpr bool kBlockingHoldsThread = false;

  using Config = stage3::Config;    ///< see stage3::Config
  using Runtime = stage3::Runtime;  ///< see stage3::Runtime
  using Stats = stage3::Stats;      ///< see stage3::Stats
  template <class T>
  using Chan = stage3::Chan<T>;         ///< see gmp::BasicChan
  using Mutex = stage3::Mutex;          ///< see gmp::BasicMutex
  using WaitGroup = stage3::WaitGroup;  ///< see gmp::BasicWaitGroup
  using Timer = stage3::Timer;  ///< see gmp::BasicTimer (also Go's Ticker)
  using Context = stage3::Context;  ///< see gmp::BasicContext

  /// stage3::go
  template <class F>
  static void go(F&& fn) {
    stage3::go(std::forward<F>(fn));
  }
  /// stage3::yield
  static void yield() { stage3::yield(); }
  /// stage3::num_goroutine
  static int num_goroutine() { return stage3::num_goroutine(); }
  /// stage3::block (Go's `select {}`)
  [[noreturn]] static void block() { stage3::block(); }
  /// stage3::sleep_for
  static void sleep_for(std::chrono::nanoseconds d) { stage3::sleep_for(d); }
  /// stage3::lock_os_thread (Go's runtime.LockOSThread)
  static void lock_os_thread() { stage3::lock_os_thread(); }
  /// stage3::unlock_os_thread (Go's runtime.UnlockOSThread)
  static void unlock_os_thread() { stage3::unlock_os_thread(); }
  /// stage3::lock_os_count (Go's export_test LockOSCounts, its first value)
  static std::uint32_t lock_os_count() { return stage3::lock_os_count(); }
  /// Go's runtime.GOMAXPROCS(n): see stage3::gomaxprocs.
  static int gomaxprocs(int n = 0) { return stage3::gomaxprocs(n); }
};

static_assert(StageApi<Api>);

}  // namespace gmp::stage3
