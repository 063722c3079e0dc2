// Stage 5 demo: sysmon, cooperative and asynchronous preemption, and where
// each one fails.
//
//   1. The notes' Go 1.13 program (note 001, docs/course/notes.md):
//      GOMAXPROCS=1, a goroutine spinning on `u -= 2` (no function call), main
//      sleeping 5 ms. It hangs without preemption and with cooperative
//      preemption alike: the loop has no safe point. The preemption signal (Go
//      1.14's answer) stops it. Each case runs in a child process killed after
//      1 s.
//   2. The same loop with a function call in it: cooperative preemption
//      stops it after a time slice.
//   3. How long a 1 ms sleeper waits behind a 100 ms loop on 1 P, per mode
//      and time slice.
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

#include "stage5_preemption/latency.h"
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

const char* mode_name(Preempt mode) {
  switch (mode) {
    case Preempt::kNone: return "none";
    case Preempt::kCooperative: return "cooperative";
    case Preempt::kAsync: return "async";
  }
  return "?";
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
void run_child(Preempt mode, bool with_call) {
  std::string arg = std::string("--child=") + mode_name(mode) +
                    (with_call ? ",call" : ",nocall");
  char* argv[] = {const_cast<char*>("demo"), arg.data(), nullptr};
  // The row's label goes out before the child starts: the child writes its
  // result to the same stdout, and could otherwise print it first.
  std::printf("   %-12s %-24s ", mode_name(mode),
              with_call ? "loop calls a function" : "loop: u -= 2 only");
  std::fflush(stdout);
  pid_t pid;
  if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, environ) != 0) {
    std::printf("could not start the child: posix_spawn failed\n");
    return;
  }
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

void sleeper_row(Preempt mode, bool with_call, milliseconds slice) {
  std::string what = std::string(mode_name(mode)) + ", " +
                     std::to_string(slice.count()) + " ms slice";
  std::printf("   %-26s %-22s waited %5.1f ms\n", what.c_str(),
              with_call ? "loop with calls" : "loop without calls",
              gmp::stage5::sleeper_behind_loop_ms(mode, with_call, slice));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strncmp(argv[1], "--child=", 8) == 0) {
    std::string a = argv[1] + 8;
    Preempt mode = a.rfind("none", 0) == 0    ? Preempt::kNone
                   : a.rfind("async", 0) == 0 ? Preempt::kAsync
                                              : Preempt::kCooperative;
    return child(mode, a.find(",call") != std::string::npos);
  }
  if (argc != 1) {
    std::fprintf(stderr, "usage: %s\n", argv[0]);
    return 2;
  }
  const bool async = gmp::stage5::kAsyncPreemptSupported;
  std::printf("== Stage 5: sysmon and preemption ==\n\n");
  std::printf("1. Go 1.13's example: GOMAXPROCS=1, a goroutine spins, main "
              "sleeps 5 ms\n");
  run_child(Preempt::kNone, false);
  run_child(Preempt::kCooperative, false);
  if (async) run_child(Preempt::kAsync, false);
  std::printf("   (no function call in the loop: no safe point for "
              "cooperative preemption,\n    as in Go before 1.14; the signal "
              "stops it anywhere safe, as in Go 1.14+)\n\n");
  std::printf("2. The same loop calling a function\n");
  run_child(Preempt::kNone, true);
  run_child(Preempt::kCooperative, true);
  std::printf("\n3. A 1 ms sleep_for behind a 100 ms loop, on 1 P\n");
  sleeper_row(Preempt::kNone, true, milliseconds(10));
  sleeper_row(Preempt::kCooperative, false, milliseconds(10));
  sleeper_row(Preempt::kCooperative, true, milliseconds(10));
  sleeper_row(Preempt::kCooperative, true, milliseconds(2));
  if (async) {
    sleeper_row(Preempt::kAsync, false, milliseconds(10));
    sleeper_row(Preempt::kAsync, false, milliseconds(2));
  }
  return 0;
}
