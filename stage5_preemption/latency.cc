// Stage 5's preemption latency workload (latency.h).
#include "stage5_preemption/latency.h"

namespace gmp::stage5 {

namespace {
using Clock = std::chrono::steady_clock;
volatile long u = 0;  // the notes' variable (note 001, docs/course/notes.md)

__attribute__((noinline)) void step() { u = u - 2; }  // a safe point
}  // namespace

void busy_loop(std::chrono::nanoseconds d, bool with_calls) {
  auto until = Clock::now() + d;
  while (Clock::now() < until) {
    for (int i = 0; i < 1000000; ++i) {
      if (with_calls) {
        step();
      } else {
        u = u - 2;
      }
    }
  }
}

double sleeper_behind_loop_ms(Preempt mode, bool with_calls,
                              std::chrono::nanoseconds time_slice) {
  Config c;
  c.procs = 1;
  c.debug = "";
  c.preempt = mode;
  c.time_slice = time_slice;
  Runtime rt(c);
  double waited = 0;
  rt.run([&] {
    go([with_calls] { busy_loop(std::chrono::milliseconds(100), with_calls); });
    auto t = Clock::now();
    sleep_for(std::chrono::milliseconds(1));
    waited = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  });
  return waited;
}

}  // namespace gmp::stage5
