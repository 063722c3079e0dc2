// Stage 5's benchmarks: preemption latency (a 1 ms sleeper behind a 100 ms
// loop on 1 P, per preemption mode and time slice; stage 4 has no
// preemption), and the cost of a short blocking call with stage 4's eager
// hand-off against stage 5's lazy one. Sysmon's cost on a busy scheduler
// shows in the other tables, where stage 5 runs every workload next to
// stage 4.
#pragma once

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "stage4_syscalls/api.h"
#include "stage5_preemption/api.h"
#include "stage5_preemption/latency.h"

namespace gmp::bench {

/// The time the sleeper waited, per run (manual time).
inline void preempt_latency(benchmark::State& state, stage5::Preempt mode,
                            bool with_calls, std::chrono::milliseconds slice) {
  double total = 0;
  for (auto _ : state) {
    double ms = stage5::sleeper_behind_loop_ms(mode, with_calls, slice);
    total += ms;
    state.SetIterationTime(ms / 1000);
  }
  state.counters["waited_ms"] = total / static_cast<double>(state.iterations());
}

/// range(0) blocking(getppid) calls on 1 P; with range(1) another
/// goroutine keeps yielding meanwhile (so a handed-off P finds work and
/// wakes an M). Time per call.
template <class Api>
void syscall_cost(benchmark::State& state) {
  const int calls = static_cast<int>(state.range(0));
  const bool other = state.range(1) != 0;
  typename Api::Stats stats{};
  for (auto _ : state) {
    typename Api::Config c;
    c.procs = 1;
    c.debug = "";
    typename Api::Runtime rt(c);
    double secs = 0;
    rt.run([&] {
      std::atomic<bool> stop{false};
      typename Api::WaitGroup wg;
      if (other) {
        wg.add(1);
        Api::go([&] {
          while (!stop.load(std::memory_order_relaxed)) Api::yield();
          wg.done();
        });
        Api::yield();  // it runs, and stays runnable
      }
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < calls; ++i) stage4::blocking([] { return ::getppid(); });
      secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                 .count();
      stop.store(true);
      wg.wait();
    });
    state.SetIterationTime(secs);
    stats = rt.stats();
  }
  state.SetItemsProcessed(state.iterations() * calls);
  state.counters["handoffs/call"] =
      static_cast<double>(stats.handoffs) / static_cast<double>(stats.syscalls);
  state.counters["threads"] = static_cast<double>(stats.threads_created);
}

inline void register_preempt() {
  using stage5::Preempt;
  using std::chrono::milliseconds;
  struct Case {
    const char* name;
    Preempt mode;
    bool calls;
    milliseconds slice;
  };
  const Case cases[] = {
      {"none", Preempt::kNone, true, milliseconds(10)},
      {"cooperative, loop with calls, 10ms", Preempt::kCooperative, true, milliseconds(10)},
      {"cooperative, loop without calls, 10ms", Preempt::kCooperative, false, milliseconds(10)},
      {"async, loop without calls, 10ms", Preempt::kAsync, false, milliseconds(10)},
      {"async, loop without calls, 5ms", Preempt::kAsync, false, milliseconds(5)},
      {"async, loop without calls, 2ms", Preempt::kAsync, false, milliseconds(2)},
  };
  for (const Case& k : cases) {
    if (k.mode == Preempt::kAsync && !stage5::kAsyncPreemptSupported) continue;
    std::string name = std::string("preemption latency/stage5_preemption/") + k.name;
    benchmark::RegisterBenchmark(name.c_str(), [k](benchmark::State& s) {
      preempt_latency(s, k.mode, k.calls, k.slice);
    })
        ->Iterations(5)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (auto [name, fn] :
       {std::pair{"blocking(getppid)/stage4_syscalls", &syscall_cost<stage4::Api>},
        std::pair{"blocking(getppid)/stage5_preemption", &syscall_cost<stage5::Api>}}) {
    benchmark::RegisterBenchmark(name, fn)
        ->ArgNames({"calls", "other"})
        ->Args({20000, 0})
        ->Args({20000, 1})
        ->UseManualTime()
        ->Unit(benchmark::kNanosecond);
  }
}

}  // namespace gmp::bench
