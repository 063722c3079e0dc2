// Workloads written once and run on every stage (template parameter: a
// stage's Api, see common/stage_api.h). The Google Benchmark suite
// (stages_bench.cc) and the tour's comparison (compare.cc) both use them,
// so the two always measure the same thing.
//
// Each workload runs inside a goroutine (normally main) and reports how
// many goroutines it keeps blocked at once (kMaxBlocked), so that stage 1
// gets a pool large enough not to starve (gmp::procs_for).
#pragma once

#include <optional>

#include "common/stage_api.h"

namespace gmp::bench {

/// Go: `for i := 0; i < n; i++ { wg.Add(1); go func() { wg.Done() }() };
/// wg.Wait()`. Measures creating, scheduling and ending a goroutine.
struct SpawnJoin {
  static constexpr const char* kName = "spawn+join";
  static constexpr int kMaxBlocked = 1;  // main in wg.wait()
  template <StageApi Api>
  static void run(int n) {
    typename Api::WaitGroup wg;
    wg.add(n);
    for (int i = 0; i < n; ++i) Api::go([&wg] { wg.done(); });
    wg.wait();
  }
};

/// Two goroutines yielding n times in all (Go: runtime.Gosched()). On
/// stages 2+ each yield goes through the run queue and switches goroutine.
struct YieldPing {
  static constexpr const char* kName = "yield";
  static constexpr int kMaxBlocked = 1;  // main in wg.wait()
  template <StageApi Api>
  static void run(int n) {
    typename Api::WaitGroup wg;
    wg.add(2);
    for (int g = 0; g < 2; ++g) {
      Api::go([&wg, n] {
        for (int i = 0; i < n / 2; ++i) Api::yield();
        wg.done();
      });
    }
    wg.wait();
  }
};

/// n round trips of a value between two goroutines over two unbuffered
/// channels. Measures one goroutine waking another: the cost of a switch.
struct ChanPingPong {
  static constexpr const char* kName = "chan ping-pong";
  static constexpr int kMaxBlocked = 2;  // the partner, and main at the end
  template <StageApi Api>
  static void run(int n) {
    typename Api::template Chan<int> ping, pong;
    typename Api::WaitGroup done;
    done.add(1);
    Api::go([&] {
      while (std::optional<int> v = ping.recv()) pong.send(*v + 1);
      done.done();
    });
    for (int i = 0; i < n; ++i) {
      ping.send(i);
      (void)pong.recv();
    }
    ping.close();
    done.wait();
  }
};

/// n items fanned out over a buffered channel to kWorkers goroutines, their
/// results fanned back in over another. Measures a typical worker pool.
struct FanOutIn {
  static constexpr const char* kName = "fan-out/fan-in";
  static constexpr int kWorkers = 4;
  static constexpr int kMaxBlocked = kWorkers + 2;  // + feeder, main
  template <StageApi Api>
  static void run(int n) {
    typename Api::template Chan<int> jobs(64), results(64);
    typename Api::WaitGroup workers;
    workers.add(kWorkers);
    for (int w = 0; w < kWorkers; ++w) {
      Api::go([&] {
        while (std::optional<int> j = jobs.recv()) results.send(*j * 2);
        workers.done();
      });
    }
    Api::go([&] {
      for (int i = 0; i < n; ++i) jobs.send(i);
      jobs.close();
    });
    long sum = 0;
    for (int i = 0; i < n; ++i) sum += *results.recv();
    workers.wait();
    (void)sum;
  }
};

}  // namespace gmp::bench
