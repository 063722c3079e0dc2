// A program whose own code was built without stage 5's rules (a plain
// cc_test, BUILD): nothing of it can be preempted, and the runtime says so
// instead of staying silent.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>

#include "stage5_preemption/runtime.h"

namespace gmp::stage5 {
namespace {

using Clock = std::chrono::steady_clock;

__attribute__((noinline)) long step(long x) { return (x * 3 + 1) % 1000003; }

// A goroutine computes on the only P for 100 ms; sysmon asks it to yield
// after 10, and cannot stop it: once it has kept its P for two slices, the
// runtime says that no code of the program can be preempted and how to
// make it so, once.
TEST(PlainBuildDeathTest, NothingPreemptibleIsSaidOnce) {
  EXPECT_EXIT(
      {
        Config c;
        c.procs = 1;
        Runtime rt(c);
        for (int run = 0; run < 2; ++run) {
          rt.run([] {
            std::atomic<bool> started{false};
            go([&started] {
              started.store(true);
              auto until = Clock::now() + std::chrono::milliseconds(100);
              long x = 0;
              while (Clock::now() < until) x = step(x);
            });
            while (!started.load()) sleep_for(std::chrono::milliseconds(1));
          });
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(0),
      "^stage5: goroutine 2 has kept its P for [0-9]+ ms although asked to "
      "yield, and no code of this program can be preempted: .*"
      "preemptible_cc_binary.*\n$");
}

}  // namespace
}  // namespace gmp::stage5
