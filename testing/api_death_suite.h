// The fatal behaviours every stage's API must have, written once: the ways
// a program ends, with Go's messages and Go's exit status 2. Instantiate:
//
//   INSTANTIATE_TYPED_TEST_SUITE_P(Stage1, ApiDeathTest, gmp::stage1::Api);
//
// Each test runs in a child process (gtest death tests).
#pragma once

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/errors.h"
#include "testing/helpers.h"

namespace gmp::testing {

template <class Api>
class ApiDeathTest : public ::testing::Test {};

TYPED_TEST_SUITE_P(ApiDeathTest);

TYPED_TEST_P(ApiDeathTest, ExceptionEscapingAGoroutineEndsTheProgram) {
  auto program = [] {
    run_with<TypeParam>(procs_for<TypeParam>(2, 1), [] {
      typename TypeParam::WaitGroup wg;
      wg.add(1);
      TypeParam::go([] { throw std::runtime_error("boom"); });
      wg.wait();
    });
  };
  EXPECT_EXIT(program(), ::testing::ExitedWithCode(2),
              "panic: std::runtime_error: boom\n\ngoroutine 2 \\[running\\]:");
}

TYPED_TEST_P(ApiDeathTest, UnrecoveredRuntimePanicReadsAsInGo) {
  auto program = [] {
    run_with<TypeParam>(2, [] {
      typename TypeParam::template Chan<int> ch;
      ch.close();
      ch.close();
    });
  };
  EXPECT_EXIT(program(), ::testing::ExitedWithCode(2),
              "panic: close of closed channel\n\ngoroutine 1 \\[running\\]:");
}

// Stages 2-5 (goroutine_dump.h): the panicking goroutine first, then every
// other one with its state, how long it has waited and where it last ran.
TYPED_TEST_P(ApiDeathTest, PanicReportListsEveryGoroutine) {
  if constexpr (!kHasGoroutineDump<TypeParam>) {
    GTEST_SKIP() << "stage 1's goroutines are plain tasks: no dump";
  } else {
    auto program = [] {
      run_with<TypeParam>(2, [] {
        typename TypeParam::template Chan<int> never;
        typename TypeParam::WaitGroup wg;
        wg.add(1);
        TypeParam::go([&] { (void)never.recv(); });
        TypeParam::go([] {
          TypeParam::sleep_for(std::chrono::milliseconds(20));
          throw std::runtime_error("boom");
        });
        wg.wait();
      });
    };
    EXPECT_EXIT(program(), ::testing::ExitedWithCode(2),
                "panic: std::runtime_error: boom\n\n"
                "goroutine 3 \\[running\\]:\n\tlast ran on M [0-9]+[^\n]*\n"
                "\tcreated by goroutine 1: [^\n]+\n\n"
                "goroutine 1 \\[sync.WaitGroup.Wait, [0-9]+ ms\\]:\n"
                "\tlast ran on M [0-9]+[^\n]*\n\tcreated by Runtime::run: [^\n]+\n\n"
                "goroutine 2 \\[chan receive, [0-9]+ ms\\]:");
  }
}

// Stages 2-5: SIGQUIT prints every goroutine of the running runtime and
// ends the program with status 2, as in Go.
TYPED_TEST_P(ApiDeathTest, SigquitDumpsEveryGoroutine) {
  if constexpr (!kHasGoroutineDump<TypeParam>) {
    GTEST_SKIP() << "stage 1's goroutines are plain tasks: no dump";
  } else {
    auto program = [] {
      typename TypeParam::Runtime rt([] {
        typename TypeParam::Config c;
        c.procs = procs_for<TypeParam>(2, 1);
        return c;
      }());
      rt.run([&] {
        typename TypeParam::template Chan<int> never;
        TypeParam::go([&] { (void)never.recv(); });
        wait_until_blocked<TypeParam>(rt, 1);  // goroutine 2 is parked
        ::raise(SIGQUIT);
        TypeParam::sleep_for(std::chrono::seconds(60));  // the dump ends us
      });
    };
    EXPECT_EXIT(program(), ::testing::ExitedWithCode(2),
                "SIGQUIT: quit\n\n"
                "goroutine 1 \\[(running|sleep, [0-9]+ ms)\\]:\n"
                "\tlast ran on M [0-9]+[^\n]*\n\tcreated by Runtime::run: [^\n]+\n\n"
                "goroutine 2 \\[chan receive, [0-9]+ ms\\]:\n"
                "\tlast ran on M [0-9]+[^\n]*\n"
                "\tcreated by goroutine 1: [^\n]+\n");
  }
}

// With two runtimes running, SIGQUIT prints both lists, each under a line
// naming its runtime (each has its own goroutine 1).
TYPED_TEST_P(ApiDeathTest, SigquitNamesEachRuntimeWhenSeveralRun) {
  if constexpr (!kHasGoroutineDump<TypeParam>) {
    GTEST_SKIP() << "stage 1's goroutines are plain tasks: no dump";
  } else {
    auto program = [] {
      std::atomic<bool> other_running{false};
      std::thread other([&] {
        run_with<TypeParam>(1, [&] {
          other_running = true;
          TypeParam::sleep_for(std::chrono::seconds(60));  // the dump ends us
        });
      });
      run_with<TypeParam>(1, [&] {
        while (!other_running) {
          TypeParam::sleep_for(std::chrono::milliseconds(1));
        }
        ::raise(SIGQUIT);
        TypeParam::sleep_for(std::chrono::seconds(60));
      });
      other.join();
    };
    EXPECT_EXIT(program(), ::testing::ExitedWithCode(2),
                "SIGQUIT: quit\n\n"
                "runtime 1 of 2: stage[2-5]\n\n"
                "goroutine 1 \\[[^\n]+\\]:\n(.|\n)*"
                "runtime 2 of 2: stage[2-5]\n\n"
                "goroutine 1 \\[[^\n]+\\]:\n");
  }
}

TYPED_TEST_P(ApiDeathTest, AllGoroutinesAsleepIsADeadlock) {
  auto program = [] {
    run_with<TypeParam>(procs_for<TypeParam>(2, 2), [] {
      typename TypeParam::template Chan<int> ch;
      typename TypeParam::Mutex mu;
      mu.lock();
      TypeParam::go([&] { std::lock_guard lk(mu); });
      (void)ch.recv();  // nobody will ever send
    });
  };
  EXPECT_EXIT(program(), ::testing::ExitedWithCode(2),
              "fatal error: all goroutines are asleep - deadlock!\n\n"
              "(.|\n)*goroutine 1 \\[chan receive(, [0-9]+ ms)?\\]"
              "(.|\n)*goroutine 2 \\[sync.Mutex.Lock(, [0-9]+ ms)?\\]");
}

TYPED_TEST_P(ApiDeathTest, UnlockOfUnlockedMutexIsFatal) {
  auto program = [] {
    run_with<TypeParam>(2, [] {
      typename TypeParam::Mutex mu;
      mu.unlock();
    });
  };
  EXPECT_EXIT(program(), ::testing::ExitedWithCode(2),
              "fatal error: sync: unlock of unlocked mutex");
}

TYPED_TEST_P(ApiDeathTest, DestroyingAnObjectAGoroutineWaitsOnIsFatal) {
  auto program = [] {
    typename TypeParam::Runtime rt([] {
      typename TypeParam::Config c;
      c.procs = procs_for<TypeParam>(2, 1);
      return c;
    }());
    rt.run([&] {
      auto ch = std::make_unique<typename TypeParam::template Chan<int>>();
      TypeParam::go([&ch] { (void)ch->recv(); });
      wait_until_blocked<TypeParam>(rt, 1);
      ch.reset();  // goroutine 2 is parked inside it
    });
  };
  EXPECT_EXIT(program(), ::testing::ExitedWithCode(2),
              "fatal error: Chan destroyed while goroutines wait on it: "
              "goroutine 2 \\[chan receive\\]");
}

// Four goroutines panic at the same moment: one report is printed, whole
// (the others wait for the exit: detail::begin_dying), not two or three
// interleaved.
TYPED_TEST_P(ApiDeathTest, SeveralGoroutinesPanickingAtOncePrintOneReport) {
  const std::string err = ::testing::TempDir() + "four_panics_stderr.txt";
  auto program = [&err] {
    if (std::freopen(err.c_str(), "w", stderr) == nullptr) std::abort();
    constexpr int kPanics = 4;
    run_with<TypeParam>(procs_for<TypeParam>(kPanics, kPanics), [] {
      std::atomic<int> ready{0};
      typename TypeParam::WaitGroup wg;
      wg.add(1);
      for (int i = 0; i < kPanics; ++i) {
        TypeParam::go([&ready] {
          ready.fetch_add(1);
          while (ready.load() < kPanics) {
          }
          throw std::runtime_error("boom");
        });
      }
      wg.wait();
    });
  };
  EXPECT_EXIT(program(), ::testing::ExitedWithCode(2), "");
  std::FILE* f = std::fopen(err.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string text;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, f)) text.append(buf, n);
  std::fclose(f);
  std::size_t reports = 0;
  for (std::size_t at = text.find("panic: "); at != std::string::npos;
       at = text.find("panic: ", at + 1)) {
    ++reports;
  }
  EXPECT_EQ(reports, 1u) << text;
  EXPECT_EQ(text.rfind("panic: std::runtime_error: boom\n\ngoroutine ", 0), 0u)
      << text;
}

