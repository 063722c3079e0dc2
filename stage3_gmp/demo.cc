// Stage 3 demo: Ps with local queues, seen working.
//
//   1. The notes' work-stealing scenario (docs/course/notes.md): one P
//      holds all the work, the others are idle; the queues are printed as
//      the others take it (from the GRQ, where the full queue overflows,
//      then by stealing) and the load evens out, until every queue is
//      empty.
//   2. Stage 2 and stage 3 on the same workloads, side by side, with the
//      counters that explain the difference (global lock, steals, runnext).
//
// Usage: demo [--procs=N] [--quick]   (part 1 on N Ps, default 4; --quick:
//        smaller workloads, as the demo's test runs it)
#include <algorithm>
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

// The queues of a schedtrace summary line: "GRQ 12, P queues [12 0 3 0]".
std::string queues(const gmp::stage3::Runtime& rt) {
  std::string line = rt.schedtrace(false);
  auto grq = line.find("runqueue=");
  auto open = line.rfind('['), close = line.rfind(']');
  if (grq == std::string::npos || open == std::string::npos) return line;
  grq += std::strlen("runqueue=");
  return "GRQ " + line.substr(grq, line.find(' ', grq) - grq) +
         ", P queues " + line.substr(open, close - open + 1);
}

// True when the line from queues() shows no goroutine waiting anywhere.
bool all_empty(const std::string& q) {
  return q.find_first_of("123456789") == std::string::npos;
}

constexpr int kStealWork = 400;     // goroutines made by main
constexpr int kWorkUs = 1000;       // CPU each one spins for, in us
constexpr int kSampleEveryMs = 10;  // the sampler's period

// A plain thread prints the queues about every kSampleEveryMs (it wakes
// late when the goroutines hold every core), a line when they changed,
// from the first goroutine queued until every queue is empty again (or the
// run is over).
void sample_queues(const gmp::stage3::Runtime& rt, Clock::time_point start,
                   const std::atomic<bool>& done) {
  std::string last;
  bool seen_work = false;
  for (;;) {
    bool over = done.load();  // before the queues: over means all are empty
    std::string q = queues(rt);
    if (!all_empty(q)) {
      seen_work = true;
      if (q != last) {
        std::printf("   %6.1f ms  %s\n", ms_since(start), q.c_str());
      }
      last = q;
    } else if (seen_work || over) {
      std::printf("   %6.1f ms  every queue empty: %s\n", ms_since(start),
                  over ? "the run is over" : "the last goroutines run");
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kSampleEveryMs));
  }
}

// Part 1: kStealWork goroutines of kWorkUs of CPU each (no scheduling
// point inside), all made by main on its own P; the other Ps steal.
void work_stealing(int procs) {
  using namespace gmp::stage3;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const double cpu_ms = kStealWork * kWorkUs / 1000.0;
  const int usable = std::min<int>(procs, static_cast<int>(cores));
  std::printf("1. One P makes all the work: main makes %d goroutines on its "
              "P, %d Ps in all.\n   Each spins %d us of CPU, %.0f ms in "
              "all: ideally %.0f ms on %d Ps (cores here: %u, so %.0f ms at "
              "best).\n",
              kStealWork, procs, kWorkUs, cpu_ms, cpu_ms / procs, procs,
              cores, cpu_ms / usable);
  std::printf("   Queue lengths (runnext not counted), sampled about every "
              "%d ms:\n", kSampleEveryMs);
  Runtime rt(Config{.procs = procs, .debug = ""});
  std::atomic<bool> done{false};
  auto start = Clock::now();
  std::thread sampler([&] { sample_queues(rt, start, done); });
  rt.run([&] {
    WaitGroup wg;
    wg.add(kStealWork);
    for (int i = 0; i < kStealWork; ++i) {
      go([&] {
        auto until = Clock::now() + std::chrono::microseconds(kWorkUs);
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
  std::printf("   done in %.0f ms (ideal: %.0f ms, Ps and cores used: %d)\n"
              "   steals: %llu, moving %llu goroutines (victims tried: %llu)\n"
              "   overflows of a full local queue to the GRQ (half of it "
              "each): %llu\n   goroutines the GRQ gave (main among them): "
              "%llu, in batches: %llu\n\n",
              ms_since(start), cpu_ms / usable, usable,
              (unsigned long long)s.steals, (unsigned long long)s.stolen,
              (unsigned long long)s.steal_attempts,
              (unsigned long long)s.runq_overflows,
              (unsigned long long)s.grq_goroutines,
              (unsigned long long)s.grq_takes);
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
              "hundred (overflow,\n   fairness, idle Ms); stage 2 for each "
              "one, several times (lock/gor).\n");
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
