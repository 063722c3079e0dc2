// Stage 4's benchmarks: echo over loopback TCP (stage 4's goroutines on the
// netpoller against stage 1's thread per connection, on the same client
// load; stage 4's and stage 5's servers against Go's, loaded by one client
// program, echo_client.cc), and the hand-off case of the notes (docs/course/notes.md), with the
// course's own sizes (8 goroutines in 200 ms blocking calls on 1 P: stage 3
// lets them hold the P, stage 4 hands it off).
#pragma once

#include <benchmark/benchmark.h>
#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include "benchmarks/echo.h"
#include "benchmarks/sleepers.h"
#include "benchmarks/stages.h"
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

/// Round trips per connection of an echo run against Go: 20,000 in all
/// (2,000 in quick mode), 10,000 on a lone connection, at least 20 each.
inline int echo_trips(int conns) {
  int total = quick() ? 2'000 : 20'000;
  return std::max(20, conns == 1 ? total / 2 : total / conns);
}

/// The server's system calls per round trip by kind, from one more client
/// run that perf counts (echo_client.cc --syscalls); none if perf cannot
/// count here (said once on stderr).
inline void echo_syscall_counters(benchmark::State& state, int port,
                                  int conns, int trips) {
  static bool perf_ok = true;
  if (!perf_ok) return;
  echo::ClientRun r;
  try {
    r = echo::run_client(port, conns, trips, /*syscalls=*/true, [](bool) {});
  } catch (const std::exception& e) {
    perf_ok = false;
    std::fprintf(stderr, "echo: no system call counts (%s)\n", e.what());
    return;
  }
  auto per = [&](const char* kind) { return r.syscalls[kind] / r.round_trips; };
  state.counters["sys/rt"] = per("all");
  state.counters["read/rt"] = per("read");
  state.counters["eagain/rt"] = per("read_eagain");
  state.counters["write/rt"] = per("write_echo") + per("sendto_echo");
  state.counters["wake_w/rt"] = per("write_wakeup");
  state.counters["epoll_wait/rt"] =
      per("epoll_wait") + per("epoll_pwait") + per("epoll_pwait2");
  state.counters["epoll_ctl/rt"] = per("epoll_ctl");
  state.counters["futex/rt"] = per("futex");
  state.counters["cs/rt"] = per("context_switches");
}

/// Echo against Go's server: a server of stage kStage (4 or 5) with
/// While one lives, the calling thread runs on one CPU only, the lowest it
/// may use, and so does every thread or process it starts (they inherit
/// the mask): the echo rows "one CPU", where the server and the client
/// share a CPU and no wake-up crosses to another. Restores the mask after.
class OneCpu {
 public:
  explicit OneCpu(bool pin) {
    if (!pin || sched_getaffinity(0, sizeof old_, &old_) != 0) return;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &old_)) continue;
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      pinned_ = sched_setaffinity(0, sizeof one, &one) == 0;
      return;
    }
  }
  ~OneCpu() {
    if (pinned_) sched_setaffinity(0, sizeof old_, &old_);
  }
  OneCpu(const OneCpu&) = delete;
  OneCpu& operator=(const OneCpu&) = delete;
  /// Whether the pin took (false: the row is left out).
  bool pinned() const { return pinned_; }

 private:
  cpu_set_t old_{};
  bool pinned_ = false;
};

/// GOMAXPROCS procs, `conns` connections from echo_client, a process of
/// its own (Go's row runs the same client against Go's server,
/// benchmarks/go). The time is the round trips' (echo_trips each), per
/// round trip; the counters, per round trip, explain it: the server's CPU
/// time (all its threads), its runtime's Ms woken, parks, polls and
/// goroutine switches, and its system calls by kind (echo_syscall_counters).
/// With `one_cpu`, the server's threads and the client all run on one
/// CPU (OneCpu).
template <int kStage>
void echo_vs_go(benchmark::State& state, int conns, int procs, bool one_cpu) {
  OneCpu pin(one_cpu);  // first: the server's threads inherit it
  if (one_cpu && !pin.pinned()) {
    state.SkipWithError("sched_setaffinity failed: no row on one CPU");
    return;
  }
  echo::Server server(kStage, procs);
  const int trips = echo_trips(conns);
  double rts = 0, cpu = 0;
  echo::ServerCounters at_start, sum;
  auto mark = [&](bool start) {
    echo::ServerCounters now = server.counters();
    if (start) {
      at_start = now;
      return;
    }
    sum.ms_woken += now.ms_woken - at_start.ms_woken;
    sum.parks += now.parks - at_start.parks;
    sum.netpolls += now.netpolls - at_start.netpolls;
    sum.switches += now.switches - at_start.switches;
  };
  try {
    for (auto _ : state) {
      echo::ClientRun r = echo::run_client(server.port(), conns, trips, false, mark);
      state.SetIterationTime(r.echo_ns / 1e9);
      rts += r.round_trips;
      cpu += r.server_cpu_ns;
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(rts));
  state.counters["cpu_ns/rt"] = cpu / rts;
  state.counters["Ms_woken/rt"] = sum.ms_woken / rts;
  state.counters["parks/rt"] = sum.parks / rts;
  state.counters["netpolls/rt"] = sum.netpolls / rts;
  state.counters["switches/rt"] = sum.switches / rts;
  state.counters["threads"] = server.counters().threads;  // its Ms, so far
  echo_syscall_counters(state, server.port(), conns, trips);
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
  // "echo 1 conn, one CPU": at procs 1 and 2 only (one CPU runs one
  // thread at a time however many Ps there are).
  for (auto [conns, one_cpu] : {std::pair{1, false}, std::pair{100, false},
                                std::pair{1000, false}, std::pair{1, true}}) {
    std::string workload = "echo " + std::to_string(conns) +
                           (conns == 1 ? " conn" : " conns") +
                           (one_cpu ? ", one CPU" : "");
    for (int procs : {1, 2, 4, 8}) {
      if (one_cpu && procs > 2) break;
      for (auto [stage, fn] : {std::pair{"stage4_syscalls", &echo_vs_go<4>},
                               std::pair{"stage5_preemption", &echo_vs_go<5>}}) {
        std::string name = workload + "/" + stage + "/procs:" + std::to_string(procs);
        benchmark::RegisterBenchmark(name.c_str(), fn, conns, procs, one_cpu)
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
      }
    }
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