// ---- Faults in goroutines, as Go reports them (common/fault.h) -------------

// Recursion deep enough to overflow any stack (it would end at a depth
// nobody reaches, read from a volatile so that the compiler cannot tell).
[[gnu::noinline]] inline int recurse_forever(int depth) {
  static volatile int never = -1;
  volatile char frame[512];
  frame[0] = static_cast<char>(depth);
  if (depth == never) return frame[0];
  return recurse_forever(depth + 1) + frame[0];
}

// Runs `body` as goroutine 2 while main waits for it.
template <class Api, class F>
void in_goroutine_2(F body) {
  run_with<Api>(procs_for<Api>(2, 1), [&] {
    typename Api::WaitGroup wg;
    wg.add(1);
    Api::go([&] {
      body();
      wg.done();
    });
    wg.wait();
  });
}

TYPED_TEST_P(ApiDeathTest, StackOverflowIsReportedNotSilent) {
  // Stages 2-5 name the field that sizes a goroutine's stack; stage 1's
  // goroutines run on their worker thread's stack (the system's size).
  std::string hint;
  if constexpr (kHasGoroutineDump<TypeParam>) {
    hint = ", or raise " +
           std::string(TypeParam::kName.substr(0, 6)) +  // "stage3"
           "::Config.stack_size";
  }
  EXPECT_EXIT(in_goroutine_2<TypeParam>([] { recurse_forever(0); }),
              ::testing::ExitedWithCode(2),
              "fatal error: goroutine 2 stack overflow\n\\(it used all of "
              "its [0-9]+-byte stack: look for unbounded recursion" +
                  hint + "\\)\n\ngoroutine 2 \\[running\\]:");
}

