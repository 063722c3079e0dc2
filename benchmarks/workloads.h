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
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <vector>

#include "common/check.h"
#include "common/context.h"
#include "common/select.h"
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
  /// Warmed up as the Go reference is (stages_bench.cc, warm_up): a run
  /// takes about half a second, so Google Benchmark times one or two, and
  /// the first run of a fresh runtime maps its stacks (what cold skynet
  /// measures).
  static constexpr bool kWarmUp = true;
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

/// kProducers goroutines each send n / kProducers values on a channel of
/// their own; main takes all n with one select over the four channels (Go:
/// `select { case v := <-c0: ... case v := <-c3: }`). Measures selectgo:
/// the random poll order, the four channel locks in address order, and a
/// parked select's four sudogs (one per case) when nothing is ready.
struct SelectFanIn {
  static constexpr const char* kName = "select fan-in";
  static constexpr int kProducers = 4;
  static constexpr int kMaxBlocked = kProducers + 1;  // producers, main
  static std::uint64_t goroutines(int) { return kProducers; }
  template <StageApi Api>
  static void run(int n) {
    using Chan = typename Api::template Chan<int>;
    Chan c0, c1, c2, c3;
    Chan* cs[kProducers] = {&c0, &c1, &c2, &c3};
    const int each = n / kProducers;
    for (Chan* c : cs) {
      Api::go([c, each] {
        for (int i = 0; i < each; ++i) c->send(i);
      });
    }
    std::optional<int> v;
    long sum = 0;
    for (int i = 0; i < each * kProducers; ++i) {
      gmp::select(recv_case(c0, v), recv_case(c1, v), recv_case(c2, v),
                  recv_case(c3, v));
      sum += *v;
    }
    GMP_CHECK(sum == static_cast<long>(kProducers) * each * (each - 1) / 2,
              "select fan-in: wrong sum");
  }
};

/// n round trips, as chan ping-pong, where every operation is a select of
/// two cases, the second on a channel that never fires (Go: `select {
/// case ping <- i: case <-stop: }`, and so on): four selects per round
/// trip. Measures select's cost over a plain channel operation.
struct SelectPingPong {
  static constexpr const char* kName = "select ping-pong";
  static constexpr int kMaxBlocked = 2;  // the partner, and main at the end
  static std::uint64_t goroutines(int) { return 1; }
  template <StageApi Api>
  static void run(int n) {
    typename Api::template Chan<int> ping, pong, stop;
    typename Api::WaitGroup done;
    done.add(1);
    Api::go([&] {
      std::optional<int> v;
      for (;;) {
        if (gmp::select(recv_case(ping, v), recv_case(stop)) != 0 || !v) break;
        gmp::select(send_case(pong, *v + 1), recv_case(stop));
      }
      done.done();
    });
    std::optional<int> r;
    for (int i = 0; i < n; ++i) {
      gmp::select(send_case(ping, i), recv_case(stop));
      gmp::select(recv_case(pong, r), recv_case(stop));
    }
    ping.close();
    done.wait();
  }
};

/// n / kRounds goroutines (100,000 in the suite), each sleeping 1 ms
/// kRounds times (Go: `for r := 0; r < 10; r++ { time.Sleep(time.Millisecond) }`):
/// n timers set and fired in all, 100,000 of them pending at once. Stage 2
/// takes its one sched lock for every sleep and every firing (lock/op);
/// stage 3's goroutines set them on their own P's heap, under that P's lock
/// (timer_lock/op, contended%), and idle Ms fire other Ps' timers
/// (timers_stolen/op). Needs green threads: on stage 1 a sleeper holds
/// its thread.
struct TimerLoops {
  static constexpr const char* kName = "timers 100k x 1ms";
  static constexpr int kRounds = 10;
  static constexpr int kMaxBlocked = 0;  // not run where that matters
  /// The suite runs it untimed first, until a run maps no new stack
  /// (stages_bench.cc, warm_up): a fresh runtime's first run spends most
  /// of its time faulting in 100,000 new stacks (what issue 22's cold
  /// benchmarks measure), not in timers, and at 4 procs its second run
  /// still maps some 20,000 more (more sleepers overlap once the spawner
  /// is no longer slowed by faults).
  static constexpr bool kWarmUp = true;
  static constexpr bool kGreenThreadsOnly = true;
  static std::uint64_t goroutines(int n) {
    return static_cast<std::uint64_t>(n / kRounds);
  }
  template <StageApi Api>
  static void run(int n) {
    const int sleepers = n / kRounds;
    typename Api::WaitGroup wg;
    wg.add(sleepers);
    for (int i = 0; i < sleepers; ++i) {
      Api::go([&wg] {
        for (int r = 0; r < kRounds; ++r) {
          Api::sleep_for(std::chrono::milliseconds(1));
        }
        wg.done();
      });
    }
    wg.wait();
  }
};

