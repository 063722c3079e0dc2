// A small, fixed workload that shows each scheduler's moves in a trace:
// a burst of goroutines spawned on one P (stage 3 on: stolen by the other
// P), channel ping-pong pairs, yields, short sleeps, and on stages 4-5
// blocking calls (hand-offs) and on stage 5 a goroutine that never yields
// (preempted by sysmon).
//
//   workload STAGE TRACE.json [PROCS]   STAGE: stage2 ... stage5
//
// The trace tests (trace_test.sh) and `./course trace` run it; the same
// work on two stages makes their timelines comparable.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "stage2_global_queue/api.h"
#include "stage3_gmp/api.h"
#include "stage4_syscalls/api.h"
#include "stage5_preemption/api.h"

namespace {

using namespace std::chrono_literals;

// Busy work of about `d`, with no scheduling point.
void spin_for(std::chrono::microseconds d) {
  auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

template <class A>
void burst() {  // 64 goroutines of 200 us each, made on one P
  typename A::WaitGroup wg;
  for (int i = 0; i < 64; ++i) {
    wg.add(1);
    A::go([&wg] {
      spin_for(200us);
      wg.done();
    });
  }
  wg.wait();
}

template <class A>
void ping_pong() {  // 4 pairs, 50 round trips each, with yields and sleeps
  typename A::WaitGroup wg;
  for (int pair = 0; pair < 4; ++pair) {
    wg.add(2);
    auto ping = std::make_shared<typename A::template Chan<int>>();
    auto pong = std::make_shared<typename A::template Chan<int>>();
    A::go([ping, pong, &wg] {
      for (int i = 0; i < 50; ++i) {
        ping->send(i);
        pong->recv();
        if (i % 10 == 0) A::yield();
      }
      wg.done();
    });
    A::go([ping, pong, &wg] {
      for (int i = 0; i < 50; ++i) {
        pong->send(*ping->recv());
        if (i == 25) A::sleep_for(1ms);
      }
      wg.done();
    });
  }
  wg.wait();
}

template <class A>
void blocking_calls() {  // 4 goroutines in 3 ms system calls
  typename A::WaitGroup wg;
  for (int i = 0; i < 4; ++i) {
    wg.add(1);
    A::go([&wg] {
      gmp::stage4::blocking([] { ::usleep(3000); });
      wg.done();
    });
  }
  wg.wait();
}

// Whether `end` has passed: a call of user code, so a safe point for
// cooperative preemption (stage 5 under ThreadSanitizer).
[[gnu::noinline]] bool past(std::chrono::steady_clock::time_point end) {
  return std::chrono::steady_clock::now() >= end;
}

// A loop of this file's own code (the clock read only every 4096 rounds),
// so that stage 5's signal finds it at a safe point.
void busy_loop(std::chrono::milliseconds d) {
  auto end = std::chrono::steady_clock::now() + d;
  for (unsigned long n = 1;; ++n) {
    if (n % 4096 == 0 && past(end)) return;
  }
}

template <class A>
void long_runner() {  // 30 ms without a scheduling point
  typename A::WaitGroup wg;
  wg.add(1);
  A::go([&wg] {
    busy_loop(30ms);
    wg.done();
  });
  A::sleep_for(1ms);
  wg.wait();
}

template <class A>
int run(const char* path, int procs) {
  typename A::Config cfg;
  cfg.procs = procs;
  cfg.trace = path;
  // Stage 5's sysmon sleeps up to one time slice while goroutines run: with
  // a 1 ms slice it looks often enough, within this short run, to see a
  // 3 ms call twice (a hand-off) and to preempt the 30 ms loop.
  if constexpr (requires { cfg.time_slice; }) cfg.time_slice = 1ms;
  typename A::Runtime rt(cfg);
  rt.run([] {
    burst<A>();
    ping_pong<A>();
    if constexpr (std::is_base_of_v<gmp::stage4::Runtime, typename A::Runtime>) {
      blocking_calls<A>();
    }
    if constexpr (std::is_same_v<A, gmp::stage5::Api>) long_runner<A>();
  });
  std::printf("%s: %llu goroutines, trace in %s\n", std::string(A::kName).c_str(),
              static_cast<unsigned long long>(rt.stats().goroutines_created),
              path);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: %s stage2|stage3|stage4|stage5 TRACE.json [PROCS]\n",
                 argv[0]);
    return 2;
  }
  std::string_view stage = argv[1];
  int procs = argc == 4 ? std::atoi(argv[3]) : 2;
  try {
    if (stage == "stage2") return run<gmp::stage2::Api>(argv[2], procs);
    if (stage == "stage3") return run<gmp::stage3::Api>(argv[2], procs);
    if (stage == "stage4") return run<gmp::stage4::Api>(argv[2], procs);
    if (stage == "stage5") return run<gmp::stage5::Api>(argv[2], procs);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "workload: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "workload: unknown stage \"%s\" (stage2 ... stage5)\n",
               argv[1]);
  return 2;
}
