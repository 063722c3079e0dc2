// The tour's short side-by-side comparison: every workload of workloads.h
// on every stage of stages.h, as small tables, at 1 proc and at 2 (the
// course machines' cores). The full measurements are the Google Benchmark
// suite (stages_bench.cc).
//
// Usage: compare [--procs=N] [--items=N]   (--procs: one table, N procs)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/stages.h"

namespace gmp::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Best of three runs of W on stage Api, in nanoseconds per item.
template <class Api, class W>
double ns_per_item(int procs, int items) {
  double best = 1e300;
  run_with<Api>(procs_for<Api>(procs, W::kMaxBlocked), [&] {
    for (int round = 0; round < 3; ++round) {
      auto start = Clock::now();
      W::template run<Api>(items);
      std::chrono::duration<double, std::nano> took = Clock::now() - start;
      if (took.count() < best) best = took.count();
    }
  });
  return best / items;
}

// One OS thread per goroutine (the 1:1 model), for the spawn+join row.
double os_thread_spawn_ns(int items) {
  auto start = Clock::now();
  std::vector<std::thread> threads;
  threads.reserve(items);
  for (int i = 0; i < items; ++i) threads.emplace_back([] {});
  for (auto& t : threads) t.join();
  std::chrono::duration<double, std::nano> took = Clock::now() - start;
  return took.count() / items;
}

std::string human(double ns) {
  char buf[32];
  if (ns < 1e3) {
    std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  } else if (ns < 1e6) {
    std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
  }
  return buf;
}

void print_table(int procs, int items) {
  std::printf("procs = %d\n", procs);
  std::printf("%-26s", "workload");
  for_each_type<Stages>([]<class Api>() {
    std::printf(" %18s", std::string(Api::kName).c_str());
  });
  std::printf(" %18s\n", "1 thread/goroutine");
  for_each_type<Workloads>([&]<class W>() {
    std::printf("%-26s", W::kName);
    for_each_type<Stages>([&]<class Api>() {
      if constexpr (runs_on<W, Api>()) {
        std::printf(" %18s", human(ns_per_item<Api, W>(procs, items)).c_str());
      } else {
        std::printf(" %18s", "-");
      }
    });
    bool spawn = std::string(W::kName) == SpawnJoin::kName;
    std::printf(" %18s\n", spawn ? human(os_thread_spawn_ns(items)).c_str() : "-");
    std::fflush(stdout);
  });
  std::printf("\n");
}

}  // namespace
}  // namespace gmp::bench

int main(int argc, char** argv) {
  int procs = 0, items = 10000;  // procs 0: the tables for 1 and 2
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--procs=", 8) == 0) {
      procs = std::atoi(argv[i] + 8);
    } else if (std::strncmp(argv[i], "--items=", 8) == 0) {
      items = std::atoi(argv[i] + 8);
    } else {
      std::fprintf(stderr, "usage: %s [--procs=N] [--items=N]\n", argv[0]);
      return 2;
    }
  }
  if (procs < 0 || items < 1) {
    std::fprintf(stderr, "--procs and --items must be at least 1\n");
    return 2;
  }
  std::printf("== Side by side: every stage on the same workloads ==\n\n"
              "Time per item (goroutine, yield, round trip, job or timer), best of 3 "
              "runs of %d\nitems; lower is better.\n\n",
              items);
  if (procs > 0) {
    gmp::bench::print_table(procs, items);
  } else {
    gmp::bench::print_table(1, items);
    gmp::bench::print_table(2, items);
  }
  std::printf("Full suite, all proc counts, with counters: ./course bench\n");
  return 0;
}
