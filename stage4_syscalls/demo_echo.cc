// Stage 4 demo, part 1: an echo server holding thousands of connections on
// GOMAXPROCS threads, against stage 1's thread per connection, under the
// same client load (a stage 4 runtime of its own, in the demo's thread).
#include <sys/resource.h>

#include <cstdint>
#include <cstdio>

#include "stage4_syscalls/echo.h"

namespace demo {

using namespace gmp::stage4::echo;

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

}  // namespace demo
