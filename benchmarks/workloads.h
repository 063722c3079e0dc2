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

#include "common/check.h"
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

/// The skynet benchmark: a 10-ary tree of goroutines, n leaves (a power of
/// 10; 1,000,000 in the original, so 1,111,111 goroutines), each leaf
/// sending its number up an unbuffered channel, each inner node summing
/// its children's. Measures spawning, parking and hand-offs at scale.
/// Needs green threads: on stage 1 every waiting node would be a thread.
struct Skynet {
  static constexpr const char* kName = "skynet";
  static constexpr int kMaxBlocked = 0;  // not run where that matters
  static constexpr bool kGreenThreadsOnly = true;
  template <StageApi Api>
  static void run(int n) {
    long p = 1;
    while (p < n) p *= 10;
    GMP_CHECK(p == n, "skynet: the number of leaves must be a power of 10");
    typename Api::template Chan<long> out;
    Api::go([&out, n] { node<Api>(out, 0, n); });
    long sum = *out.recv();
    GMP_CHECK(sum == static_cast<long>(n) * (n - 1) / 2, "skynet: wrong sum");
  }

 private:
  template <StageApi Api>
  static void node(typename Api::template Chan<long>& out, long num,
                   long size) {
    if (size == 1) {
      out.send(num);
      return;
    }
    typename Api::template Chan<long> children;  // lives until all sent
    for (long i = 0; i < 10; ++i) {
      long sub = num + i * (size / 10);
      Api::go([&children, sub, size] { node<Api>(children, sub, size / 10); });
    }
    long sum = 0;
    for (int i = 0; i < 10; ++i) sum += *children.recv();
    out.send(sum);
  }
};

/// Whether workload W can run on stage Api (skynet needs green threads).
template <class W, StageApi Api>
constexpr bool runs_on() {
  if constexpr (requires { W::kGreenThreadsOnly; }) {
    return !Api::kBlockingHoldsThread;
  } else {
    return true;
  }
}

}  // namespace gmp::bench
