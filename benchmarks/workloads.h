// Workloads written once and run on every stage (template parameter: a
// stage's Api, see common/stage_api.h). The Google Benchmark suite
// (stages_bench.cc) and the tour's comparison (compare.cc) both use them,
// so the two always measure the same thing.
//
// Each workload runs inside a goroutine (normally main) and reports how
// many goroutines it keeps blocked at once (kMaxBlocked), so that stage 1
// gets a pool large enough not to starve (gmp::procs_for).
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>

#include "common/check.h"
#include "common/stage_api.h"

namespace gmp::bench {

/// Go: `for i := 0; i < n; i++ { wg.Add(1); go func() { wg.Done() }() };
/// wg.Wait()`. Measures creating, scheduling and ending a goroutine.
struct SpawnJoin {
  static constexpr const char* kName = "spawn+join";
  static constexpr int kMaxBlocked = 1;  // main in wg.wait()
  /// Goroutines a run of n items creates besides main (for the tests).
  static std::uint64_t goroutines(int n) { return static_cast<std::uint64_t>(n); }
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
  static std::uint64_t goroutines(int) { return 2; }
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

/// n round trips of a value between two goroutines over two channels of
/// capacity kCap: unbuffered (0), each send waits for its receiver; or
/// buffered (1), the send completes at once and only the receive waits.
/// Measures one goroutine waking another: the cost of a switch.
template <int kCap>
struct BasicChanPingPong {
  static constexpr const char* kName =
      kCap == 0 ? "chan ping-pong" : "chan ping-pong (buffered)";
  static constexpr int kMaxBlocked = 2;  // the partner, and main at the end
  static std::uint64_t goroutines(int) { return 1; }
  template <StageApi Api>
  static void run(int n) {
    typename Api::template Chan<int> ping(kCap), pong(kCap);
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
using ChanPingPong = BasicChanPingPong<0>;
using ChanPingPongBuffered = BasicChanPingPong<1>;

/// n items fanned out over a buffered channel to kWorkers goroutines, their
/// results fanned back in over another. Measures a typical worker pool.
struct FanOutIn {
  static constexpr const char* kName = "fan-out/fan-in";
  static constexpr int kWorkers = 4;
  static constexpr int kMaxBlocked = kWorkers + 2;  // + feeder, main
  static std::uint64_t goroutines(int) { return kWorkers + 1; }
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
  static std::uint64_t goroutines(int n) {  // every node of the tree
    std::uint64_t nodes = 0;
    for (std::uint64_t level = 1; level <= static_cast<std::uint64_t>(n); level *= 10) {
      nodes += level;
    }
    return nodes;
  }
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

/// `rounds` steps of arithmetic that the compiler cannot drop (100 take
/// about a tenth of a microsecond here).
inline void spin_work(int rounds) {
  std::uint64_t x = static_cast<std::uint64_t>(rounds);
  for (int i = 0; i < rounds; ++i) x = x * 6364136223846793005u + 1442695040888963407u;
  asm volatile("" : : "r"(x));  // x is "used": the loop stays
}

/// One goroutine (main) spawns n goroutines of a little work (100 rounds)
/// each, and waits: every other P's work must come from main's. Stage 2's
/// Ms all take it from the one locked GRQ; stage 3's P keeps it in its
/// local queue (runnext, then 256 slots, then half to the GRQ) and the
/// other Ps steal half at a time. Counters: steals, stolen/op, lock/op.
struct Imbalanced {
  static constexpr const char* kName = "imbalanced spawn";
  static constexpr int kMaxBlocked = 1;  // main in wg.wait()
  static constexpr int kWorkRounds = 100;
  static std::uint64_t goroutines(int n) { return static_cast<std::uint64_t>(n); }
  template <StageApi Api>
  static void run(int n) {
    typename Api::WaitGroup wg;
    wg.add(n);
    for (int i = 0; i < n; ++i) {
      Api::go([&wg] {
        spin_work(kWorkRounds);
        wg.done();
      });
    }
    wg.wait();
  }
};

/// kSpawners goroutines (at least one per P up to 8 Ps) each spawn n /
/// kSpawners empty goroutines at once: every P creates and schedules at the
/// same time. Stage 2 funnels all of it through its one GRQ lock (see
/// contended% and lockwait_ns/op); stage 3's Ps work on their own queues.
struct SpawnStorm {
  static constexpr const char* kName = "spawn storm";
  static constexpr int kSpawners = 8;
  static constexpr int kMaxBlocked = kSpawners + 1;  // spawners, main
  static std::uint64_t goroutines(int n) {
    return kSpawners + static_cast<std::uint64_t>(n / kSpawners * kSpawners);
  }
  template <StageApi Api>
  static void run(int n) {
    typename Api::WaitGroup all;
    all.add(kSpawners);
    for (int s = 0; s < kSpawners; ++s) {
      Api::go([&all, n] {
        typename Api::WaitGroup mine;
        mine.add(n / kSpawners);
        for (int i = 0; i < n / kSpawners; ++i) Api::go([&mine] { mine.done(); });
        mine.wait();
        all.done();
      });
    }
    all.wait();
  }
};

/// The process's resident memory, in bytes (/proc/self/statm).
inline std::size_t rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0, resident = 0;
  int got = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return got == 2 ? resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE)) : 0;
}

/// n goroutines (100,000 in the suite) all blocked at once on one channel,
/// then released by closing it. Measures what a parked goroutine costs:
/// time to create, park and wake, and memory (rss_bytes/goroutine: the
/// resident memory they added, measured while all are parked; Go's are
/// about 2-4 KiB). Needs green threads.
struct Parked {
  static constexpr const char* kName = "parked goroutines";
  static constexpr int kMaxBlocked = 0;  // not run where that matters
  static constexpr bool kGreenThreadsOnly = true;
  static std::uint64_t goroutines(int n) { return static_cast<std::uint64_t>(n); }
  /// Resident bytes per parked goroutine: the largest of the runs since
  /// the last reset. Only a run on fresh memory sees the stacks' pages
  /// arrive (later runs of the same runtime reuse dead goroutines' stacks,
  /// already resident), so the suite resets it for each new runtime.
  static inline std::atomic<double> max_rss_per_goroutine{0};
  template <StageApi Api>
  static void run(int n) {
    typename Api::template Chan<int> gate;
    typename Api::WaitGroup started, finished;
    started.add(n);
    finished.add(n);
    std::size_t before = rss_bytes();
    for (int i = 0; i < n; ++i) {
      Api::go([&] {
        started.done();
        (void)gate.recv();  // parks until the close
        finished.done();
      });
    }
    started.wait();
    std::size_t during = rss_bytes();
    double per = during > before ? static_cast<double>(during - before) / n : 0.0;
    if (per > max_rss_per_goroutine.load()) max_rss_per_goroutine.store(per);
    gate.close();
    finished.wait();
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
