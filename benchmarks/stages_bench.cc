// Google Benchmark suite: every workload of workloads.h on every stage of
// stages.h, at several proc counts, side by side. Run it through
// `./course bench` (optimised build), or directly:
//   bazel run --config=opt //benchmarks:stages_bench -- --benchmark_filter=ping
//
// Names read workload/stage/procs:N. Times are wall-clock (real time): the
// work happens on the runtime's threads, not on the benchmark's.
#include <benchmark/benchmark.h>

#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "benchmarks/cold_bench.h"
#include "benchmarks/context_switch_bench.h"
#include "benchmarks/io_bench.h"
#include "benchmarks/preempt_bench.h"
#include "benchmarks/stages.h"
#include "benchmarks/trace_bench.h"

namespace gmp::bench {
namespace {

constexpr int kItems = 1000;  // goroutines, round trips or jobs per iteration

template <class W>
int items_of() {
  if constexpr (std::is_same_v<W, Skynet>) {
    return quick() ? 10'000 : 1'000'000;  // the original skynet: 10^6 leaves
  } else if constexpr (std::is_same_v<W, Parked>) {
    return quick() ? 10'000 : 100'000;
  } else if constexpr (std::is_same_v<W, TimerLoops>) {  // 100k sleepers
    return (quick() ? 10'000 : 100'000) * TimerLoops::kRounds;
  } else if constexpr (std::is_same_v<W, TimerChurn> ||
                       std::is_same_v<W, ContextCancelChildren> ||
                       std::is_same_v<W, ContextDeepChain>) {
    return quick() ? 10'000 : 100'000;
  } else {
    return kItems;
  }
}

// A workload that measures something else than fresh stacks (its one
// iteration would be mostly page faults) runs untimed first, as the Go
// reference runs every workload, and again while its last run still mapped
// new stacks: how many goroutines are alive at once, and so how many stacks
// a run needs, differs from run to run (the first, slowed by its faults,
// overlaps fewer of them), and the Go reference, one process for the whole
// suite, is measured warm from earlier procs counts as well. At most
// kMaxWarmUps runs; returns how many it made.
constexpr int kMaxWarmUps = 5;

template <class Api, class W>
int warm_up(const typename Api::Runtime& rt, int items) {
  int runs = 0;
  std::uint64_t mapped = 0;
  do {
    mapped = rt.stats().stacks_mapped;
    W::template run<Api>(items);
    ++runs;
  } while (rt.stats().stacks_mapped != mapped && runs < kMaxWarmUps);
  return runs;
}

template <class Api, class W>
void run_workload(benchmark::State& state) {
  const int items = items_of<W>();
  const int procs = procs_for<Api>(static_cast<int>(state.range(0)),
                                   W::kMaxBlocked);
  typename Api::Config cfg;  // a fresh runtime: fresh stacks
  cfg.procs = procs;
  if constexpr (std::is_same_v<W, Parked>) Parked::max_rss_per_goroutine = 0;
  typename Api::Runtime rt(cfg);
  int warm_ups = 0;
  rt.run([&] {
    if constexpr (requires { W::kWarmUp; }) warm_ups = warm_up<Api, W>(rt, items);
    for (auto _ : state) W::template run<Api>(items);
  });
  const auto stats = rt.stats();
  // The counters cover the whole run, the warm-ups included: per item and
  // per run, they count them too.
  const double runs = static_cast<double>(state.iterations() + warm_ups);
  const double ops = runs * items;
  state.SetItemsProcessed(state.iterations() * items);
  state.counters["procs"] = procs;
  if constexpr (requires { W::kWarmUp; }) state.counters["warm_ups"] = warm_ups;
  state.counters["threads"] = static_cast<double>(stats.threads_created);
  state.counters["goroutines/iter"] =
      static_cast<double>(stats.goroutines_created) / runs;
  if constexpr (requires { stats.sched_lock; }) {  // a global scheduler lock
    const LockCounters& lock = stats.sched_lock;
    state.counters["lock/op"] = static_cast<double>(lock.acquisitions) / ops;
    state.counters["contended%"] =
        lock.acquisitions == 0 ? 0.0 : 100.0 * lock.contended / lock.acquisitions;
    state.counters["lockwait_ns/op"] = static_cast<double>(lock.wait_ns) / ops;
  }
  if constexpr (std::is_same_v<W, Parked>) {
    state.counters["rss_bytes/goroutine"] = Parked::max_rss_per_goroutine.load();
  }
  if constexpr (requires { stats.timers_lock; }) {  // per-P timer heaps
    const LockCounters& lock = stats.timers_lock;
    state.counters["timer_lock/op"] =
        static_cast<double>(lock.acquisitions) / ops;
    state.counters["timer_contended%"] =
        lock.acquisitions == 0 ? 0.0
                               : 100.0 * lock.contended / lock.acquisitions;
    state.counters["timers_stolen/op"] =
        static_cast<double>(stats.timers_stolen) / ops;
  }
  if constexpr (requires { stats.steals; }) {  // Ps with local queues
    state.counters["steals"] = static_cast<double>(stats.steals);
    state.counters["stolen/op"] = static_cast<double>(stats.stolen) / ops;
    state.counters["runnext/op"] =
        static_cast<double>(stats.runnext_hits) / ops;
    state.counters["grq_taken/op"] =
        static_cast<double>(stats.grq_goroutines) / ops;
    state.counters["spin_ns/op"] =
        static_cast<double>(stats.spinning_ns) / ops;
    state.counters["parks/op"] = static_cast<double>(stats.parks) / ops;
  }
}

// Baseline for spawn+join: the 1:1 model, one OS thread per goroutine.
void spawn_join_os_threads(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<std::thread> threads;
    threads.reserve(kItems);
    for (int i = 0; i < kItems; ++i) threads.emplace_back([] {});
    for (auto& t : threads) t.join();
  }
  state.SetItemsProcessed(state.iterations() * kItems);
  state.counters["threads/iter"] = kItems;
}

// Baseline for chan ping-pong: two OS threads handing a value back and
// forth through a mutex and condition variable (what a channel is, minus
// the green threads): every hand-off is a futex wake and a kernel switch.
void ping_pong_os_threads(benchmark::State& state) {
  std::mutex mu;
  std::condition_variable cv;
  int turn = 0;  // 0: main's, 1: the partner's, 2: stop (guarded by mu)
  std::thread partner([&] {
    std::unique_lock lk(mu);
    for (;;) {
      cv.wait(lk, [&] { return turn != 0; });
      if (turn == 2) return;
      turn = 0;
      cv.notify_one();
    }
  });
  for (auto _ : state) {
    for (int i = 0; i < kItems; ++i) {
      std::unique_lock lk(mu);
      turn = 1;
      cv.notify_one();
      cv.wait(lk, [&] { return turn == 0; });
    }
  }
  {
    std::lock_guard lk(mu);
    turn = 2;
  }
  cv.notify_one();
  partner.join();
  state.SetItemsProcessed(state.iterations() * kItems);
}

void register_all() {
  for_each_type<Workloads>([]<class W>() {
    for_each_type<Stages>([]<class Api>() {
      if constexpr (runs_on<W, Api>()) {
        std::string name =
            std::string(W::kName) + "/" + std::string(Api::kName);
        auto* b = benchmark::RegisterBenchmark(name.c_str(),
                                               run_workload<Api, W>);
        b->ArgName("procs")->Arg(1)->Arg(2)->Arg(4)->Arg(8)->UseRealTime();
        if (std::is_same_v<W, Skynet> || std::is_same_v<W, Parked> ||
            std::is_same_v<W, TimerLoops>) {
          b->Unit(benchmark::kMillisecond);
        }
      }
    });
  });
  benchmark::RegisterBenchmark("spawn+join/os_threads",
                               spawn_join_os_threads)
      ->UseRealTime();
  benchmark::RegisterBenchmark("chan ping-pong/os_threads",
                               ping_pong_os_threads)
      ->UseRealTime();
  benchmark::RegisterBenchmark("yield/boost_fiber", fiber_yield_boost);
  benchmark::RegisterBenchmark("context switch/gmp_context_switch",
                               context_switch_gmp);
  benchmark::RegisterBenchmark("context switch/boost_jump_fcontext",
                               context_switch_boost);
}

}  // namespace
}  // namespace gmp::bench

int main(int argc, char** argv) {
  // A cold benchmark's child (cold_bench.h): one run, then exit.
  constexpr std::string_view kChild = "--cold-child=";
  if (argc == 2 && std::string_view(argv[1]).starts_with(kChild)) {
    return gmp::bench::cold_child(std::string_view(argv[1]).substr(kChild.size()));
  }
  gmp::bench::register_all();
  gmp::bench::register_cold();
  gmp::bench::register_io();
  gmp::bench::register_preempt();
  gmp::bench::register_trace();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