// A store through `p`, that UBSan does not check first (it would report a
// null store itself, before the fault).
[[gnu::noinline, gnu::no_sanitize_undefined]] inline void store_one(
    volatile int* p) {
  *p = 1;
}

TYPED_TEST_P(ApiDeathTest, NilDereferencePanicsAsInGo) {
  EXPECT_EXIT(in_goroutine_2<TypeParam>([] {
                volatile int* volatile p = nullptr;
                store_one(p);
              }),
              ::testing::ExitedWithCode(2),
              "panic: runtime error: invalid memory address or nil pointer "
              "dereference\n\\[signal SIGSEGV: segmentation violation "
              "code=0x1 addr=0x0 pc=0x[0-9a-f]+\\]\n\ngoroutine 2 "
              "\\[running\\]:\n\t(last ran on M|on worker) [0-9]+");
}

TYPED_TEST_P(ApiDeathTest, AnyOtherBadAddressIsAFatalFault) {
  // A page nobody may touch: a fault in every build, sanitizers included.
  void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  EXPECT_EXIT(in_goroutine_2<TypeParam>([page] {
                store_one(static_cast<volatile int*>(page));
              }),
              ::testing::ExitedWithCode(2),
              "unexpected fault address 0x[0-9a-f]+\nfatal error: fault\n"
              "\\[signal SIGSEGV: segmentation violation code=0x2 "
              "addr=0x[0-9a-f]+ pc=0x[0-9a-f]+\\]\n\ngoroutine 2");
  ::munmap(page, 4096);
}

#if defined(__x86_64__)
TYPED_TEST_P(ApiDeathTest, IntegerDivisionByZeroPanicsAsInGo) {
  EXPECT_EXIT(in_goroutine_2<TypeParam>([] {
                // idiv itself, so that no sanitizer checks it first.
                int dividend = 1, divisor = 0;
                asm volatile("cltd; idivl %[d]"
                             : "+a"(dividend)
                             : [d] "r"(divisor)
                             : "edx", "cc");
              }),
              ::testing::ExitedWithCode(2),
              "panic: runtime error: integer divide by zero\n\\[signal "
              "SIGFPE: floating-point exception code=0x1 ");
}
#else
TYPED_TEST_P(ApiDeathTest, IntegerDivisionByZeroPanicsAsInGo) {
  GTEST_SKIP() << "integer division by zero does not trap on this CPU";
}
#endif