/// kChurners goroutines together set and stop n timers that never fire
/// (Go: `t := time.AfterFunc(time.Hour, f); t.Stop()`, what every
/// context.WithTimeout and cancel does): a timer into the heap and out
/// again, from every P at once. Stage 2: two sched-lock acquisitions per
/// timer, contended; stage 3: the setter's own P's lock.
struct TimerChurn {
  static constexpr const char* kName = "timer set/stop churn";
  static constexpr int kChurners = 8;
  static constexpr int kMaxBlocked = 1;  // main in wg.wait()
  static std::uint64_t goroutines(int) { return kChurners; }
  template <StageApi Api>
  static void run(int n) {
    typename Api::WaitGroup wg;
    wg.add(kChurners);
    for (int g = 0; g < kChurners; ++g) {
      Api::go([&wg, n] {
        for (int i = 0; i < n / kChurners; ++i) {
          auto t = Api::Timer::after_func(std::chrono::hours(1), [] {});
          GMP_CHECK(t.stop(), "timer set/stop churn: the timer had fired");
        }
        wg.done();
      });
    }
    wg.wait();
  }
};

/// Go's `defer cancel()` at scale: n children of one context (100,000 in
/// the suite) made with with_cancel and cancelled one by one, then the
/// parent (Go: `_, cancels[i] = context.WithCancel(parent)`, then `for _,
/// c := range cancels { c() }`). Each cancel takes its child out of the
/// parent's children: O(1) in Go (a map) and here (a list linked through
/// the children, common/context.h), where a scan of the siblings would
/// make the whole O(n^2). One goroutine: the figure is the context's own
/// cost, per child.
struct ContextCancelChildren {
  static constexpr const char* kName = "context cancel children";
  static constexpr int kMaxBlocked = 0;  // nothing blocks
  static std::uint64_t goroutines(int) { return 0; }
  template <StageApi Api>
  static void run(int n) {
    using C = typename Api::Context;
    auto [parent, cancel_parent] = C::with_cancel(C::background());
    std::vector<typename C::CancelFunc> cancels;
    cancels.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) cancels.push_back(C::with_cancel(parent).second);
    for (auto& cancel : cancels) cancel();
    cancel_parent();
    GMP_CHECK(parent->err() == ContextErr::kCanceled,
              "context cancel children: the parent was not cancelled");
  }
};

/// A chain of n nested contexts (100,000 in the suite), each the child of
/// the last, cancelled from its root, then dropped from its leaf (Go:
/// `ctx, _ = context.WithCancel(ctx)` n times, `cancel()`, `<-ctx.Done()`).
/// Neither the cancel nor the release recurses (common/context.h), so no
/// chain is too deep for a goroutine's stack. Per context.
struct ContextDeepChain {
  static constexpr const char* kName = "context deep chain";
  static constexpr int kMaxBlocked = 0;  // nothing blocks
  static std::uint64_t goroutines(int) { return 0; }
  template <StageApi Api>
  static void run(int n) {
    using C = typename Api::Context;
    auto [root, cancel] = C::with_cancel(C::background());
    typename C::Ptr ctx = root;
    for (int i = 0; i < n; ++i) ctx = C::with_cancel(ctx).first;
    cancel();
    GMP_CHECK(!ctx->done()->recv().has_value(),  // closed: does not wait
              "context deep chain: the leaf was not cancelled");
    ctx.reset();  // with root's last references below, the chain goes
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
  /// Timed warm, as the Go reference times it (a warm-up run, then runs
  /// that reuse its goroutines and stacks): the suite runs it untimed
  /// until a run maps no new stack (stages_bench.cc, warm_up). The first
  /// of those runs is the one that measures rss_bytes/goroutine; what
  /// fresh stacks cost in time is what the cold benchmarks measure.
  static constexpr bool kWarmUp = true;
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
