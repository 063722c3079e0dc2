// Stage 4 demo, part 1: an echo server holding thousands of connections on
// GOMAXPROCS threads, against stage 1's thread per connection, under the
// same client load (a stage 4 runtime of its own, in the demo's thread).
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "stage1_threadpool/runtime.h"
#include "stage4_syscalls/net.h"
#include "stage4_syscalls/runtime.h"

namespace demo {

using Clock = std::chrono::steady_clock;
constexpr int kRoundTrips = 10;
constexpr std::size_t kMsg = 64;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// The process's resident memory in MiB (/proc/self/statm, in pages).
double rss_mib() {
  std::ifstream f("/proc/self/statm");
  long size = 0, resident = 0;
  f >> size >> resident;
  return static_cast<double>(resident) * sysconf(_SC_PAGESIZE) / (1 << 20);
}

// Go (since 1.19) raises its descriptor limit to the hard limit at start;
// the demo does the same. Returns how many connections fit.
int fit_connections(int want) {
  rlimit r{};
  getrlimit(RLIMIT_NOFILE, &r);
  r.rlim_cur = r.rlim_max;
  setrlimit(RLIMIT_NOFILE, &r);
  getrlimit(RLIMIT_NOFILE, &r);
  long room = (static_cast<long>(r.rlim_cur) - 64) / 2;  // two ends each
  return static_cast<int>(room < want ? room : want);
}

// What one run of the load measured.
struct Load {
  double connect_ms = 0, echo_ms = 0, rss_mib = 0;
};

// The client load: n goroutines each dial, wait until all are connected
// (the server then holds n connections), do kRoundTrips round trips of
// kMsg bytes, and close.
Load client_load(int port, int n) {
  using namespace gmp::stage4;
  Load out;
  Config c;
  c.procs = 1;
  c.debug = "";
  Runtime rt(c);
  rt.run([&] {
    WaitGroup connected, done;
    connected.add(n);
    done.add(n);
    Chan<bool> start;
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) {
      go([&] {
        Conn conn = dial("127.0.0.1:" + std::to_string(port));
        connected.done();
        start.recv();  // until close(start): every connection is open
        char buf[kMsg] = {};
        for (int k = 0; k < kRoundTrips; ++k) {
          conn.write(buf, kMsg);
          for (std::size_t got = 0; got < kMsg;) got += conn.read(buf + got, kMsg - got);
        }
        done.done();
      });
    }
    connected.wait();
    out.connect_ms = ms_since(t0);
    out.rss_mib = rss_mib();
    auto t1 = Clock::now();
    start.close();
    done.wait();
    out.echo_ms = ms_since(t1);
  });
  return out;
}

// Stage 4's server: one goroutine per connection, GOMAXPROCS = 2.
Load stage4_server(int n, std::uint64_t* threads) {
  using namespace gmp::stage4;
  Config c;
  c.procs = 2;
  c.debug = "";
  Runtime rt(c);
  std::atomic<int> port{0};
  std::thread server([&] {
    rt.run([&] {
      Listener l = listen("127.0.0.1:0");
      port.store(l.port());
      WaitGroup wg;
      wg.add(n);
      for (int i = 0; i < n; ++i) {
        auto conn = std::make_shared<Conn>(l.accept());
        go([conn, &wg] {
          char buf[kMsg];
          while (std::size_t got = conn->read(buf, sizeof buf)) conn->write(buf, got);
          wg.done();
        });
      }
      wg.wait();
    });
  });
  while (port.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Load load = client_load(port.load(), n);
  server.join();
  *threads = rt.stats().threads_created;
  return load;
}

// A blocking listening socket on 127.0.0.1, any port; its port in *port.
int blocking_listener(int* port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), len) != 0 ||
      ::listen(fd, 4096) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    std::perror("demo: listen");
    std::exit(1);
  }
  *port = ntohs(a.sin_port);
  return fd;
}

// Stage 1's server: blocking sockets, and a thread for each connection
// (the pool must be that large: a task blocked in read() holds its thread).
Load stage1_server(int n, std::uint64_t* threads) {
  using namespace gmp::stage1;
  int port = 0;
  int lfd = blocking_listener(&port);
  Runtime rt(Config{.procs = n + 1});
  std::thread server([&] {
    rt.run([&] {
      WaitGroup wg;  // main waits: its return would end the run
      wg.add(n);
      for (int i = 0; i < n; ++i) {
        int fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        go([fd, &wg] {
          char buf[kMsg];
          ssize_t got;
          while ((got = ::read(fd, buf, sizeof buf)) > 0) {
            if (::write(fd, buf, static_cast<std::size_t>(got)) != got) break;
          }
          ::close(fd);
          wg.done();
        });
      }
      wg.wait();
    });
  });
  Load load = client_load(port, n);
  server.join();
  ::close(lfd);
  *threads = rt.stats().threads_created;
  return load;
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
  Load s4 = stage4_server(n, &threads);
  std::printf("   %-34s %9llu %8.0f ms %8.0f ms %9.0f MiB\n",
              "stage 4: goroutines + netpoller", (unsigned long long)threads,
              s4.connect_ms, s4.echo_ms, s4.rss_mib);
  Load s1 = stage1_server(n, &threads);
  std::printf("   %-34s %9llu %8.0f ms %8.0f ms %9.0f MiB\n",
              "stage 1: a thread per connection", (unsigned long long)threads,
              s1.connect_ms, s1.echo_ms, s1.rss_mib);
  std::printf("   (GOMAXPROCS=2 for stage 4; the client load is a stage 4 "
              "runtime of its own on 1 P,\n    with the connections' "
              "other ends: its memory is in both RSS figures)\n\n");
}

}  // namespace demo
