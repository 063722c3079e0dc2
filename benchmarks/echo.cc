#include "benchmarks/echo.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/child.h"
#include "stage1_threadpool/runtime.h"
#include "stage4_syscalls/net.h"
#include "stage4_syscalls/runtime.h"
#include "stage5_preemption/runtime.h"

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

// ---- The comparison with Go: a client process of its own -------------------

std::string client_path() {
  if (const char* env = std::getenv("GMP_ECHO_CLIENT")) return env;
  char self[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw std::runtime_error("echo: cannot read /proc/self/exe");
  std::string path(self, static_cast<std::size_t>(n));
  return path.substr(0, path.rfind('/') + 1) + "echo_client";
}

namespace {

// The number after "key": in the client's JSON line, or -1.
double field(const std::string& json, const std::string& key) {
  std::size_t at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return -1;
  return std::strtod(json.c_str() + at + key.size() + 3, nullptr);
}

// The client's "syscalls" object, as {kind: count}.
std::map<std::string, double> syscall_counts(const std::string& json) {
  std::map<std::string, double> out;
  std::size_t at = json.find("\"syscalls\":{");
  if (at == std::string::npos) return out;
  std::string obj = json.substr(at, json.find('}', at) - at);
  static const std::regex kv("\"([a-z0-9_]+)\":([0-9]+)");
  for (std::sregex_iterator i(obj.begin(), obj.end(), kv), e; i != e; ++i) {
    out[(*i)[1]] = std::stod((*i)[2]);
  }
  return out;
}

}  // namespace

ClientRun run_client(int port, int conns, int round_trips, bool syscalls,
                     const std::function<void(bool)>& mark) {
  std::vector<std::string> args = {
      client_path(), "--port", std::to_string(port), "--conns",
      std::to_string(conns), "--round-trips", std::to_string(round_trips),
      "--server-pid", std::to_string(::getpid()), "--mark"};
  if (syscalls) args.push_back("--syscalls");
  Child c;
  if (!spawn_child(args[0].c_str(), args, /*pipe_stdin=*/true, &c)) {
    throw std::runtime_error("echo: cannot run " + args[0] +
                             " (build //benchmarks:echo_client, or set "
                             "GMP_ECHO_CLIENT)");
  }
  std::string json;
  char line[4096];
  while (std::fgets(line, sizeof line, c.out) != nullptr) {
    std::string l(line);
    if (l == "start\n" || l == "end\n") {
      mark(l == "start\n");
      if (::write(c.in, "\n", 1) != 1) break;
    } else {
      json += l;
    }
  }
  if (!wait_child(&c)) {
    throw std::runtime_error("echo_client failed (its message is above)");
  }
  ClientRun r;
  r.round_trips = field(json, "round_trips");
  r.echo_ns = field(json, "echo_ns");
  r.server_cpu_ns = field(json, "server_cpu_ns");
  r.syscalls = syscall_counts(json);
  return r;
}

struct Server::Impl {
  virtual ~Impl() = default;
  virtual ServerCounters counters() const = 0;
  std::atomic<int> port{0};
  std::atomic<stage4::Listener*> listener{nullptr};
  std::thread thread;
};

namespace {

// The server on a runtime of type Runtime (stage 4's or stage 5's).
template <class Runtime, class Config>
struct ServerOn final : Server::Impl {
  explicit ServerOn(int procs) : rt(config(procs)) {
    thread = std::thread([this] { rt.run([this] { serve(); }); });
  }
  static Config config(int procs) {
    Config c;
    c.procs = procs;
    c.debug = "";
    return c;
  }
  // Goroutine 1: accepts until the listener is closed, a goroutine per
  // connection, then waits for them.
  void serve() {
    stage4::Listener l = stage4::listen("127.0.0.1:0");
    listener.store(&l);
    port.store(l.port());
    stage4::WaitGroup wg;
    for (;;) {
      std::shared_ptr<stage4::Conn> conn;
      try {
        conn = std::make_shared<stage4::Conn>(l.accept());
      } catch (const stage4::NetError& e) {
        if (e.closed()) break;
        throw;
      }
      wg.add(1);
      stage4::go([conn, &wg] {
        char buf[kMsg];
        try {  // a client that dies resets its connections: that one ends
          while (std::size_t got = conn->read(buf, sizeof buf)) conn->write(buf, got);
        } catch (const stage4::NetError&) {
        }
        wg.done();
      });
    }
    wg.wait();
  }
  ServerCounters counters() const override {
    auto s = rt.stats();
    return {.ms_woken = static_cast<double>(s.wakeups),
            .parks = static_cast<double>(s.parks),
            .netpolls = static_cast<double>(s.netpolls),
            .switches = static_cast<double>(s.context_switches),
            .threads = static_cast<double>(s.threads_created)};
  }
  Runtime rt;
};

}  // namespace

Server::Server(int stage, int procs) {
  if (stage == 4) {
    impl_ = std::make_unique<ServerOn<stage4::Runtime, stage4::Config>>(procs);
  } else if (stage == 5) {
    impl_ = std::make_unique<ServerOn<stage5::Runtime, stage5::Config>>(procs);
  } else {
    throw std::invalid_argument("echo::Server: stage 4 or 5");
  }
  while (impl_->port.load() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

Server::~Server() {
  impl_->listener.load()->close();  // accept wakes with closed()
  impl_->thread.join();
}

int Server::port() const { return impl_->port.load(); }

ServerCounters Server::counters() const { return impl_->counters(); }

}  // namespace gmp::bench::echo
