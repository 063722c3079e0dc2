// Every workload on every stage, small and at several proc counts: the
// benchmarks measure programs that work, and create the goroutines they
// claim to.
#include <gtest/gtest.h>

#include "benchmarks/stages.h"
#include "testing/helpers.h"

namespace gmp::bench {
namespace {

constexpr int kItems = 200;

TEST(WorkloadsTest, EveryWorkloadRunsOnEveryStage) {
  for_each_type<Workloads>([]<class W>() {
    for_each_type<Stages>([]<class Api>() {
      if constexpr (!runs_on<W, Api>()) return;
      for (int procs : {1, 2, 4}) {
        SCOPED_TRACE(std::string(W::kName) + " on " +
                     std::string(Api::kName) + ", procs " +
                     std::to_string(procs));
        constexpr int kN = std::is_same_v<W, Skynet> ? 1000 : kItems;  // 10^k
        auto stats = run_with<Api>(procs_for<Api>(procs, W::kMaxBlocked),
                                   [] { W::template run<Api>(kN); });
        EXPECT_EQ(stats.goroutines_created, 1 + W::goroutines(kN));  // + main
        EXPECT_EQ(stats.goroutines_finished, stats.goroutines_created);
        EXPECT_TRUE(testing::conserved(stats));
      }
    });
  });
}

}  // namespace
}  // namespace gmp::bench
