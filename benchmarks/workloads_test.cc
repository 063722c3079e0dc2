// Every workload on every stage, small and at several proc counts: the
// benchmarks measure programs that work, and create the goroutines they
// claim to.
#include <gtest/gtest.h>

#include "benchmarks/stages.h"
#include "testing/helpers.h"

namespace gmp::bench {
namespace {

constexpr int kItems = 200;

template <class W>
std::uint64_t goroutines_per_run(int items) {
  if constexpr (std::is_same_v<W, SpawnJoin>) return 1 + items;
  if constexpr (std::is_same_v<W, YieldPing>) return 1 + 2;
  if constexpr (std::is_same_v<W, ChanPingPong>) return 1 + 1;
  if constexpr (std::is_same_v<W, FanOutIn>) return 1 + W::kWorkers + 1;
  if constexpr (std::is_same_v<W, Skynet>) {  // the tree, plus main
    std::uint64_t nodes = 0;
    for (std::uint64_t level = 1; level <= std::uint64_t(items); level *= 10) {
      nodes += level;
    }
    return 1 + nodes;
  }
}

TEST(WorkloadsTest, EveryWorkloadRunsOnEveryStage) {
  for_each_type<Workloads>([]<class W>() {
    for_each_type<Stages>([]<class Api>() {
      if constexpr (!runs_on<W, Api>()) return;
      for (int procs : {1, 2, 4}) {
        SCOPED_TRACE(std::string(W::kName) + " on " +
                     std::string(Api::kName) + ", procs " +
                     std::to_string(procs));
        constexpr int kN = std::is_same_v<W, Skynet> ? 1000 : kItems;
        auto stats = run_with<Api>(procs_for<Api>(procs, W::kMaxBlocked),
                                   [] { W::template run<Api>(kN); });
        EXPECT_EQ(stats.goroutines_created, goroutines_per_run<W>(kN));
        EXPECT_EQ(stats.goroutines_finished, stats.goroutines_created);
        EXPECT_TRUE(testing::conserved(stats));
      }
    });
  });
}

}  // namespace
}  // namespace gmp::bench
