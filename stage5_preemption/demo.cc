// Stage 5 demo: sysmon and cooperative preemption, and where it fails.
//
//   1. The notes' Go 1.13 program: GOMAXPROCS=1, a goroutine spinning on
//      `u -= 2` (no function call), main sleeping 5 ms. It hangs without
//      preemption and with cooperative preemption alike: the loop has no
//      safe point. Each case runs in a child process killed after 1 s.
//   2. The same loop with a function call in it: cooperative preemption
//      stops it after a time slice.
//   3. How long a 1 ms sleeper waits behind a 100 ms loop (with calls) on
//      1 P, per mode and time slice.
//
// This file is compiled with -finstrument-functions (BUILD): its functions
// are safe points. Usage: demo   (the child mode, --child=..., is internal)
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "stage5_preemption/runtime.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using gmp::stage5::Preempt;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

volatile long u = 0;  // the notes' variable

__attribute__((noinline)) void step() { u = u - 2; }  // a safe point

gmp::stage5::Config one_p(Preempt mode, milliseconds slice = milliseconds(10)) {
  gmp::stage5::Config c;
  c.procs = 1;
  c.debug = "";
  c.preempt = mode;
  c.time_slice = slice;
  return c;
}

// The child: the Go 1.13 program, with or without a call in the loop.
int child(Preempt mode, bool with_call) {
  using namespace gmp::stage5;
  Runtime rt(one_p(mode));
  auto start = Clock::now();
  rt.run([&] {
    go([with_call] {
      for (;;) {
        if (with_call) {
          step();
        } else {
          u = u - 2;
        }
      }
    });
    sleep_for(milliseconds(5));
    std::printf("main woke after %.1f ms\n", ms_since(start));
    std::fflush(stdout);
    std::_Exit(0);  // as Go's main returning: the loop is not waited for
  });
  return 0;
}

// Runs the child in a process of its own; kills it after 1 s.
void run_child(const char* mode_name, Preempt mode, bool with_call) {
  std::string arg = std::string("--child=") +
                    (mode == Preempt::kNone ? "none" : "coop") +
                    (with_call ? ",call" : ",nocall");
  char* argv[] = {const_cast<char*>("demo"), arg.data(), nullptr};
  std::fflush(stdout);
  pid_t pid;
  if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, environ) != 0) {
    std::perror("demo: posix_spawn");
    return;
  }
  std::printf("   %-12s %-24s ", mode_name,
              with_call ? "loop calls a function" : "loop: u -= 2 only");
  std::fflush(stdout);
  auto start = Clock::now();
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (ms_since(start) > 1000) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      std::printf("hung: killed after 1000 ms\n");
      return;
    }
    usleep(1000);
  }
}

// Part 3: a 1 ms sleeper behind a 100 ms loop with calls, on 1 P.
double sleeper_ms(Preempt mode, milliseconds slice) {
  using namespace gmp::stage5;
  Runtime rt(one_p(mode, slice));
  double waited = 0;
  rt.run([&] {
    go([] {
      auto until = Clock::now() + milliseconds(100);
      while (Clock::now() < until) step();
    });
    auto t = Clock::now();
    sleep_for(milliseconds(1));
    waited = ms_since(t);
  });
  return waited;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strncmp(argv[1], "--child=", 8) == 0) {
    std::string a = argv[1] + 8;
    Preempt mode = a.rfind("none", 0) == 0 ? Preempt::kNone : Preempt::kCooperative;
    return child(mode, a.find(",call") != std::string::npos);
  }
  if (argc != 1) {
    std::fprintf(stderr, "usage: %s\n", argv[0]);
    return 2;
  }
  std::printf("== Stage 5: sysmon and preemption ==\n\n");
  std::printf("1. Go 1.13's example: GOMAXPROCS=1, a goroutine spins, main "
              "sleeps 5 ms\n");
  run_child("none", Preempt::kNone, false);
  run_child("cooperative", Preempt::kCooperative, false);
  std::printf("   (no function call in the loop: no safe point, as in Go "
              "before 1.14)\n\n");
  std::printf("2. The same loop calling a function\n");
  run_child("none", Preempt::kNone, true);
  run_child("cooperative", Preempt::kCooperative, true);
  std::printf("\n3. A 1 ms sleep_for behind a 100 ms loop with calls, on 1 P\n");
  std::printf("   %-28s waited %5.1f ms\n", "no preemption",
              sleeper_ms(Preempt::kNone, milliseconds(10)));
  std::printf("   %-28s waited %5.1f ms\n", "cooperative, 10 ms slice",
              sleeper_ms(Preempt::kCooperative, milliseconds(10)));
  std::printf("   %-28s waited %5.1f ms\n", "cooperative, 2 ms slice",
              sleeper_ms(Preempt::kCooperative, milliseconds(2)));
  return 0;
}
