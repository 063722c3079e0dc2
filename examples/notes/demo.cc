// The notes' programs, runnable: `./course demo notes [PROGRAM]`. The
// notes themselves are told in docs/course/notes.md.
//
//   tight-loop     note 001: a loop without calls and <-time.After(5ms) on
//                  one P, on every stage, each in a process of its own
//   adaptive       note 003: adaptiveGOMAXPROCS (a ticker and a context)
//                  while a load comes and goes
//   worker-pool    note 003: processItems, 3 workers
//   semaphore      note 003: processWithLimit, a weighted semaphore with a
//                  context that ends before every item got its turn
//   chan-semaphore note 003: a buffered channel as a semaphore, with a
//                  select timeout
//
// Without PROGRAM: all of them, in that order.
#include <sys/types.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "benchmarks/stages.h"
#include "examples/notes/adaptive_gomaxprocs.h"
#include "examples/notes/tight_loop.h"
#include "examples/patterns/chan_semaphore.h"
#include "examples/patterns/weighted_semaphore.h"
#include "examples/patterns/worker_pool.h"
#include "stage5_preemption/async_preempt.h"

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using Api = gmp::stage3::Api;  // the patterns' stage (any would do)

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

// Note 001 on stage A, in a child process (a stuck run cannot be undone):
// what main said and when, or "stuck" if it said nothing in 2 s.
template <class A>
void tight_loop_row() {
  int fds[2];
  if (pipe(fds) != 0) return;
  pid_t pid = fork();
  if (pid == 0) {  // the child: one P, the note's main
    close(fds[0]);
    std::atomic<bool> stop{false};
    std::string said;
    auto start = Clock::now();
    gmp::run_with<A>(1, [&] { gmp::notes::tight_loop_then_after<A>(stop, said); });
    char line[128];
    int n = std::snprintf(line, sizeof line, "%.1f ms: %s", ms_since(start),
                          said.c_str());
    if (write(fds[1], line, static_cast<std::size_t>(n)) < 0) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  auto give_up = Clock::now() + std::chrono::seconds(2);
  int status = 0;
  pid_t reaped = 0;
  while ((reaped = waitpid(pid, &status, WNOHANG)) == 0 &&
         Clock::now() < give_up) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  if (reaped == 0) {  // still running: stuck
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  char buf[128] = {};
  ssize_t got = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  std::printf("  %-20s %s\n", std::string(A::kName).c_str(),
              got > 0 ? ("main woke after " + std::string(buf)).c_str()
                      : "stuck: main never ran again (killed after 2 s)");
  std::fflush(stdout);
}

void tight_loop() {
  std::printf("Note 001: GOMAXPROCS 1, a loop without calls, then "
              "<-time.After(5ms) in main\n");
  std::fflush(stdout);  // before the children fork
  gmp::bench::for_each_type<gmp::bench::Stages>(
      []<class A>() { tight_loop_row<A>(); });
  std::printf(
      "  (stage 1: main keeps the only thread while it waits, so the loop "
      "has not started\n   yet; stages 2-4: the loop takes the P and never "
      "gives it back; stage 5's sysmon\n   preempts it after a time slice, "
      "10 ms)\n");
  if (!gmp::stage5::kAsyncPreemptSupported) {
    std::printf("  (this build has no asynchronous preemption: stage 5 "
                "preempts only at calls,\n   and the loop makes none)\n");
  }
  std::printf("\n");
}

// Note 003's adaptiveGOMAXPROCS (a ticker every 50 ms instead of 30 s): a
// load of 4 computing goroutines for 400 ms, then nothing.
void adaptive() {
  using A = Api;
  std::printf("Note 003: adaptiveGOMAXPROCS, ticking every 50 ms, from "
              "GOMAXPROCS 1; a load for\n400 ms, then none, for 900 ms in "
              "all\n");
  const int num_cpu = static_cast<int>(std::thread::hardware_concurrency());
  auto start = Clock::now();
  gmp::run_with<A>(1, [&] {
    auto [ctx, cancel] =
        A::Context::with_timeout(A::Context::background(), milliseconds(900));
    std::atomic<bool> loaded{true};
    A::WaitGroup load;
    for (int i = 0; i < 4; ++i) {
      load.add(1);
      A::go([&] {
        while (loaded.load()) {  // yields: each change stops the world
          gmp::bench::spin_work(1000);
          A::yield();
        }
        load.done();
      });
    }
    A::go([&] {
      A::sleep_for(milliseconds(400));
      loaded.store(false);
    });
    gmp::notes::CpuUsage<A> usage;
    gmp::notes::adaptive_gomaxprocs<A>(
        ctx, milliseconds(50), num_cpu, usage, [&](const std::string& s) {
          std::printf("  %5.0f ms  %s\n", ms_since(start), s.c_str());
        });
    load.wait();
    std::printf("  %5.0f ms  the context is done: adaptiveGOMAXPROCS "
                "returned, GOMAXPROCS %d\n",
                ms_since(start), A::gomaxprocs(0));
  });
  std::printf("  (NumCPU here: %d. The note's advice stands: an idle P "
              "costs nothing, and every\n   change is a stop of the "
              "world)\n\n",
              num_cpu);
}

void worker_pool() {
  std::printf("Note 003: worker pool, 3 workers, 8 items (results in the "
              "items' order)\n ");
  gmp::run_with<Api>(2, [] {
    std::vector<int> items{1, 2, 3, 4, 5, 6, 7, 8};
    auto results = gmp::patterns::process_items<Api>(
        items, 3, [](const int& x) { return x * x; });
    for (int r : results) std::printf(" %d", r);
  });
  std::printf("\n\n");
}

void semaphore() {
  std::printf("Note 003: processWithLimit, limit 2, 10 items of 10 ms each, "
              "a context of 35 ms\n");
  gmp::run_with<Api>(2, [] {
    auto [ctx, cancel] =
        Api::Context::with_timeout(Api::Context::background(), milliseconds(35));
    std::vector<int> items(10);
    std::size_t done = gmp::patterns::process_with_limit<Api>(
        ctx, items, 2, [](const int&) { Api::sleep_for(milliseconds(10)); });
    std::printf("  processed %zu, skipped %zu once the context was done "
                "(err: %s)\n\n",
                done, items.size() - done,
                ctx->err() == gmp::ContextErr::kDeadlineExceeded
                    ? "context deadline exceeded"
                    : "none");
  });
}

void chan_semaphore() {
  std::printf("Note 003: a buffered channel of 2 as a semaphore, with a "
              "select timeout\n");
  gmp::run_with<Api>(2, [] {
    gmp::patterns::ChanSemaphore<Api> sem(2);
    for (int i = 1; i <= 3; ++i) {
      auto start = Clock::now();
      bool took = sem.acquire_for(milliseconds(20));
      std::printf("  acquire %d: %s after %.1f ms\n", i,
                  took ? "took a slot" : "timed out", ms_since(start));
    }
    sem.release();
    sem.release();
  });
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  struct Program {
    const char* name;
    void (*run)();
  };
  const Program programs[] = {{"tight-loop", tight_loop},
                              {"adaptive", adaptive},
                              {"worker-pool", worker_pool},
                              {"semaphore", semaphore},
                              {"chan-semaphore", chan_semaphore}};
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [PROGRAM]\n", argv[0]);
    return 2;
  }
  bool ran = false;
  for (const Program& p : programs) {
    if (argc == 1 || std::strcmp(argv[1], p.name) == 0) {
      p.run();
      ran = true;
    }
  }
  if (!ran) {
    std::fprintf(stderr, "demo: no program %s; one of:", argv[1]);
    for (const Program& p : programs) std::fprintf(stderr, " %s", p.name);
    std::fprintf(stderr, "\n");
    return 2;
  }
  return 0;
}
