// The echo benchmark's client: one program that loads every echo server
// the suite compares (stage 4's and stage 5's, in stages_bench, and Go's,
// in benchmarks/go), so that the servers alone differ.
//
//   echo_client --port P --conns N --round-trips K [--server-pid PID]
//               [--syscalls] [--mark]
//
// It opens N connections to 127.0.0.1:P, makes one round trip on each (not
// timed: the server has then accepted them all and started its threads),
// then K round trips of 64 bytes on each, all connections at once, from one
// thread with epoll and no runtime. It prints one JSON object: the round
// trips, their wall time, and, given the server's pid, the CPU time all the
// server's threads spent meanwhile (/proc/PID/task/*/schedstat). With
// --syscalls it also counts the server's system calls by kind over the
// round trips with `perf stat -p PID` (Debian's linux-perf, as root or
// with perf_event_paranoid at -1): a separate run, since tracing them
// slows the server. With --mark it prints "start" as the timed phase is
// about to begin and "end" once it is over, each on a line of its own, and
// waits for a line on its standard input after each: the server's program
// reads its own counters then (echo.cc's run_client).
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

constexpr std::size_t kMsg = 64;  // bytes per message (benchmarks/echo.h)

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "echo_client: %s\n", what.c_str());
  std::exit(2);
}

struct Args {
  int port = 0, conns = 0, round_trips = 0, server_pid = 0;
  bool syscalls = false, mark = false;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto value = [&] {
      if (i + 1 >= argc) die(k + " needs a value");
      char* end = nullptr;
      long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v <= 0 || v > 1'000'000) die(k + ": not 1..1000000");
      return static_cast<int>(v);
    };
    if (k == "--port") a.port = value();
    else if (k == "--conns") a.conns = value();
    else if (k == "--round-trips") a.round_trips = value();
    else if (k == "--server-pid") a.server_pid = value();
    else if (k == "--syscalls") a.syscalls = true;
    else if (k == "--mark") a.mark = true;
    else die("unknown argument '" + k + "' (see echo_client.cc)");
  }
  if (a.port == 0 || a.conns == 0 || a.round_trips == 0) {
    die("usage: echo_client --port P --conns N --round-trips K "
        "[--server-pid PID] [--syscalls]");
  }
  if (a.syscalls && a.server_pid == 0) die("--syscalls needs --server-pid");
  return a;
}

int dial(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    die(std::string("connect: ") + std::strerror(errno));
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// One round trip on a blocking socket: the warm-up.
void round_trip(int fd) {
  char buf[kMsg] = {};
  if (::write(fd, buf, kMsg) != static_cast<ssize_t>(kMsg)) die("warm-up write");
  for (std::size_t got = 0; got < kMsg;) {
    ssize_t n = ::read(fd, buf + got, kMsg - got);
    if (n <= 0) die("warm-up read: the server closed the connection");
    got += static_cast<std::size_t>(n);
  }
}

// The CPU time of every thread of `pid` so far, in ns (schedstat's first
// field); 0 without a pid.
long long cpu_ns(int pid) {
  if (pid == 0) return 0;
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) die("no " + dir);
  long long sum = 0;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream f(dir + "/" + e->d_name + "/schedstat");
    long long ns = 0;
    if (f >> ns) sum += ns;
  }
  ::closedir(d);
  return sum;
}

struct Conn {
  int fd;
  int left;           // round trips still to make
  std::size_t got;    // bytes of the current echo read so far
};

// K round trips on every connection at once: write, wait for the echo,
// write again. Returns once every connection has made its K.
void run_round_trips(std::vector<Conn>& conns) {
  int ep = ::epoll_create1(EPOLL_CLOEXEC);
  char buf[kMsg] = {};
  for (std::size_t i = 0; i < conns.size(); ++i) {
    ::fcntl(conns[i].fd, F_SETFL, O_NONBLOCK);
    epoll_event ev{.events = EPOLLIN, .data = {.u64 = i}};
    ::epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev);
    if (::write(conns[i].fd, buf, kMsg) != static_cast<ssize_t>(kMsg)) die("write");
  }
  std::size_t busy = conns.size();
  std::vector<epoll_event> events(256);
  while (busy > 0) {
    int n = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), -1);
    if (n < 0 && errno != EINTR) die("epoll_wait");
    for (int k = 0; k < n; ++k) {
      Conn& c = conns[events[k].data.u64];
      ssize_t r = ::read(c.fd, buf, kMsg - c.got);
      if (r == 0) die("the server closed a connection");
      if (r < 0) continue;  // EAGAIN: a spurious wake-up
      c.got += static_cast<std::size_t>(r);
      if (c.got < kMsg) continue;
      c.got = 0;
      if (--c.left == 0) {
        --busy;
      } else if (::write(c.fd, buf, kMsg) != static_cast<ssize_t>(kMsg)) {
        die("write");
      }
    }
  }
  ::close(ep);
}

