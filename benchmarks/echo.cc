#include "benchmarks/echo.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "stage1_threadpool/runtime.h"
#include "stage4_syscalls/net.h"
#include "stage4_syscalls/runtime.h"

namespace gmp::bench::echo {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

}  // namespace

double rss_mib() {
  std::ifstream f("/proc/self/statm");
  long size = 0, resident = 0;
  f >> size >> resident;
  return static_cast<double>(resident) * sysconf(_SC_PAGESIZE) / (1 << 20);
}

Load client_load(int port, int n, int round_trips) {
  Load out;
  stage4::Config c;
  c.procs = 1;
  c.debug = "";
  stage4::Runtime rt(c);
  rt.run([&] {
    stage4::WaitGroup connected, done;
    connected.add(n);
    done.add(n);
    stage4::Chan<bool> start;
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) {
      stage4::go([&] {
        stage4::Conn conn = stage4::dial("127.0.0.1:" + std::to_string(port));
        connected.done();
        start.recv();  // until close(start): every connection is open
        char buf[kMsg] = {};
        for (int k = 0; k < round_trips; ++k) {
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

Load stage4_server(int n, int procs, int round_trips, std::uint64_t* threads) {
  stage4::Config c;
  c.procs = procs;
  c.debug = "";
  stage4::Runtime rt(c);
  std::atomic<int> port{0};
  std::thread server([&] {
    rt.run([&] {
      stage4::Listener l = stage4::listen("127.0.0.1:0");
      port.store(l.port());
      stage4::WaitGroup wg;
      wg.add(n);
      for (int i = 0; i < n; ++i) {
        auto conn = std::make_shared<stage4::Conn>(l.accept());
        stage4::go([conn, &wg] {
          char buf[kMsg];
          while (std::size_t got = conn->read(buf, sizeof buf)) conn->write(buf, got);
          wg.done();
        });
      }
      wg.wait();
    });
  });
  while (port.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Load load = client_load(port.load(), n, round_trips);
  server.join();
  *threads = rt.stats().threads_created;
  return load;
}

namespace {

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
    std::perror("echo: listen");
    std::exit(1);
  }
  *port = ntohs(a.sin_port);
  return fd;
}

}  // namespace

Load stage1_server(int n, int round_trips, std::uint64_t* threads) {
  int port = 0;
  int lfd = blocking_listener(&port);
  stage1::Runtime rt(stage1::Config{.procs = n + 1});
  std::thread server([&] {
    rt.run([&] {
      stage1::WaitGroup wg;  // main waits: its return would end the run
      wg.add(n);
      for (int i = 0; i < n; ++i) {
        int fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
        int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        stage1::go([fd, &wg] {
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
  Load load = client_load(port, n, round_trips);
  server.join();
  ::close(lfd);
  *threads = rt.stats().threads_created;
  return load;
}

}  // namespace gmp::bench::echo
