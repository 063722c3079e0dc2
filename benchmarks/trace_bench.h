// The execution tracer's cost (trace/tracer.h): three workloads on the
// green-thread stages with tracing off and on, at GOMAXPROCS 2. "off" is
// the cost every run pays for having the tracer (one test of a pointer per
// event site); compare it with the same workload in the main tables, which
// run with tracing off too. "on" adds a clock read and an append per event.
//
// Names: trace/<workload>/<stage>/off|on. The "on" runs keep every event in
// memory until the run ends (then write it, untimed, to a file that is
// deleted), so they have a fixed number of iterations.
#pragma once

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "benchmarks/stages.h"

namespace gmp::bench {

/// One traced (or untraced) run of workload W on stage Api.
template <class Api, class W>
void traced_workload(benchmark::State& state, bool on) {
  constexpr int kItems = 1000;
  std::string path;
  if (on) {
    char tmpl[] = "/tmp/gmp-trace-bench-XXXXXX";
    int fd = ::mkstemp(tmpl);
    if (fd < 0) {
      state.SkipWithError("trace bench: no temporary file");
      return;
    }
    ::close(fd);
    path = tmpl;
  }
  typename Api::Config cfg;
  cfg.procs = 2;
  cfg.trace = path;  // "" is off
  typename Api::Runtime rt(cfg);
  rt.run([&] {
    for (auto _ : state) W::template run<Api>(kItems);
  });
  if (on) std::remove(path.c_str());
  state.SetItemsProcessed(state.iterations() * kItems);
}

/// trace/<workload>/<stage>/off|on for yield, chan ping-pong and
/// spawn+join on stages 2-5.
inline void register_trace() {
  for_each_type<std::tuple<YieldPing, ChanPingPong, SpawnJoin>>([]<class W>() {
    for_each_type<Stages>([]<class Api>() {
      if constexpr (!std::is_same_v<Api, stage1::Api>) {
        for (bool on : {false, true}) {
          std::string name = "trace/" + std::string(W::kName) + "/" +
                             std::string(Api::kName) + (on ? "/on" : "/off");
          auto* b = benchmark::RegisterBenchmark(
              name.c_str(), [on](benchmark::State& s) {
                traced_workload<Api, W>(s, on);
              });
          b->UseRealTime();
          if (on) b->Iterations(200);
        }
      }
    });
  });
}

}  // namespace gmp::bench
