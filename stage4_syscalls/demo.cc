// Stage 4 demo: goroutines that wait for the outside world.
//
//   1. The notes' (docs/course/notes.md) hand-off picture: a goroutine blocked
//      in a system call while the others keep running on its former P, printed
//      as it happens.
//   2. What is still wrong: every blocking call hands its P off, even a
//      quick one; and a goroutine that never calls the runtime keeps its P.
//
// Stage 4 against the earlier stages (an echo server with thousands of
// connections against stage 1's thread per connection; 8 goroutines in
// 200 ms calls on 1 P, stage 3 vs 4) is the I/O demo, above the stages:
// examples/io/demo.cc (`./course demo io`).
//
// Usage: demo
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

#include "stage3_gmp/api.h"
#include "stage4_syscalls/api.h"

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// "[ 12.3 ms] G2 on M0/P0: what", from inside a goroutine. The M and P
// are the runtime's internals (stage3_gmp/m.h), read for the picture.
std::mutex print_mu;
Clock::time_point t0;
void say(const char* what) {
  auto* m = gmp::stage3::getm();
  std::lock_guard lk(print_mu);
  std::printf("   [%6.1f ms] G%llu on M%d/%s: %s\n", ms_since(t0),
              (unsigned long long)m->curg->goid.load(), m->id,
              m->p ? ("P" + std::to_string(m->p->id)).c_str() : "no P", what);
}

void handoff_picture() {
  using namespace gmp::stage4;
  std::printf("1. Hand-off, as in the notes: GOMAXPROCS=1; G2 blocks 200 ms "
              "in a system call, G3 counts\n");
  Runtime rt(Config{{.procs = 1, .debug = ""}});
  rt.run([&rt] {
    t0 = Clock::now();
    std::atomic<bool> stop{false};
    WaitGroup wg;
    wg.add(2);
    go([&] {
      say("enters the call (entersyscall: P0 is handed to another M)");
      blocking([] { ::usleep(200'000); });
      Stats s = rt.stats();  // which of exitsyscall's three ways it took
      say(s.exitsyscall_oldp     ? "back (exitsyscall: took its old P back)"
          : s.exitsyscall_otherp ? "back (exitsyscall: took another idle P)"
                                 : "back (exitsyscall: no idle P: it waited in "
                                   "the GRQ, its M parked)");
      stop.store(true);
      wg.done();
    });
    go([&] {
      long n = 0;
      for (int k = 0; !stop.load(); ++n) {
        if (n % 20000 == 0 && k++ < 4) say("counting");
        yield();
      }
      say(("stops, having counted " + std::to_string(n)).c_str());
      wg.done();
    });
    wg.wait();
  });
  Stats s = rt.stats();
  std::printf("   Ms made: %llu; hand-offs: %llu; returns: old P %llu, other "
              "P %llu, GRQ %llu\n\n",
              (unsigned long long)s.threads_created,
              (unsigned long long)s.handoffs,
              (unsigned long long)s.exitsyscall_oldp,
              (unsigned long long)s.exitsyscall_otherp,
              (unsigned long long)s.exitsyscall_grq);
}

// Part 2a: the eager hand-off's price on a call that does not block, on
// 1 P with another goroutine ready to run: each call gives the P to
// another M, and the caller comes back through the GRQ.
void quick_calls() {
  using namespace gmp::stage4;
  constexpr int kCalls = 2000;
  Runtime rt(Config{{.procs = 1, .debug = ""}});
  double plain_ns = 0, marked_ns = 0;
  rt.run([&] {
    std::atomic<bool> stop{false};
    WaitGroup other;
    other.add(1);
    go([&] {  // always runnable
      while (!stop.load()) yield();
      other.done();
    });
    auto t = Clock::now();
    for (int i = 0; i < kCalls; ++i) ::getppid();
    plain_ns = ms_since(t) * 1e6 / kCalls;
    t = Clock::now();
    for (int i = 0; i < kCalls; ++i) blocking([] { ::getppid(); });
    marked_ns = ms_since(t) * 1e6 / kCalls;
    stop.store(true);
    other.wait();
  });
  Stats s = rt.stats();
  std::printf("2. What is still wrong\n");
  std::printf("   a. Every blocking() call gives its P away, even a quick one. "
              "GOMAXPROCS=1, another\n      goroutine runnable: getppid() "
              "costs %.0f ns, inside blocking() %.0f ns (%llu hand-offs,\n"
              "      %llu returns through the GRQ, of %d calls)\n", plain_ns,
              marked_ns, (unsigned long long)s.handoffs,
              (unsigned long long)s.exitsyscall_grq, kCalls);
}

// Part 2b: a goroutine that never calls the runtime keeps its P.
void tight_loop() {
  using namespace gmp::stage4;
  Runtime rt(Config{{.procs = 1, .debug = ""}});
  double slept = 0;
  rt.run([&] {
    std::atomic<bool> stop{false};
    go([&] {
      auto until = Clock::now() + milliseconds(100);
      while (Clock::now() < until) {  // no call into the runtime
      }
      stop.store(true);
    });
    auto t = Clock::now();
    sleep_for(milliseconds(1));
    slept = ms_since(t);
  });
  std::printf("   b. GOMAXPROCS=1, a goroutine loops 100 ms without calling "
              "the runtime: a 1 ms\n      sleep_for took %.0f ms. Stage 5 "
              "adds sysmon and preemption.\n", slept);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    std::fprintf(stderr, "usage: %s (the demo takes no arguments)\n", argv[0]);
    return 2;
  }
  std::printf("== Stage 4: the network poller and blocking system calls ==\n\n");
  handoff_picture();
  quick_calls();
  tight_loop();
  return 0;
}
