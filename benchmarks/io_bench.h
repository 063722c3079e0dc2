// Stage 4's benchmarks: echo over loopback TCP (stage 4's goroutines on the
// netpoller against stage 1's thread per connection, on the same client
// load), and the hand-off case of the notes (docs/course/notes.md), with the
// course's own sizes (8 goroutines in 200 ms blocking calls on 1 P: stage 3
// lets them hold the P, stage 4 hands it off).
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>

#include "benchmarks/echo.h"
#include "benchmarks/sleepers.h"
#include "stage3_gmp/api.h"
#include "stage4_syscalls/api.h"

namespace gmp::bench {

/// Echo with range(0) connections at once, each doing a number of round
/// trips of 64 bytes; the time is the round trips' only (connecting is
/// left out), per round trip. kStage: 4 or 1.
template <int kStage>
void echo_round_trips(benchmark::State& state) {
  const int conns = static_cast<int>(state.range(0));
  const int trips = conns == 1 ? 2000 : 20000 / conns;
  std::uint64_t threads = 0;
  for (auto _ : state) {
    echo::Load load = kStage == 4
                          ? echo::stage4_server(conns, 2, trips, &threads)
                          : echo::stage1_server(conns, trips, &threads);
    state.SetIterationTime(load.echo_ms / 1000);
  }
  state.SetItemsProcessed(state.iterations() * conns * trips);
  state.counters["server_threads"] = static_cast<double>(threads);
  state.counters["round_trips/iter"] = conns * trips;
}

/// The hand-off case; the time is until all 8 calls returned.
template <class Api, bool kMarked>
void eight_sleepers(benchmark::State& state) {
  long counted = 0;
  for (auto _ : state) {
    double ms = eight_sleepers_ms<Api, kMarked>(&counted);
    state.SetIterationTime(ms / 1000);
  }
  state.counters["counter_reached"] = static_cast<double>(counted);
}

inline void register_io() {
  for (auto [name, fn] :
       {std::pair{"echo/stage4_syscalls", &echo_round_trips<4>},
        std::pair{"echo/stage1_threadpool", &echo_round_trips<1>}}) {
    benchmark::RegisterBenchmark(name, fn)
        ->ArgName("conns")
        ->Arg(1)
        ->Arg(100)
        ->Arg(1000)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RegisterBenchmark("handoff 8x200ms on 1 P/stage3_gmp",
                               &eight_sleepers<stage3::Api, false>)
      ->Iterations(2)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("handoff 8x200ms on 1 P/stage4_syscalls",
                               &eight_sleepers<stage4::Api, true>)
      ->Iterations(2)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace gmp::bench
