// Runs one workload of workloads.h on one stage a fixed number of times, at
// GOMAXPROCS 1: a program for counting instructions (valgrind's callgrind
// counts the same total on every run, whatever else the machine does), to
// compare two versions of the runtime where timings are too noisy to.
// tools/bench/instructions.sh runs it on two commits.
//
// Usage: count STAGE WORKLOAD ITEMS REPS
//   count stage3_gmp yield 1000 12
// The cost of one item is (count(REPS=b) - count(REPS=a)) / ((b-a) * ITEMS):
// the runtime's start and end cancel out.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>

#include "benchmarks/stages.h"

namespace gmp::bench {
namespace {

// The workloads worth counting: the scheduler's hot paths.
using Counted =
    std::tuple<SpawnJoin, YieldPing, ChanPingPong, FanOutIn, Skynet, SelectPingPong,
               TimerChurn>;

template <class Api>
bool run_named(const std::string& workload, int items, int reps) {
  bool found = false;
  for_each_type<Counted>([&]<class W>() {
    if (workload != W::kName) return;
    found = true;
    run_with<Api>(1, [&] {
      for (int i = 0; i < reps; ++i) W::template run<Api>(items);
    });
  });
  return found;
}

}  // namespace
}  // namespace gmp::bench

int main(int argc, char** argv) {
  using namespace gmp::bench;
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s STAGE WORKLOAD ITEMS REPS\n", argv[0]);
    return 2;
  }
  const std::string stage = argv[1], workload = argv[2];
  const int items = std::atoi(argv[3]), reps = std::atoi(argv[4]);
  bool found = false;
  for_each_type<Stages>([&]<class Api>() {
    if (stage == Api::kName) found = run_named<Api>(workload, items, reps);
  });
  if (!found) {
    std::fprintf(stderr, "count: no workload '%s' on stage '%s'\n",
                 workload.c_str(), stage.c_str());
    return 2;
  }
  return 0;
}
