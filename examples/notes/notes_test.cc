// The notes' programs (examples/notes/) behave as the notes say
// (docs/course/notes.md tells the notes). Note 001's program ends wherever
// a P is free for main: on stage 5 with one P (the loop is preempted), on
// every stage with two, and on stage 1 with one thread (main keeps it; the
// loop starts after). Its being stuck on stages 2-4 with one P is what the
// demo shows, in processes it kills (demo_test.sh): a test cannot undo it. Note 003's adaptiveGOMAXPROCS
// moves GOMAXPROCS as its usage readings say, and returns with its context.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "benchmarks/stages.h"
#include "examples/notes/adaptive_gomaxprocs.h"
#include "examples/notes/tight_loop.h"
#include "stage5_preemption/async_preempt.h"

namespace gmp::notes {
namespace {

constexpr const char* kLine = "go 1.13 has never been here";

template <class A>
std::string note001(int procs) {
  std::atomic<bool> stop{false};
  std::string said;
  run_with<A>(procs, [&] { tight_loop_then_after<A>(stop, said); });
  return said;
}

TEST(NotesTest, Note001EndsOnStage5WithOneP) {
  if (!stage5::kAsyncPreemptSupported) {
    GTEST_SKIP() << "no asynchronous preemption in this build";
  }
  EXPECT_EQ(note001<stage5::Api>(1), kLine);
}

TEST(NotesTest, Note001EndsWhereASecondPIsFree) {
  bench::for_each_type<bench::Stages>([]<class A>() {
    SCOPED_TRACE(std::string(A::kName));
    EXPECT_EQ(note001<A>(2), kLine);
  });
}

TEST(NotesTest, Note001EndsOnStage1WithOneThread) {
  EXPECT_EQ(note001<stage1::Api>(1), kLine);
}

// Usage readings of 95, 95, 95, 10, 10, 10 percent on a 2-CPU machine,
// from GOMAXPROCS 1: one P more at the first, none while at NumCPU, one
// less at the fourth, none at 1; the sixth cancels the context.
template <class A>
void adaptive_follows_usage() {
  std::vector<std::string> logs;
  int procs_seen = 0;
  run_with<A>(1, [&] {
    auto [ctx, cancel] = A::Context::with_cancel(A::Context::background());
    const std::vector<double> readings{95, 95, 95, 10, 10, 10};
    std::size_t i = 0;
    auto usage = [&, cancel = cancel] {
      if (i == 1) procs_seen = A::gomaxprocs(0);
      if (i + 1 == readings.size()) cancel();
      return i < readings.size() ? readings[i++] : 50.0;  // 50: no change
    };
    adaptive_gomaxprocs<A>(ctx, std::chrono::milliseconds(1), 2, usage,
                           [&](const std::string& s) { logs.push_back(s); });
    EXPECT_EQ(A::gomaxprocs(0), 1);
  });
  EXPECT_EQ(procs_seen, 2);
  EXPECT_EQ(logs, (std::vector<std::string>{"GOMAXPROCS increased to 2",
                                            "GOMAXPROCS decreased to 1"}));
}

TEST(NotesTest, AdaptiveGomaxprocsFollowsUsageUntilItsContextEnds) {
  adaptive_follows_usage<stage3::Api>();
  adaptive_follows_usage<stage4::Api>();
  adaptive_follows_usage<stage5::Api>();
}

}  // namespace
}  // namespace gmp::notes
