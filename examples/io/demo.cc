// The I/O demo: what stage 4 buys, against the earlier stages, on the
// workloads of the benchmarks (benchmarks/echo.h, benchmarks/sleepers.h).
//
//   1. An echo server holding thousands of connections on GOMAXPROCS
//      threads, against stage 1's thread per connection, under the same
//      client load (a stage 4 runtime of its own, in the demo's thread).
//   2. 8 goroutines in 200 ms blocking calls on 1 P while one more counts:
//      stage 3 lets each call hold the P, stage 4 hands the P off.
//
// Stage 4's own demo (stage4_syscalls/demo.cc) shows the hand-off as it
// happens, and what stage 4 still gets wrong.
//
// Usage: demo [--connections=N] [--quick]   (part 1 with N connections,
//        default 10000; --quick: 300, as the demo's test runs it)
#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "benchmarks/echo.h"
#include "benchmarks/sleepers.h"
#include "stage3_gmp/api.h"
#include "stage4_syscalls/api.h"

namespace {

using namespace gmp::bench::echo;

// Go (since 1.19) raises its descriptor limit to the hard limit at start;
// the demo does the same, and asks for more if it may (root may raise the
// hard limit). Both ends of every connection are in this process. Returns
// how many connections fit.
int fit_connections(int want) {
  rlimit r{};
  getrlimit(RLIMIT_NOFILE, &r);
  rlim_t need = 2 * static_cast<rlim_t>(want) + 64;
  if (r.rlim_max < need) {
    rlimit more{need, need};
    if (setrlimit(RLIMIT_NOFILE, &more) == 0) r = more;
  }
  r.rlim_cur = r.rlim_max;
  setrlimit(RLIMIT_NOFILE, &r);
  getrlimit(RLIMIT_NOFILE, &r);
  long room = (static_cast<long>(r.rlim_cur) - 64) / 2;  // two ends each
  return static_cast<int>(room < want ? room : want);
}

void echo_servers(int want) {
  int n = fit_connections(want);
  std::printf("1. Echo server: %d concurrent loopback connections, %d round "
              "trips of %zu bytes each\n", n, kRoundTrips, kMsg);
  if (n < want) {
    std::printf("   (the descriptor limit allows %d, not %d)\n", n, want);
  }
  std::printf("   %-34s %9s %11s %11s %13s\n", "server", "threads",
              "connect", "echo", "process RSS");
  std::uint64_t threads = 0;
  Load s4 = stage4_server(n, /*procs=*/2, kRoundTrips, &threads);
  std::printf("   %-34s %9llu %8.0f ms %8.0f ms %9.0f MiB\n",
              "stage 4: goroutines + netpoller", (unsigned long long)threads,
              s4.connect_ms, s4.echo_ms, s4.rss_mib);
  Load s1 = stage1_server(n, kRoundTrips, &threads);
  std::printf("   %-34s %9llu %8.0f ms %8.0f ms %9.0f MiB\n",
              "stage 1: a thread per connection", (unsigned long long)threads,
              s1.connect_ms, s1.echo_ms, s1.rss_mib);
  std::printf("   (GOMAXPROCS=2 for stage 4; the client load is a stage 4 "
              "runtime of its own on 1 P,\n    with the connections' "
              "other ends: its memory is in both RSS figures)\n\n");
}

void eight_sleepers() {
  std::printf("2. Blocking system calls: 8 goroutines in 200 ms calls on 1 P, "
              "one more counting\n");
  long n3 = 0, n4 = 0;
  double ms3 = gmp::bench::eight_sleepers_ms<gmp::stage3::Api, false>(&n3);
  double ms4 = gmp::bench::eight_sleepers_ms<gmp::stage4::Api, true>(&n4);
  std::printf("   stage 3 (the call holds the P): %6.0f ms, counter "
              "reached %ld\n", ms3, n3);
  std::printf("   stage 4 (blocking(), P handed off): %6.0f ms, counter "
              "reached %ld\n", ms4, n4);
}

}  // namespace

int main(int argc, char** argv) {
  int connections = 10000;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--connections=", 14) == 0) {
      connections = std::atoi(argv[i] + 14);
    } else if (std::strcmp(argv[i], "--quick") == 0) {
      connections = 300;
    } else {
      std::fprintf(stderr, "usage: %s [--connections=N] [--quick]\n", argv[0]);
      return 2;
    }
  }
  if (connections < 1) {
    std::fprintf(stderr, "demo: --connections must be at least 1\n");
    return 2;
  }
  std::printf("== I/O: stage 4 against stages 1 and 3 ==\n\n");
  echo_servers(connections);
  eight_sleepers();
  return 0;
}