// The server's system calls counted by kind: perf's events, each with the
// name the output gives it. A write or send of 64 bytes is an echo (Go
// writes, the course sends, with MSG_NOSIGNAL); a write of another size is
// a poller's wake-up (stage 4's eventfd takes 8 bytes, Go 1.19's pipe
// one).
struct Counted {
  const char* name;
  const char* event;
  const char* filter;  // or null
};
constexpr Counted kCounted[] = {
    {"all", "raw_syscalls:sys_enter", nullptr},
    {"read", "syscalls:sys_enter_read", nullptr},
    {"read_eagain", "syscalls:sys_exit_read", "ret < 0"},
    {"write_echo", "syscalls:sys_enter_write", "count == 64"},
    {"write_wakeup", "syscalls:sys_enter_write", "count != 64"},
    {"sendto_echo", "syscalls:sys_enter_sendto", "len == 64"},
    {"epoll_wait", "syscalls:sys_enter_epoll_wait", nullptr},
    {"epoll_pwait", "syscalls:sys_enter_epoll_pwait", nullptr},
    // The course's timed polls (a nanosecond timeout; Linux 5.11 and later).
    {"epoll_pwait2", "syscalls:sys_enter_epoll_pwait2", nullptr},
    {"epoll_ctl", "syscalls:sys_enter_epoll_ctl", nullptr},
    {"futex", "syscalls:sys_enter_futex", nullptr},
    {"context_switches", "context-switches", nullptr},
};

// `perf stat -x, -o out -e ... -p pid`, started; its pid.
pid_t start_perf(int pid, const std::string& out) {
  std::vector<std::string> args = {"perf", "stat", "-x,", "-o", out};
  for (const Counted& c : kCounted) {
    args.insert(args.end(), {"-e", c.event});
    if (c.filter != nullptr) args.insert(args.end(), {"--filter", c.filter});
  }
  args.insert(args.end(), {"-p", std::to_string(pid)});
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_t perf = 0;
  if (::posix_spawnp(&perf, "perf", nullptr, nullptr, argv.data(), environ) != 0) {
    die("--syscalls: cannot run perf (apt-get install linux-perf)");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // attached
  return perf;
}

// Stops perf and reads its counts, in kCounted's order, as JSON fields.
std::string stop_perf(pid_t perf, const std::string& out) {
  ::kill(perf, SIGINT);
  int status = 0;
  ::waitpid(perf, &status, 0);
  std::ifstream f(out);
  std::string line, json;
  std::size_t i = 0;
  while (std::getline(f, line) && i < std::size(kCounted)) {
    if (line.empty() || line[0] == '#') continue;
    std::string count = line.substr(0, line.find(','));
    if (count.empty() || count[0] < '0' || count[0] > '9') {
      die("--syscalls: perf could not count " + std::string(kCounted[i].event) +
          " ('" + line + "'; as root, or perf_event_paranoid -1)");
    }
    json += std::string(i == 0 ? "" : ",") + "\"" + kCounted[i].name +
            "\":" + count;
    ++i;
  }
  if (i != std::size(kCounted)) die("--syscalls: perf printed no counts");
  return json;
}

// --mark: says `what` on its own line, then waits for the reply line.
void mark(const Args& a, const char* what) {
  if (!a.mark) return;
  std::printf("%s\n", what);
  std::fflush(stdout);
  char line[16];
  if (std::fgets(line, sizeof line, stdin) == nullptr) die("--mark: no reply");
}

}  // namespace

int main(int argc, char** argv) {
  Args a = parse(argc, argv);
  std::vector<Conn> conns;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < a.conns; ++i) conns.push_back({dial(a.port), a.round_trips, 0});
  for (Conn& c : conns) round_trip(c.fd);
  auto connected = std::chrono::steady_clock::now();
  std::string perf_out = "/tmp/echo_client_perf." + std::to_string(::getpid());
  pid_t perf = a.syscalls ? start_perf(a.server_pid, perf_out) : 0;
  mark(a, "start");
  long long cpu0 = cpu_ns(a.server_pid);
  auto t1 = std::chrono::steady_clock::now();
  run_round_trips(conns);
  auto t2 = std::chrono::steady_clock::now();
  long long cpu1 = cpu_ns(a.server_pid);
  mark(a, "end");
  std::string counts = a.syscalls ? stop_perf(perf, perf_out) : "";
  if (a.syscalls) ::unlink(perf_out.c_str());
  for (Conn& c : conns) ::close(c.fd);
  using ns = std::chrono::nanoseconds;
  std::printf(
      "{\"conns\":%d,\"round_trips\":%lld,\"connect_ns\":%lld,"
      "\"echo_ns\":%lld,\"server_cpu_ns\":%lld,\"syscalls\":{%s}}\n",
      a.conns, static_cast<long long>(a.conns) * a.round_trips,
      static_cast<long long>(std::chrono::duration_cast<ns>(connected - t0).count()),
      static_cast<long long>(std::chrono::duration_cast<ns>(t2 - t1).count()),
      cpu1 - cpu0, counts.c_str());
  return 0;
}
