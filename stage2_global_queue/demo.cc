// Stage 2 demo: what green threads buy, and what the global queue costs.
//
//   1. 100,000 goroutines parked on one channel, on 2 OS threads: memory
//      per goroutine, measured (stage 1 would need 100,000 threads).
//   2. The program that starved stage 1's pool runs here on a single M.
//   3. Every scheduling decision takes the one global lock: its contention
//      grows with the number of Ms (the problem stage 3 solves).
//
// Usage: demo [--goroutines=N]   (part 1; default 100000)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "stage2_global_queue/runtime.h"

namespace {

using namespace gmp::stage2;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// A field of /proc/self/status in KiB ("VmSize", "VmRSS"), or a count.
long proc_status(const std::string& field) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) {
      return std::strtol(line.c_str() + field.size() + 1, nullptr, 10);
    }
  }
  return -1;
}

void wait_until_blocked(const Runtime& rt, long n) {
  while (rt.stats().goroutines_blocked < n) {
    sleep_for(std::chrono::milliseconds(1));
  }
}

// Part 1.
void many_parked(int n) {
  std::printf("1. %d goroutines parked on one channel, on 2 OS threads\n", n);
  long vm0 = proc_status("VmSize"), rss0 = proc_status("VmRSS");
  Runtime rt(Config{.procs = 2});
  rt.run([&] {
    Chan<int> ch;
    WaitGroup wg;
    wg.add(n);
    auto start = Clock::now();
    for (int i = 0; i < n; ++i) {
      go([&] {
        (void)ch.recv();
        wg.done();
      });
    }
    wait_until_blocked(rt, n);
    double spawn_ms = ms_since(start);
    long vm = proc_status("VmSize") - vm0, rss = proc_status("VmRSS") - rss0;
    std::printf("   spawned and parked in %.0f ms (%.2f us each); %ld OS threads "
                "in the process\n",
                spawn_ms, spawn_ms * 1000 / n, proc_status("Threads"));
    std::printf("   resident +%.0f MiB: %.1f KiB per goroutine (its stack's "
                "touched pages, its G)\n",
                rss / 1024.0, double(rss) / n);
    std::printf("   address space +%.1f GiB: %.0f KiB per goroutine (a %zu KiB "
                "stack and its guard)\n",
                vm / 1048576.0, double(vm) / n, rt.config().stack_size / 1024);
    start = Clock::now();
    ch.close();
    wg.wait();
    std::printf("   close(ch) woke them all; they finished in %.0f ms\n",
                ms_since(start));
  });
  std::printf("   (stage 1 would need %d OS threads for this; Go needs ~2 KiB "
              "per goroutine,\n   because its stacks start small and grow)\n\n",
              n);
}

// Part 2: stage 1's starving program (see stage1_threadpool/demo.cc).
void no_more_starvation() {
  std::printf("2. The program that starved stage 1's pool of 2 workers\n");
  Runtime rt(Config{.procs = 1});
  rt.run([&] {
    Chan<int> ch;
    WaitGroup wg;
    wg.add(2);
    go([&] { (void)ch.recv(); wg.done(); });
    wait_until_blocked(rt, 1);
    go([&] { ch.send(1); wg.done(); });
    wg.wait();
  });
  std::printf("   finished on a single M: its blocked goroutines parked and "
              "gave the M back\n\n");
}

// Part 3: 8 goroutines yielding 20,000 times each; every yield takes the
// global lock twice (to queue the goroutine, to pick the next one).
void contention() {
  constexpr int kGoroutines = 8, kYields = 20000;
  std::printf("3. One global run queue, one lock: %d goroutines x %d yields\n",
              kGoroutines, kYields);
  std::printf("   %5s %14s %12s %12s %16s\n", "Ms", "ns per yield", "lock/yield",
              "contended", "wait per yield");
  for (int procs : {1, 2, 4, 8}) {
    Runtime rt(Config{.procs = procs});
    double ms = 0;
    rt.run([&] {
      auto start = Clock::now();
      WaitGroup wg;
      wg.add(kGoroutines);
      for (int g = 0; g < kGoroutines; ++g) {
        go([&] {
          for (int i = 0; i < kYields; ++i) yield();
          wg.done();
        });
      }
      wg.wait();
      ms = ms_since(start);
    });
    gmp::LockCounters c = rt.stats().sched_lock;
    double ops = double(kGoroutines) * kYields;
    std::printf("   %5d %14.0f %12.2f %11.1f%% %13.0f ns\n", procs, ms * 1e6 / ops,
                c.acquisitions / ops,
                c.acquisitions ? 100.0 * c.contended / c.acquisitions : 0.0,
                c.wait_ns / ops);
  }
  std::printf("   More Ms do not make it faster: they queue for the lock (and "
              "wake each other).\n   Stage 3 gives each P its own queue, so most "
              "decisions need no shared lock.\n");
}

}  // namespace

int main(int argc, char** argv) {
  int n = 100000;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--goroutines=", 13) == 0) {
      n = std::atoi(argv[i] + 13);
    } else {
      std::fprintf(stderr, "usage: %s [--goroutines=N]\n", argv[0]);
      return 2;
    }
  }
  if (n < 1) {
    std::fprintf(stderr, "--goroutines must be at least 1\n");
    return 2;
  }
  std::printf("== Stage 2: green threads on M OS threads, one global run "
              "queue ==\n\n");
  try {
    many_parked(n);
  } catch (const std::exception& e) {  // e.g. out of memory mappings
    std::printf("   %s\n\n", e.what());
  }
  no_more_starvation();
  contention();
  return 0;
}
