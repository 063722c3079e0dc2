// Stage 1 demo: the two problems of a thread pool, measured.
//
//   1. Every goroutine that runs (or blocks) at the same time needs its own
//      OS thread: creating thousands costs time and memory, and switching
//      between them goes through the kernel.
//   2. A pool small enough to afford blocks its goroutines into a queue, and
//      starves for good when every worker waits for a goroutine that is
//      still in that queue.
//
// Usage: demo [--threads=N]   (N threads for part 1; default 10000)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "stage1_threadpool/runtime.h"

namespace {

using namespace gmp::stage1;
using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

// A field of /proc/self/status in KiB ("VmSize", "VmRSS"), or a count
// ("Threads").
long proc_status(const std::string& field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) {
      return std::strtol(line.c_str() + field.size() + 1, nullptr, 10);
    }
  }
  return -1;
}

// Part 1: n goroutines blocked at once take n threads.
void thread_cost(int n) {
  std::printf("1. Every goroutine that runs or blocks needs its own thread\n");
  long vm0 = proc_status("VmSize"), rss0 = proc_status("VmRSS");
  Runtime rt(Config{.procs = n});
  auto start = Clock::now();
  rt.run([&] {
    double create_us = us_since(start);  // all n workers exist by now
    WaitGroup gate;
    gate.add(1);
    for (int i = 1; i < n; ++i) go([&] { gate.wait(); });
    while (rt.stats().goroutines_blocked < n - 1) sleep_for(std::chrono::milliseconds(1));
    long vm = proc_status("VmSize") - vm0, rss = proc_status("VmRSS") - rss0;
    std::printf("   %d goroutines blocked at once: %ld OS threads in the process\n",
                n - 1, proc_status("Threads"));
    std::printf("   creating %d worker threads took %.1f ms (%.1f us each)\n", n,
                create_us / 1000, create_us / n);
    std::printf("   address space +%.1f GiB (%.0f KiB per thread), resident +%.1f MiB "
                "(%.1f KiB per thread)\n",
                vm / 1048576.0, double(vm) / n, rss / 1024.0, double(rss) / n);
    std::printf("   (Go: a goroutine starts with a 2 KiB stack, and needs no thread "
                "while it waits)\n");
    gate.done();
  });
}

// Part 1b: handing a value between two goroutines wakes an OS thread.
void switch_cost() {
  constexpr int kRounds = 20000;
  Runtime rt(Config{.procs = 2});
  double us = 0;
  rt.run([&] {
    Chan<int> ping, pong;
    go([&] {
      for (int i = 0; i < kRounds; ++i) pong.send(*ping.recv());
    });
    auto start = Clock::now();
    for (int i = 0; i < kRounds; ++i) {
      ping.send(i);
      (void)pong.recv();
    }
    us = us_since(start);
  });
  std::printf("   a channel hand-off between two goroutines: %.2f us (a kernel "
              "wakeup of a thread;\n   the notes give ~0.2 us for a goroutine "
              "switch in Go)\n\n",
              us / (2.0 * kRounds));
}

// Part 2: a pool small enough to afford queues its blocked goroutines.
double sleepers(int procs, int goroutines) {
  Runtime rt(Config{.procs = procs});
  auto start = Clock::now();
  rt.run([&] {
    WaitGroup wg;
    wg.add(goroutines);
    for (int i = 0; i < goroutines; ++i) {
      go([&] {
        sleep_for(std::chrono::milliseconds(10));
        wg.done();
      });
    }
    wg.wait();
  });
  return us_since(start) / 1000;
}

void pool_size_dilemma() {
  std::printf("2. A pool of affordable size makes blocked goroutines queue\n");
  std::printf("   100 goroutines that each sleep 10 ms:\n");
  for (int procs : {4, 101}) {
    std::printf("   %4d workers: %6.1f ms\n", procs, sleepers(procs, 100));
  }
  std::printf("   (Go runs them all in ~10 ms on GOMAXPROCS threads)\n\n");
}

// Part 3: main waits for a consumer, which waits for a producer queued
// behind them: with 2 workers nobody can ever run again.
void starving_program(int procs) {
  Runtime rt(Config{.procs = procs});
  rt.run([&] {
    Chan<int> ch;
    WaitGroup wg;
    wg.add(2);
    go([&] { (void)ch.recv(); wg.done(); });
    while (rt.stats().goroutines_blocked < 1) sleep_for(std::chrono::milliseconds(1));
    go([&] { ch.send(1); wg.done(); });
    wg.wait();
  });
}

// Runs starving_program(procs) in a child process; prints what it printed.
void run_child(int procs) {
  int fds[2];
  if (pipe(fds) != 0) return;
  std::fflush(stdout);
  pid_t pid = fork();  // safe: every runtime thread has been joined
  if (pid == 0) {
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    alarm(10);  // a bug must not hang the demo
    starving_program(procs);
    std::fprintf(stderr, "main returned: the program finished normally\n");
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  std::printf("   with %d workers:\n", procs);
  for (size_t at = 0; at < out.size();) {
    size_t end = out.find('\n', at);
    if (end == std::string::npos) end = out.size();
    std::printf("   | %s\n", out.substr(at, end - at).c_str());
    at = end + 1;
  }
  if (WIFEXITED(status)) {
    std::printf("   exit status %d\n\n", WEXITSTATUS(status));
  } else {
    std::printf("   killed by signal %d\n\n", WTERMSIG(status));
  }
}

void starvation() {
  std::printf("3. The pool starves when every worker waits for a queued goroutine\n");
  run_child(2);
  run_child(3);
  std::printf("   Stage 2 fixes both problems: goroutines become user-space threads\n"
              "   that give their OS thread back while they wait.\n");
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 10000;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      threads = std::atoi(argv[i] + 10);
    } else {
      std::fprintf(stderr, "usage: %s [--threads=N]\n", argv[0]);
      return 2;
    }
  }
  if (threads < 2 || threads > kMaxProcs) {
    std::fprintf(stderr, "--threads must be between 2 and %d\n", kMaxProcs);
    return 2;
  }
  std::printf("== Stage 1: goroutines as tasks on a pool of OS threads ==\n\n");
  try {
    thread_cost(threads);
  } catch (const std::exception& e) {  // e.g. the thread limit was reached
    std::printf("   %s\n", e.what());
  }
  switch_cost();
  pool_size_dilemma();
  starvation();
  return 0;
}
