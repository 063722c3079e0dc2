// Cold benchmarks: a workload run once in a fresh process, as a program
// runs it (issue 22), in kColdRuns processes per figure. The suite's other
// benchmarks reuse one runtime, whose pools are full after the first
// iteration; here every figure pays what a first run pays: new stacks, new
// Gs, the kernel's page faults. The benchmark process starts itself again
// with --cold-child=NAME for each run (cold_child below), as the Go
// reference does (benchmarks/go, -cold-child), and reads back what the
// child measured.
#pragma once

#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "benchmarks/child.h"
#include "benchmarks/stages.h"
#include "benchmarks/workloads.h"

namespace gmp::bench {

/// The cold workloads: 1M goroutines spawned by main in a loop and joined
/// with a WaitGroup (spawn+join's program), and skynet with 1M leaves
/// (10,000 of each in quick mode; the child inherits GMP_BENCH_QUICK).
inline int cold_items() { return quick() ? 10'000 : 1'000'000; }

/// What a child measured: the run's wall time (runtime made, workload run,
/// before the runtime is destroyed), the process's peak RSS and minor
/// faults, the most goroutines alive at once (-1 where the stage does not
/// count them), the goroutines created, the OS threads the runtime made,
/// and from stage 3 (-1 before) the go()s served by a dead goroutine's G
/// and the refills of the Ps' stack caches from the shared pool.
struct ColdResult {
  std::int64_t wall_ns = 0;
  std::int64_t peak_rss_kb = 0;
  std::int64_t minor_faults = 0;
  std::int64_t max_live = -1;
  std::int64_t goroutines = 0;
  std::int64_t threads = 0;
  std::int64_t gs_reused = -1;
  std::int64_t stack_refills = -1;
};

/// ColdResult's fields, in the order the child prints them.
inline constexpr std::int64_t ColdResult::* kColdFields[] = {
    &ColdResult::wall_ns,    &ColdResult::peak_rss_kb, &ColdResult::minor_faults,
    &ColdResult::max_live,   &ColdResult::goroutines,  &ColdResult::threads,
    &ColdResult::gs_reused,  &ColdResult::stack_refills};

/// This process's peak resident memory in KiB: VmHWM in /proc/self/status,
/// the high-water mark of its own address space (-1 if unreadable). Not
/// ru_maxrss, which Linux carries across execve: a child started by a
/// large parent (the suite, after warm skynet on stage 2) would report the
/// parent's peak.
inline std::int64_t peak_rss_kb() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long long kb = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::sscanf(line, "VmHWM: %lld kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb;
}

template <class Api, class W>
ColdResult cold_run(int procs) {
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  const auto t0 = std::chrono::steady_clock::now();
  typename Api::Config cfg;
  cfg.procs = procs_for<Api>(procs, W::kMaxBlocked);
  typename Api::Runtime rt(cfg);
  rt.run([] { W::template run<Api>(cold_items()); });
  ColdResult r;
  r.wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now() - t0)
                  .count();
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  r.peak_rss_kb = peak_rss_kb();
  r.minor_faults = after.ru_minflt - before.ru_minflt;
  const auto stats = rt.stats();
  if constexpr (requires { stats.max_live; }) r.max_live = stats.max_live;
  r.goroutines = static_cast<std::int64_t>(stats.goroutines_created);
  r.threads = static_cast<std::int64_t>(stats.threads_created);
  if constexpr (requires { stats.gs_reused; }) {
    r.gs_reused = static_cast<std::int64_t>(stats.gs_reused);
    r.stack_refills = static_cast<std::int64_t>(stats.stack_refills);
  }
  return r;
}

/// Calls f.template operator()<Api, W>(procs, name) for every cold
/// benchmark: both workloads on every stage that runs them, 1 and 2 procs,
/// named "cold spawn/stage3_gmp/procs:2" (and "cold skynet/...").
template <class F>
void for_each_cold(F&& f) {
  for_each_type<std::tuple<SpawnJoin, Skynet>>([&]<class W>() {
    for_each_type<Stages>([&]<class Api>() {
      if constexpr (runs_on<W, Api>()) {
        for (int procs : {1, 2}) {
          std::string name = std::string("cold ") +
                             (std::is_same_v<W, Skynet> ? "skynet" : "spawn") +
                             "/" + std::string(Api::kName) +
                             "/procs:" + std::to_string(procs);
          f.template operator()<Api, W>(procs, name);
        }
      }
    });
  });
}

/// In the child: runs the cold benchmark `name` and prints its ColdResult
/// on one line. Returns the exit status.
inline int cold_child(std::string_view name) {
  int status = 2;  // no such benchmark
  for_each_cold([&]<class Api, class W>(int procs, const std::string& n) {
    if (n != name) return;
    ColdResult r = cold_run<Api, W>(procs);
    for (auto field : kColdFields) {
      std::printf("%lld ", static_cast<long long>(r.*field));
    }
    std::printf("\n");
    status = 0;
  });
  if (status != 0) {
    std::fprintf(stderr, "no cold benchmark '%.*s'\n",
                 static_cast<int>(name.size()), name.data());
  }
  return status;
}

/// In the parent: starts this program again as the child of `name` and
/// reads its result; false if the child failed.
inline bool run_cold_child(const std::string& name, ColdResult* r) {
  Child c;
  if (!spawn_child("/proc/self/exe", {"stages_bench", "--cold-child=" + name},
                   /*pipe_stdin=*/false, &c)) {
    return false;
  }
  ColdResult got;
  bool complete = true;
  for (auto field : kColdFields) {
    long long v = 0;
    complete = complete && std::fscanf(c.out, "%lld", &v) == 1;
    got.*field = v;
  }
  if (!wait_child(&c) || !complete) return false;
  *r = got;
  return true;
}

/// Fresh processes per figure: the figure is the median run's wall time,
/// with that run's counters, as the Go reference's (benchmarks/go,
/// coldInChildren). On the course's VM a fresh process now and then runs
/// at half speed (stage 5, cold spawn at 2 procs: 255-405 ms, and 652 and
/// 667 ms in 2 of 16 processes); the median of 5 leaves such a run out on
/// both sides alike.
inline constexpr int kColdRuns = 5;

/// kColdRuns fresh processes per iteration, each timed by the child
/// (manual time: the median one's).
inline void cold(benchmark::State& state, const std::string& name) {
  ColdResult r;
  for (auto _ : state) {
    ColdResult runs[kColdRuns];
    for (ColdResult& run : runs) {
      if (!run_cold_child(name, &run)) {
        state.SkipWithError("the cold child failed (run it: stages_bench "
                            "--cold-child=NAME)");
        return;
      }
    }
    ColdResult* median = runs + kColdRuns / 2;
    std::nth_element(runs, median, runs + kColdRuns,
                     [](const ColdResult& a, const ColdResult& b) {
                       return a.wall_ns < b.wall_ns;
                     });
    r = *median;
    state.SetIterationTime(static_cast<double>(r.wall_ns) / 1e9);
  }
  state.SetItemsProcessed(state.iterations() * cold_items());
  state.counters["threads"] = static_cast<double>(r.threads);
  state.counters["peak_rss_MB"] = static_cast<double>(r.peak_rss_kb) / 1024;
  state.counters["faults/goroutine"] =
      static_cast<double>(r.minor_faults) / static_cast<double>(r.goroutines);
  if (r.max_live >= 0) state.counters["max_alive"] = static_cast<double>(r.max_live);
  if (r.gs_reused >= 0) {  // stage 3+: gfput/gfget and the stack caches
    state.counters["G_reused%"] = 100.0 * static_cast<double>(r.gs_reused) /
                                  static_cast<double>(r.goroutines);
    state.counters["stack_refills"] = static_cast<double>(r.stack_refills);
  }
}

inline void register_cold() {
  for_each_cold([]<class Api, class W>(int, const std::string& name) {
    benchmark::RegisterBenchmark(name.c_str(),
                                 [name](benchmark::State& s) { cold(s, name); })
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  });
}

}  // namespace gmp::bench
