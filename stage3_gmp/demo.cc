// Stage 3 demo: Ps with local queues, seen working.
//
//   1. The notes' work-stealing scenario: one P holds all the work, the
//      others are idle; printed as they steal and the load evens out.
//   2. Stage 2 and stage 3 on the same workloads, side by side, with the
//      counters that explain the difference (global lock, steals, runnext).
//
// Usage: demo [--procs=N] [--quick]   (part 1 on N Ps, default 4; --quick:
//        smaller workloads, as the demo's test runs it)
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "stage2_global_queue/api.h"
#include "stage3_gmp/api.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// The per-P queue lengths of a schedtrace summary line: "[12 0 3 0]".
std::string queues(const gmp::stage3::Runtime& rt) {
  std::string line = rt.schedtrace(false);
  auto open = line.rfind('['), close = line.rfind(']');
  return open == std::string::npos ? line : line.substr(open, close - open + 1);
}

// Part 1: 400 goroutines of ~1 ms of work each, all made by main on its
// own P. A plain thread samples the queues every 2 ms.
void work_stealing(int procs) {
  using namespace gmp::stage3;
  std::printf("1. Work stealing: %d goroutines made on one P, %d Ps in all\n",
              400, procs);
  std::printf("   per-P run queue lengths (runnext not counted), every 2 ms:\n");
  Runtime rt(Config{.procs = procs, .debug = ""});
  std::atomic<bool> done{false};
  auto start = Clock::now();
  std::thread sampler([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (int i = 0; !done.load() && i < 12; ++i) {
      std::printf("   %5.1f ms  P queues %s\n", ms_since(start),
                  queues(rt).c_str());
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  rt.run([&] {
    WaitGroup wg;
    wg.add(400);
    for (int i = 0; i < 400; ++i) {
      go([&] {
        auto until = Clock::now() + std::chrono::microseconds(1000);
        while (Clock::now() < until) {
        }
        wg.done();
      });
    }
    wg.wait();
  });
  done.store(true);
  sampler.join();
  Stats s = rt.stats();
  std::printf("   done in %.0f ms: %llu steals moved %llu goroutines "
              "(%llu victims tried); the GRQ gave %llu\n\n",
              ms_since(start), (unsigned long long)s.steals,
              (unsigned long long)s.stolen,
              (unsigned long long)s.steal_attempts,
              (unsigned long long)s.grq_goroutines);
}

// Part 2: the same workload on both stages, with each one's counters.
// 8 parents each spawn 2000 empty goroutines; the storm runs twice in the
// same runtime and the second is measured (the first maps the stacks).
int children_per_parent = 2000;  // --quick: 200

template <class Api>
double spawn_storm_ns(int procs, typename Api::Stats* stats) {
  constexpr int kParents = 8;
  const int kChildren = children_per_parent;
  double ns = 0;
  typename Api::Runtime rt([procs] {
    typename Api::Config c;
    c.procs = procs;
    return c;
  }());
  rt.run([&] {
    for (int round = 0; round < 2; ++round) {
      auto start = Clock::now();
      typename Api::WaitGroup wg;
      wg.add(kParents * kChildren);
      for (int p = 0; p < kParents; ++p) {
        Api::go([&] {  // the parents spread over the Ps
          for (int c = 0; c < kChildren; ++c) Api::go([&] { wg.done(); });
        });
      }
      wg.wait();
      ns = ms_since(start) * 1e6 / (kParents * kChildren);
    }
  });
  *stats = rt.stats();
  return ns;
}

void side_by_side() {
  std::printf("2. Spawn storm: 8 goroutines each spawn %d empty goroutines\n",
              children_per_parent);
  std::printf("   %5s | %-34s | %-40s\n", "procs", "stage 2 (one global queue)",
              "stage 3 (Ps, local queues)");
  std::printf("   %5s | %8s %8s %8s %7s | %8s %8s %8s %6s %6s\n", "", "ns/gor",
              "lock/gor", "contend", "wait/g", "ns/gor", "lock/gor", "contend",
              "steals", "runnxt");
  for (int procs : {1, 2, 4}) {
    gmp::stage2::Stats s2;
    gmp::stage3::Stats s3;
    double t2 = spawn_storm_ns<gmp::stage2::Api>(procs, &s2);
    double t3 = spawn_storm_ns<gmp::stage3::Api>(procs, &s3);
    auto per = [](std::uint64_t v, const auto& s) {
      return double(v) / double(s.goroutines_created);
    };
    auto pct = [](const gmp::LockCounters& c) {
      return c.acquisitions ? 100.0 * c.contended / c.acquisitions : 0.0;
    };
    std::printf("   %5d | %8.0f %8.2f %7.1f%% %5.0fns | %8.0f %8.2f %7.1f%% "
                "%6llu %6llu\n",
                procs, t2, per(s2.sched_lock.acquisitions, s2),
                pct(s2.sched_lock), per(s2.sched_lock.wait_ns, s2), t3,
                per(s3.sched_lock.acquisitions, s3), pct(s3.sched_lock),
                (unsigned long long)s3.steals,
                (unsigned long long)s3.runnext_hits);
  }
  std::printf("   Stage 3 takes the global lock for a few goroutines in a "
              "hundred (overflow,\n   fairness, idle Ms), not three times "
              "for each one.\n");
}

}  // namespace

int main(int argc, char** argv) {
  int procs = 4;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--procs=", 8) == 0) {
      procs = std::atoi(argv[i] + 8);
    } else if (std::strcmp(argv[i], "--quick") == 0) {
      children_per_parent = 200;
    } else {
      std::fprintf(stderr, "usage: %s [--procs=N] [--quick]\n", argv[0]);
      return 2;
    }
  }
  if (procs < 2 || procs > gmp::stage3::kMaxProcs) {
    std::fprintf(stderr, "--procs must be between 2 and %d\n",
                 gmp::stage3::kMaxProcs);
    return 2;
  }
  std::printf("== Stage 3: the G-M-P scheduler ==\n\n");
  work_stealing(procs);
  side_by_side();
  return 0;
}