// A Runtime destroyed while its run() goes on in another thread: a fatal
// error naming the stage's runtime, before any of its parts goes away
// (stage 5's sysmon thread, as a std::thread member, would otherwise end
// the program with std::terminate).
TYPED_TEST_P(ApiDeathTest, DestroyingARunningRuntimeIsFatal) {
  auto program = [] {
    auto rt = std::make_unique<typename TypeParam::Runtime>([] {
      typename TypeParam::Config c;
      c.procs = 2;
      return c;
    }());
    std::atomic<bool> started{false};
    std::thread runner([&] {
      rt->run([&] {
        started.store(true);
        TypeParam::sleep_for(std::chrono::seconds(60));
      });
    });
    while (!started.load()) std::this_thread::yield();
    rt.reset();
    runner.join();
  };
  EXPECT_EXIT(program(), ::testing::ExitedWithCode(2),
              "fatal error: stage[1-5]::Runtime destroyed while its run\\(\\) "
              "is running");
}

// Mutex::unlock cannot throw (it runs in destructors): handing the mutex
// to a waiter of another runtime is a fatal error, naming the mistake.
TYPED_TEST_P(ApiDeathTest, UnlockHandingTheMutexToAnotherRuntimeIsFatal) {
  auto program = [] {
    typename TypeParam::Mutex mu;
    std::atomic<bool> waiting{false};
    typename TypeParam::Runtime a([] {
      typename TypeParam::Config c;
      c.procs = procs_for<TypeParam>(2, 1);
      return c;
    }());
    std::thread other([&] {
      a.run([&] {
        mu.lock();
        TypeParam::go([&] { std::lock_guard lk(mu); });
        wait_until_blocked<TypeParam>(a, 1);
        waiting.store(true);
        TypeParam::sleep_for(std::chrono::seconds(60));  // the error ends us
      });
    });
    run_with<TypeParam>(2, [&] {
      while (!waiting.load()) {
        TypeParam::sleep_for(std::chrono::milliseconds(1));
      }
      mu.unlock();
    });
    other.join();
  };
  EXPECT_EXIT(program(), ::testing::ExitedWithCode(2),
              "fatal error: Mutex::unlock: goroutine 2, waiting on this "
              "object, belongs to another runtime");
}

// Go ends the program when main returns, whatever other goroutines do. A
// course runtime unwinds them at their next call into the runtime; one
// that never makes one (here: a loop on an atomic) cannot be stopped, so
// after gmp::kExitGrace the program ends as Go's does: status 0, what main
// printed flushed, nothing after run() executed (common/exit.h).
TYPED_TEST_P(ApiDeathTest, MainReturningWhileAGoroutineNeverCallsTheRuntimeEndsTheProgram) {
  // The same path in the parent and in the death test's child process.
  const std::string out = ::testing::TempDir() + "main_returns_stdout.txt";
  auto program = [&out] {
    if (std::freopen(out.c_str(), "w", stdout) == nullptr) std::abort();
    run_with<TypeParam>(procs_for<TypeParam>(2, 1), [] {
      auto* spin = new std::atomic<bool>{true};  // outlive the program
      auto* started = new std::atomic<bool>{false};
      TypeParam::go([spin, started] {
        started->store(true);
        while (spin->load(std::memory_order_relaxed)) {
        }
      });
      while (!started->load()) {  // running, not merely queued
        TypeParam::sleep_for(std::chrono::milliseconds(1));
      }
      std::printf("main returns\n");  // buffered: the exit must flush it
    });
    std::printf("run returned\n");
  };
  EXPECT_EXIT(program(), ::testing::ExitedWithCode(0), "");
  std::FILE* f = std::fopen(out.c_str(), "r");
  ASSERT_NE(f, nullptr);
  char buf[64] = {};
  std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  EXPECT_EQ(std::string(buf, n), "main returns\n");
}

REGISTER_TYPED_TEST_SUITE_P(ApiDeathTest,
                            ExceptionEscapingAGoroutineEndsTheProgram,
                            UnrecoveredRuntimePanicReadsAsInGo,
                            PanicReportListsEveryGoroutine,
                            SigquitDumpsEveryGoroutine,
                            SigquitNamesEachRuntimeWhenSeveralRun,
                            AllGoroutinesAsleepIsADeadlock,
                            UnlockOfUnlockedMutexIsFatal,
                            DestroyingAnObjectAGoroutineWaitsOnIsFatal,
                            UnlockHandingTheMutexToAnotherRuntimeIsFatal,
                            DestroyingARunningRuntimeIsFatal,
                            SeveralGoroutinesPanickingAtOncePrintOneReport,
                            StackOverflowIsReportedNotSilent,
                            NilDereferencePanicsAsInGo,
                            AnyOtherBadAddressIsAFatalFault,
                            IntegerDivisionByZeroPanicsAsInGo,
                            MainReturningWhileAGoroutineNeverCallsTheRuntimeEndsTheProgram);

}  // namespace gmp::testing
