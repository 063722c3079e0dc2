// The "too many goroutines" anti-pattern against a worker pool, measured on
// every green-thread stage: the same sum over n items, once with a
// goroutine per item, once with GOMAXPROCS workers fed by a channel.
//
// Usage: demo [--n=N] [--procs=P]   (default n = 200000, P = 2)
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "benchmarks/stages.h"
#include "examples/patterns/spawn_per_item.h"
#include "stage2_global_queue/stack.h"

namespace {

using Clock = std::chrono::steady_clock;

// A little work per item, so that it is not all scheduling.
std::int64_t f(std::int64_t i) {
  std::int64_t x = i;
  for (int k = 0; k < 50; ++k) x = (x * 1103515245 + 12345) % 2147483648;
  return x % 1000;
}

template <class Api>
void row(const char* how, std::int64_t n, int procs, bool pooled) {
  std::int64_t sum = 0;
  auto start = Clock::now();
  auto s = gmp::run_with<Api>(procs, [&] {
    sum = pooled ? gmp::patterns::sum_with_workers<Api>(n, procs, f)
                 : gmp::patterns::sum_spawn_per_item<Api>(n, f);
  });
  double ms =
      std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  std::printf("  %-20s %-16s %9.1f ms %10llu %10llu   sum %lld\n",
              std::string(Api::kName).c_str(), how, ms,
              static_cast<unsigned long long>(s.goroutines_created),
              static_cast<unsigned long long>(s.stacks_mapped),
              static_cast<long long>(sum));
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t n = 200000;
  int procs = 2;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--n=", 4) == 0) {
      n = std::atoll(argv[i] + 4);
    } else if (std::strncmp(argv[i], "--procs=", 8) == 0) {
      procs = std::atoi(argv[i] + 8);
    } else {
      std::fprintf(stderr, "usage: %s [--n=N] [--procs=P]\n", argv[0]);
      return 2;
    }
  }
  if (n < 0 || procs < 1) {
    std::fprintf(stderr, "demo: need n >= 0 and procs >= 1\n");
    return 2;
  }
  std::printf("Too many goroutines vs a worker pool: sum of f(i), i < %lld, "
              "GOMAXPROCS %d\n\n", static_cast<long long>(n), procs);
  std::printf("  %-20s %-16s %12s %10s %10s\n", "stage", "how", "time",
              "goroutines", "stacks");
  gmp::bench::for_each_type<gmp::bench::Stages>([&]<class Api>() {
    if constexpr (!Api::kBlockingHoldsThread) {  // stage 1 has no stacks
      row<Api>("goroutine per item", n, procs, false);
      row<Api>("worker pool", n, procs, true);
    }
  });
  std::printf("\nStacks are mapped in slabs of %zu: the pool's GOMAXPROCS "
              "goroutines fit in the first, whatever n is.\n",
              gmp::stage2::StackPool::kStacksPerSlab);
}
