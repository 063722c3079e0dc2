// The behaviour every stage's API must have, written once. A stage
// instantiates it with its Api type:
//
//   INSTANTIATE_TYPED_TEST_SUITE_P(Stage1, ApiSuite, gmp::stage1::Api);
//
// The tests check behaviour only (what a Go programmer may rely on), never
// timing. Runs that block k goroutines at once ask for procs_for(p, k).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <exception>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/errors.h"
#include "testing/helpers.h"

namespace gmp::testing {

template <class Api>
class ApiSuite : public ::testing::Test {
 protected:
  using Runtime = typename Api::Runtime;
  using Config = typename Api::Config;
  using WaitGroup = typename Api::WaitGroup;
  using Mutex = typename Api::Mutex;
  template <class T>
  using Chan = typename Api::template Chan<T>;

  static Config config(int procs) {
    Config c;
    c.procs = procs;
    return c;
  }
};

TYPED_TEST_SUITE_P(ApiSuite);

// The i-th seed of a stress test: --gtest_random_seed=N (or
// --gtest_shuffle) varies the seeds between runs.
inline unsigned stress_seed(unsigned i) {
  const auto base = static_cast<unsigned>(
      ::testing::UnitTest::GetInstance()->random_seed());
  return base * 1000 + i;
}

// ---- Runtime and configuration ---------------------------------------

TYPED_TEST_P(ApiSuite, ConfigRejectsInvalidProcs) {
  for (int bad : {0, -1, 1 << 30}) {
    try {
      typename TypeParam::Runtime rt(this->config(bad));
      ADD_FAILURE() << "procs = " << bad << " was accepted";
    } catch (const ConfigError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("procs"), std::string::npos) << what;
      EXPECT_NE(what.find(std::to_string(bad)), std::string::npos) << what;
    }
  }
}

// GOMAXPROCS in the environment sets the default procs, as in Go; a value
// that is not a number above 0 is ignored, as Go ignores it.
TYPED_TEST_P(ApiSuite, GomaxprocsInTheEnvironmentIsReadAsGoReadsIt) {
  auto default_procs = [] {
    typename TypeParam::Runtime rt{typename TypeParam::Config{}};
    const auto& procs = rt.config().procs;
    if constexpr (requires { *procs; }) {
      return *procs;
    } else {
      return procs;
    }
  };
  ::unsetenv("GOMAXPROCS");
  const int fallback = default_procs();
  ::setenv("GOMAXPROCS", "3", 1);
  EXPECT_EQ(default_procs(), 3);
  for (const char* ignored : {"", "abc", "0", "-2", " 3"}) {
    ::setenv("GOMAXPROCS", ignored, 1);
    EXPECT_EQ(default_procs(), fallback) << "GOMAXPROCS=\"" << ignored << "\"";
  }
  ::unsetenv("GOMAXPROCS");
}

TYPED_TEST_P(ApiSuite, RunRunsMainOnceAndReturnsAfterIt) {
  int runs = 0;
  auto stats = run_with<TypeParam>(2, [&] { ++runs; });
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(stats.goroutines_created, 1u);
  EXPECT_EQ(stats.goroutines_finished, 1u);
}

TYPED_TEST_P(ApiSuite, RuntimeCanRunAgain) {
  typename TypeParam::Runtime rt(this->config(2));
  int runs = 0;
  for (int i = 0; i < 3; ++i) {
    rt.run([&] {
      typename TypeParam::WaitGroup wg;
      wg.add(1);
      TypeParam::go([&] { ++runs; wg.done(); });
      wg.wait();
    });
  }
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(rt.stats().goroutines_created, 2u);  // of the last run
}

// Conservation: every goroutine runs exactly once, across proc counts,
// spawned from main and from other goroutines.
TYPED_TEST_P(ApiSuite, EveryGoroutineRunsExactlyOnce) {
  constexpr int kParents = 20, kChildren = 50;
  for (int procs : {1, 2, 4, 8}) {
    std::vector<std::atomic<int>> seen(kParents * kChildren);
    auto stats = run_with<TypeParam>(
        procs_for<TypeParam>(procs, 1), [&] {
          typename TypeParam::WaitGroup wg;
          wg.add(kParents * kChildren);
          for (int p = 0; p < kParents; ++p) {
            TypeParam::go([&, p] {
              for (int c = 0; c < kChildren; ++c) {
                TypeParam::go([&, i = p * kChildren + c] {
                  seen[i].fetch_add(1, std::memory_order_relaxed);
                  wg.done();
                });
              }
            });
          }
          wg.wait();
        });
    for (size_t i = 0; i < seen.size(); ++i) {
      ASSERT_EQ(seen[i].load(), 1) << "goroutine " << i << ", procs " << procs;
    }
    EXPECT_EQ(stats.goroutines_created, 1u + kParents + kParents * kChildren);
    EXPECT_TRUE(conserved(stats));
  }
}

// ---- Misuse ------------------------------------------------------------

TYPED_TEST_P(ApiSuite, GoroutineOnlyCallsFromAPlainThreadAreUsageErrors) {
  using Api = TypeParam;
  typename Api::template Chan<int> ch(1);
  typename Api::WaitGroup wg;
  typename Api::Mutex mu;
  auto expect_usage_error = [](auto call, const std::string& op) {
    try {
      call();
      ADD_FAILURE() << op << " was accepted outside a goroutine";
    } catch (const UsageError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find(op + " called outside a goroutine"),
                std::string::npos)
          << what;
    }
  };
  expect_usage_error([] { Api::go([] {}); }, "go");
  expect_usage_error([] { Api::yield(); }, "yield");
  expect_usage_error([] { Api::sleep_for(std::chrono::milliseconds(1)); },
                     "sleep_for");
  expect_usage_error([&] { ch.send(1); }, "Chan::send");
  expect_usage_error([&] { (void)ch.recv(); }, "Chan::recv");
  expect_usage_error([&] { ch.close(); }, "Chan::close");
  expect_usage_error([&] { wg.add(1); }, "WaitGroup::add");
  expect_usage_error([&] { wg.wait(); }, "WaitGroup::wait");
  expect_usage_error([&] { mu.lock(); }, "Mutex::lock");
  expect_usage_error([&] { (void)mu.try_lock(); }, "Mutex::try_lock");
  // Nothing changed: the objects still work inside a runtime.
  run_with<Api>(2, [&] {
    ch.send(7);
    EXPECT_EQ(ch.recv(), 7);
    wg.wait();  // counter still 0
    std::lock_guard lk(mu);
  });
}

TYPED_TEST_P(ApiSuite, RunFromInsideAGoroutineIsAUsageError) {
  typename TypeParam::Runtime rt(this->config(2));
  bool threw = false;
  rt.run([&] {
    try {
      rt.run([] {});
    } catch (const UsageError& e) {
      threw = std::string(e.what()).find("inside a goroutine") !=
              std::string::npos;
    }
  });
  EXPECT_TRUE(threw);
}

TYPED_TEST_P(ApiSuite, EmptyFunctionsAreUsageErrors) {
  typename TypeParam::Runtime rt(this->config(2));
  EXPECT_THROW(rt.run(nullptr), UsageError);
  bool threw = false;
  rt.run([&] {
    try {
      TypeParam::go(nullptr);
    } catch (const UsageError&) {
      threw = true;
    }
  });
  EXPECT_TRUE(threw);
}

// An object belongs to one runtime at a time. Waking a goroutine of
// another runtime (a send to its parked receiver, a close, the WaitGroup's
// last done) is a UsageError that changes nothing: the sender keeps its
// value, the channel stays open, the counter stays up. The owner's own
// goroutines then finish the job.
TYPED_TEST_P(ApiSuite, WakingAGoroutineOfAnotherRuntimeIsAUsageError) {
  using Api = TypeParam;
  typename Api::template Chan<int> ch;
  typename Api::WaitGroup wg;
  std::atomic<int> parked{0};
  std::atomic<bool> tried{false};
  std::vector<std::string> errors;
  typename Api::Runtime a(this->config(procs_for<Api>(2, 2)));
  typename Api::Runtime b(this->config(2));
  std::thread other([&] {
    a.run([&] {
      typename Api::WaitGroup done;
      done.add(2);
      wg.add(1);  // b will try to finish it
      Api::go([&] {
        EXPECT_EQ(ch.recv(), std::nullopt);  // closed by its own runtime
        done.done();
      });
      Api::go([&] {
        wg.wait();
        done.done();
      });
      parked.store(1);
      while (!tried.load()) Api::sleep_for(std::chrono::microseconds(100));
      wait_until_blocked<Api>(a, 2);  // b's attempts changed nothing
      ch.close();
      wg.done();
      done.wait();
    });
  });
  b.run([&] {
    while (parked.load() == 0 || a.stats().goroutines_blocked < 2) {
      Api::sleep_for(std::chrono::microseconds(100));
    }
    auto expect_usage_error = [&](auto call) {
      try {
        call();
        ADD_FAILURE() << "a goroutine of another runtime was woken";
      } catch (const UsageError& e) {
        errors.push_back(e.what());
      }
    };
    expect_usage_error([&] { ch.send(7); });
    expect_usage_error([&] { ch.close(); });
    expect_usage_error([&] { wg.done(); });
    tried.store(true);
  });
  other.join();
  ASSERT_EQ(errors.size(), 3u);
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("belongs to another runtime"), std::string::npos) << e;
  }
  EXPECT_NE(errors[0].find("Chan::send: goroutine"), std::string::npos);
  EXPECT_TRUE(conserved(a.stats()));
}

// One goroutine spawns and joins 70,000 others, one at a time: each new
// goroutine reuses the last one's G (and, under ThreadSanitizer, its
// fiber). Under ThreadSanitizer every frame a dead goroutine left on its
// fiber's shadow stack stayed there for the next one, until TSan's 65,536
// frames ran out (a CHECK failure).
TYPED_TEST_P(ApiSuite, StressSpawnAndJoinSeventyThousandTimes) {
  std::atomic<int> ran{0};
  auto stats = run_procs<TypeParam>(2, 1, [&] {
    for (int i = 0; i < 70'000; ++i) {
      typename TypeParam::WaitGroup wg;
      wg.add(1);
      TypeParam::go([&] {
        ran.fetch_add(1, std::memory_order_relaxed);
        wg.done();
      });
      wg.wait();
    }
  });
  EXPECT_EQ(ran.load(), 70'000);
  EXPECT_TRUE(conserved(stats));
}

// ---- yield and sleep_for ------------------------------------------------

// A goroutine that spins with yield() lets the goroutine it waits for run,
// even with a single proc (stage 1 needs a second thread: its yield can only
// yield the OS thread, so the spinner is given one of its own).
TYPED_TEST_P(ApiSuite, YieldLetsAnotherGoroutineRun) {
  for (int round = 0; round < 10; ++round) {
    std::atomic<bool> flag{false};
    run_with<TypeParam>(procs_for<TypeParam>(1, 1), [&] {
      typename TypeParam::WaitGroup wg;
      wg.add(1);
      TypeParam::go([&] {
        flag.store(true);
        wg.done();
      });
      while (!flag.load()) TypeParam::yield();
      wg.wait();
    });
    EXPECT_TRUE(flag.load());
  }
}

TYPED_TEST_P(ApiSuite, SleepForSleepsAtLeastItsDuration) {
  using Clock = std::chrono::steady_clock;
  run_with<TypeParam>(2, [&] {
    auto start = Clock::now();
    TypeParam::sleep_for(std::chrono::milliseconds(5));
    EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(5));
    TypeParam::sleep_for(std::chrono::nanoseconds(0));   // returns at once
    TypeParam::sleep_for(std::chrono::nanoseconds(-5));  // so does this
  });
}

// ---- WaitGroup ------------------------------------------------------------

TYPED_TEST_P(ApiSuite, WaitGroupWaitReturnsAfterEveryDone) {
  constexpr int kGoroutines = 16, kWaiters = 2;
  typename TypeParam::Runtime rt(
      this->config(procs_for<TypeParam>(2, kWaiters + 1)));
  rt.run([&] {
    std::vector<std::atomic<bool>> finished(kGoroutines);
    typename TypeParam::WaitGroup wg, waiters;
    wg.wait();  // zero: returns at once
    wg.add(kGoroutines);
    // Several goroutines parked in wait() at once: all are released.
    std::atomic<int> released{0};
    waiters.add(kWaiters);
    for (int w = 0; w < kWaiters; ++w) {
      TypeParam::go([&] {
        wg.wait();
        for (int i = 0; i < kGoroutines; ++i) EXPECT_TRUE(finished[i].load());
        released.fetch_add(1);
        waiters.done();
      });
    }
    wait_until_blocked<TypeParam>(rt, kWaiters);
    for (int i = 0; i < kGoroutines; ++i) {
      TypeParam::go([&, i] {
        finished[i].store(true);
        wg.done();
      });
    }
    wg.wait();
    for (int i = 0; i < kGoroutines; ++i) EXPECT_TRUE(finished[i].load());
    waiters.wait();
    EXPECT_EQ(released.load(), kWaiters);
  });
}

TYPED_TEST_P(ApiSuite, WaitGroupNegativeCounterPanicsAndChangesNothing) {
  run_with<TypeParam>(2, [&] {
    typename TypeParam::WaitGroup wg;
    wg.add(1);
    try {
      wg.add(-2);
      ADD_FAILURE() << "negative counter accepted";
    } catch (const Panic& p) {
      EXPECT_STREQ(p.what(), "sync: negative WaitGroup counter");
    }
    wg.done();  // the counter was still 1
    wg.wait();
    EXPECT_THROW(wg.done(), Panic);
  });
}

// ---- Mutex ------------------------------------------------------------------

// Past INT64_MAX the counter would overflow: the same panic, nothing
// changed (Go's 32-bit counter wraps to negative there).
TYPED_TEST_P(ApiSuite, WaitGroupCounterOverflowPanicsAndChangesNothing) {
  run_with<TypeParam>(2, [&] {
    typename TypeParam::WaitGroup wg;
    wg.add(INT64_MAX);
    try {
      wg.add(1);
      ADD_FAILURE() << "the counter overflowed";
    } catch (const Panic& p) {
      EXPECT_STREQ(p.what(), "sync: negative WaitGroup counter");
    }
    wg.add(-INT64_MAX);  // back to zero: it was still INT64_MAX
    wg.wait();
  });
}

// Go's TestWaitGroup: one WaitGroup reused as a barrier, round after
// round, each round's waiters all gone before the next add. No panic.
TYPED_TEST_P(ApiSuite, WaitGroupReusedAfterEveryWaitReturnedIsFine) {
  constexpr int kN = 16;
  run_with<TypeParam>(procs_for<TypeParam>(2, kN + 1), [&] {
    typename TypeParam::WaitGroup wg1, wg2;
    for (int round = 0; round < 8; ++round) {
      wg1.add(kN);
      wg2.add(kN);
      typename TypeParam::template Chan<bool> exited(kN);
      for (int i = 0; i < kN; ++i) {
        TypeParam::go([&] {
          wg1.done();
          wg2.wait();
          exited.send(true);
        });
      }
      wg1.wait();
      for (int i = 0; i < kN; ++i) {
        EXPECT_EQ(exited.len(), 0u) << "the barrier released too soon";
        wg2.done();
      }
      for (int i = 0; i < kN; ++i) EXPECT_TRUE(exited.recv().value());
    }
  });
}

// Go's rule: a WaitGroup raised again (add) while a goroutine it released
// has not yet returned from wait() is misused; that goroutine panics
// "sync: WaitGroup is reused before previous Wait has returned". With one
// proc (stages 2-5) main keeps running until it parks, so the reuse always
// comes first; stage 1's waiter has a thread of its own and may return
// first, so it is tried many times and must be caught at least once.
TYPED_TEST_P(ApiSuite, WaitGroupReusedBeforeWaitReturnedPanicsInTheWaiter) {
  const int tries = TypeParam::kBlockingHoldsThread ? 200 : 5;
  int caught = 0;
  typename TypeParam::Runtime rt(this->config(procs_for<TypeParam>(1, 1)));
  rt.run([&] {
    for (int t = 0; t < tries; ++t) {
      typename TypeParam::WaitGroup wg;
      typename TypeParam::WaitGroup waiter_done;
      std::string what;
      wg.add(1);
      waiter_done.add(1);
      TypeParam::go([&] {
        try {
          wg.wait();
        } catch (const Panic& p) {
          what = p.what();
        }
        waiter_done.done();
      });
      wait_until_blocked<TypeParam>(rt, 1);
      wg.done();   // releases the waiter ...
      wg.add(1);   // ... and reuses the group before it has returned
      waiter_done.wait();
      if (!what.empty()) {
        EXPECT_EQ(what,
                  "sync: WaitGroup is reused before previous Wait has returned");
        ++caught;
      }
      wg.done();  // the reuse's own add, undone: the counter is back at 0
    }
  });
  if (TypeParam::kBlockingHoldsThread) {
    EXPECT_GT(caught, 0);
  } else {
    EXPECT_EQ(caught, tries);
  }
}

TYPED_TEST_P(ApiSuite, MutexGivesMutualExclusion) {
  constexpr int kGoroutines = 8, kIncrements = 2000;
  for (int procs : {1, 2, 4}) {
    long counter = 0;  // deliberately not atomic: the mutex protects it
    run_with<TypeParam>(procs_for<TypeParam>(procs, kGoroutines), [&] {
      typename TypeParam::Mutex mu;
      typename TypeParam::WaitGroup wg;
      wg.add(kGoroutines);
      for (int g = 0; g < kGoroutines; ++g) {
        TypeParam::go([&] {
          for (int i = 0; i < kIncrements; ++i) {
            std::lock_guard lk(mu);
            ++counter;
          }
          wg.done();
        });
      }
      wg.wait();
    });
    EXPECT_EQ(counter, long{kGoroutines} * kIncrements) << "procs " << procs;
  }
}

TYPED_TEST_P(ApiSuite, MutexTryLockAndHandOffToAWaiter) {
  typename TypeParam::Runtime rt(this->config(procs_for<TypeParam>(2, 1)));
  rt.run([&] {
    typename TypeParam::Mutex mu;
    EXPECT_TRUE(mu.try_lock());
    EXPECT_FALSE(mu.try_lock());
    typename TypeParam::WaitGroup wg;
    bool waiter_ran = false;
    wg.add(1);
    TypeParam::go([&] {
      mu.lock();  // parks: main holds the mutex
      waiter_ran = true;
      mu.unlock();
      wg.done();
    });
    wait_until_blocked<TypeParam>(rt, 1);
    EXPECT_FALSE(waiter_ran);
    mu.unlock();  // hands the mutex to the parked waiter
    wg.wait();
    EXPECT_TRUE(waiter_ran);
    EXPECT_TRUE(mu.try_lock());
    mu.unlock();
  });
}

// ---- Chan -------------------------------------------------------------------

TYPED_TEST_P(ApiSuite, UnbufferedSendIsARendezvous) {
  typename TypeParam::Runtime rt(this->config(procs_for<TypeParam>(2, 1)));
  for (int round = 0; round < 20; ++round) {
    rt.run([&] {
      typename TypeParam::template Chan<int> ch;
      std::atomic<bool> receiving{false};
      typename TypeParam::WaitGroup wg;
      wg.add(1);
      TypeParam::go([&] {
        ch.send(round);  // cannot return before main is receiving
        EXPECT_TRUE(receiving.load());
        wg.done();
      });
      // Half the rounds the sender parks first, half the receiver may.
      if (round % 2 == 0) wait_until_blocked<TypeParam>(rt, 1);
      receiving.store(true);
      EXPECT_EQ(ch.recv(), round);
      wg.wait();
    });
  }
}

TYPED_TEST_P(ApiSuite, BufferedChanIsFifoAndBlocksOnlyWhenFull) {
  typename TypeParam::Runtime rt(this->config(procs_for<TypeParam>(2, 1)));
  rt.run([&] {
    typename TypeParam::template Chan<int> ch(3);
    EXPECT_EQ(ch.cap(), 3u);
    for (int i = 0; i < 3; ++i) ch.send(i);  // no receiver needed
    EXPECT_EQ(ch.len(), 3u);
    typename TypeParam::WaitGroup wg;
    wg.add(1);
    TypeParam::go([&] {
      ch.send(3);  // full: parks until main receives
      ch.send(4);
      wg.done();
    });
    wait_until_blocked<TypeParam>(rt, 1);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(ch.recv(), i);
    wg.wait();
    EXPECT_EQ(ch.len(), 0u);
  });
}

TYPED_TEST_P(ApiSuite, CloseDrainsBufferThenReportsClosed) {
  run_with<TypeParam>(2, [&] {
    typename TypeParam::template Chan<std::string> ch(4);
    ch.send("a");
    ch.send("b");
    ch.close();
    EXPECT_EQ(ch.recv(), "a");
    EXPECT_EQ(ch.recv(), "b");
    EXPECT_EQ(ch.recv(), std::nullopt);
    EXPECT_EQ(ch.recv(), std::nullopt);  // and so on, forever
  });
}

TYPED_TEST_P(ApiSuite, ImpossibleCapacityPanicsLikeMakechan) {
  using Chan = typename TypeParam::template Chan<int>;
  try {
    Chan ch(SIZE_MAX);
    ADD_FAILURE() << "a channel of SIZE_MAX slots was made";
  } catch (const Panic& p) {
    EXPECT_STREQ(p.what(), "makechan: size out of range");
  }
}

TYPED_TEST_P(ApiSuite, SendOnClosedAndDoubleClosePanic) {
  run_with<TypeParam>(2, [&] {
    typename TypeParam::template Chan<int> ch(1);
    ch.close();
    try {
      ch.send(1);
      ADD_FAILURE() << "send on a closed channel accepted";
    } catch (const Panic& p) {
      EXPECT_STREQ(p.what(), "send on closed channel");
    }
    try {
      ch.close();
      ADD_FAILURE() << "second close accepted";
    } catch (const Panic& p) {
      EXPECT_STREQ(p.what(), "close of closed channel");
    }
    EXPECT_EQ(ch.len(), 0u);  // the failed send left nothing behind
  });
}

TYPED_TEST_P(ApiSuite, CloseWakesEveryBlockedReceiverAndSender) {
  constexpr int kReceivers = 3, kSenders = 2;
  typename TypeParam::Runtime rt(
      this->config(procs_for<TypeParam>(2, kReceivers + kSenders)));
  rt.run([&] {
    typename TypeParam::template Chan<int> empty, full(1);
    full.send(0);
    std::atomic<int> closed_seen{0}, panics{0};
    typename TypeParam::WaitGroup wg;
    wg.add(kReceivers + kSenders);
    for (int i = 0; i < kReceivers; ++i) {
      TypeParam::go([&] {
        if (!empty.recv()) closed_seen.fetch_add(1);
        wg.done();
      });
    }
    for (int i = 0; i < kSenders; ++i) {
      TypeParam::go([&] {
        try {
          full.send(1);
        } catch (const Panic&) {
          panics.fetch_add(1);
        }
        wg.done();
      });
    }
    wait_until_blocked<TypeParam>(rt, kReceivers + kSenders);
    empty.close();
    full.close();
    wg.wait();
    EXPECT_EQ(closed_seen.load(), kReceivers);
    EXPECT_EQ(panics.load(), kSenders);
    EXPECT_EQ(full.recv(), 0);  // the buffered value survives the close
  });
}

TYPED_TEST_P(ApiSuite, ChanCarriesMoveOnlyValues) {
  run_with<TypeParam>(procs_for<TypeParam>(2, 1), [&] {
    typename TypeParam::template Chan<std::unique_ptr<int>> ch;
    typename TypeParam::WaitGroup wg;
    wg.add(1);
    TypeParam::go([&] {
      ch.send(std::make_unique<int>(42));
      wg.done();
    });
    std::optional<std::unique_ptr<int>> v = ch.recv();
    ASSERT_TRUE(v && *v);
    EXPECT_EQ(**v, 42);
    wg.wait();
  });
}

// Go's runtime.NumGoroutine: main plus every goroutine not yet ended,
// blocked ones included; the ended ones no longer count.
TYPED_TEST_P(ApiSuite, NumGoroutineCountsTheLivingOnes) {
  constexpr int kBlocked = 10;
  typename TypeParam::Runtime rt(
      ApiSuite<TypeParam>::config(procs_for<TypeParam>(2, kBlocked)));
  rt.run([&] {
    EXPECT_EQ(TypeParam::num_goroutine(), 1);
    typename TypeParam::template Chan<int> gate;
    typename TypeParam::WaitGroup wg;
    wg.add(kBlocked);
    for (int i = 0; i < kBlocked; ++i) {
      TypeParam::go([&] {
        gate.recv();
        wg.done();
      });
    }
    wait_until_blocked<TypeParam>(rt, kBlocked);
    EXPECT_EQ(TypeParam::num_goroutine(), 1 + kBlocked);
    gate.close();
    wg.wait();
    while (TypeParam::num_goroutine() > 1) TypeParam::yield();  // ending
    EXPECT_EQ(TypeParam::num_goroutine(), 1);
  });
  EXPECT_THROW(TypeParam::num_goroutine(), UsageError);
}

// go() takes a move-only callable (a goroutine that owns what it works
// on), which runs once and is destroyed with its goroutine.
TYPED_TEST_P(ApiSuite, GoTakesMoveOnlyCallables) {
  std::atomic<int> ran{0};
  auto owned = std::make_shared<int>(7);
  std::weak_ptr<int> watch = owned;
  run_with<TypeParam>(procs_for<TypeParam>(2, 1), [&] {
    typename TypeParam::WaitGroup wg;
    wg.add(1);
    auto p = std::make_unique<std::shared_ptr<int>>(std::move(owned));
    TypeParam::go([p = std::move(p), &ran, &wg] {
      ran.fetch_add(**p);
      wg.done();
    });
    wg.wait();
  });
  EXPECT_EQ(ran.load(), 7);
  EXPECT_TRUE(watch.expired()) << "the goroutine's callable was not freed";
}

// Many senders and receivers, several capacities and proc counts: every
// value arrives exactly once.
TYPED_TEST_P(ApiSuite, ManySendersAndReceiversLoseAndDuplicateNothing) {
  constexpr int kSenders = 4, kReceivers = 3, kPerSender = 500;
  for (std::size_t cap : {0u, 1u, 16u}) {
    for (int procs : {1, 2, 4}) {
      std::vector<std::atomic<int>> got(kSenders * kPerSender);
      run_with<TypeParam>(
          procs_for<TypeParam>(procs, kSenders + kReceivers), [&] {
            typename TypeParam::template Chan<int> ch(cap);
            typename TypeParam::WaitGroup senders, receivers;
            senders.add(kSenders);
            receivers.add(kReceivers);
            for (int s = 0; s < kSenders; ++s) {
              TypeParam::go([&, s] {
                for (int i = 0; i < kPerSender; ++i) {
                  ch.send(s * kPerSender + i);
                }
                senders.done();
              });
            }
            for (int r = 0; r < kReceivers; ++r) {
              TypeParam::go([&] {
                while (std::optional<int> v = ch.recv()) {
                  got[*v].fetch_add(1, std::memory_order_relaxed);
                }
                receivers.done();
              });
            }
            senders.wait();
            ch.close();
            receivers.wait();
          });
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i].load(), 1)
            << "value " << i << ", cap " << cap << ", procs " << procs;
      }
    }
  }
}

// A goroutine that blocks inside a catch block (here: yield and a channel)
// may resume on another thread; the exception it is handling must still be
// its own. (The C++ runtime keeps that state per OS thread.)
TYPED_TEST_P(ApiSuite, BlockingInsideACatchBlockKeepsTheException) {
  constexpr int kGoroutines = 8, kRounds = 300;
  std::atomic<int> wrong{0};
  run_with<TypeParam>(procs_for<TypeParam>(2, kGoroutines), [&] {
    typename TypeParam::template Chan<int> tokens(kGoroutines);
    typename TypeParam::WaitGroup wg;
    wg.add(kGoroutines);
    for (int g = 0; g < kGoroutines; ++g) {
      TypeParam::go([&, g] {
        for (int i = 0; i < kRounds; ++i) {
          std::string want = "goroutine " + std::to_string(g) + " round " +
                             std::to_string(i) + " (longer than SSO)";
          try {
            throw std::runtime_error(want);
          } catch (const std::exception& e) {
            TypeParam::yield();
            tokens.send(i);  // and block on a channel, at times
            (void)tokens.recv();
            if (want != e.what()) wrong.fetch_add(1);
            if (std::uncaught_exceptions() != 0) wrong.fetch_add(1);
            if (!std::current_exception()) wrong.fetch_add(1);
          }
          if (std::current_exception()) wrong.fetch_add(1);  // handled
        }
        wg.done();
      });
    }
    wg.wait();
  });
  EXPECT_EQ(wrong.load(), 0);
}

// ---- Exit: main returning ends the other goroutines ----------------------

TYPED_TEST_P(ApiSuite, MainReturningEndsEveryOtherGoroutineCleanly) {
  constexpr int kBlocked = 3, kSleeping = 2, kQueued = 50;
  // Objects outlive run(): goroutines may be parked on them at exit.
  typename TypeParam::template Chan<int> in, out;
  typename TypeParam::Mutex mu;
  auto token = std::make_shared<int>(0);  // each goroutine holds a copy
  typename TypeParam::Runtime rt(
      this->config(procs_for<TypeParam>(2, kBlocked + kSleeping)));
  rt.run([&] {
    mu.lock();
    TypeParam::go([&, token] { (void)in.recv(); });
    TypeParam::go([&, token] { out.send(1); });
    TypeParam::go([&, token] { std::lock_guard lk(mu); });
    for (int i = 0; i < kSleeping; ++i) {
      TypeParam::go([token] { TypeParam::sleep_for(std::chrono::hours(1)); });
    }
    wait_until_blocked<TypeParam>(rt, kBlocked);
    for (int i = 0; i < kQueued; ++i) TypeParam::go([token] {});
    // main returns holding the mutex, with goroutines parked and queued.
  });
  auto stats = rt.stats();
  EXPECT_EQ(token.use_count(), 1) << "a goroutine's closure was not destroyed";
  EXPECT_TRUE(conserved(stats));
  EXPECT_EQ(stats.goroutines_created, 1u + kBlocked + kSleeping + kQueued);
  EXPECT_GE(stats.goroutines_exited, unsigned{kBlocked});
  EXPECT_EQ(stats.goroutines_blocked, 0);
}

// Goroutines still unwinding when a grace (gmp::kExitGrace) has passed
// since main returned are not stuck: run() waits for them as long as one
// of them ends every grace (common/exit.h), and the code after run() runs.
// Here 1,200 parked goroutines unwind one at a time, a millisecond each;
// the program used to end with status 0 after the first second, the code
// after run() never run (10,000 stage 1 workers did the same).
TYPED_TEST_P(ApiSuite, GoroutinesUnwindingLongerThanAGraceAllEnd) {
  constexpr int kGoroutines = 1200;
  std::mutex one_at_a_time;
  std::atomic<int> unwound{0};
  struct SlowUnwind {
    std::mutex& mu;
    std::atomic<int>& n;
    ~SlowUnwind() {
      std::lock_guard lk(mu);  // the thread blocks: no runtime call
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      n.fetch_add(1);
    }
  };
  typename TypeParam::template Chan<int> never;
  typename TypeParam::Runtime rt(
      this->config(procs_for<TypeParam>(2, kGoroutines)));
  rt.run([&] {
    for (int i = 0; i < kGoroutines; ++i) {
      TypeParam::go([&] {
        SlowUnwind slow{one_at_a_time, unwound};
        (void)never.recv();
      });
    }
    wait_until_blocked<TypeParam>(rt, kGoroutines);
  });
  EXPECT_EQ(unwound.load(), kGoroutines);
  EXPECT_TRUE(conserved(rt.stats()));
}

// A goroutine running when main returns (not parked, not queued) ends at
// its next call into the runtime, which throws gmp::Goexit; run() returns.
TYPED_TEST_P(ApiSuite, ARunningGoroutineEndsAtItsNextRuntimeCallAfterMain) {
  std::atomic<bool> started{false};
  std::atomic<bool> main_returning{false};
  std::atomic<int> unwound{0};
  struct Unwind {
    std::atomic<int>& n;
    ~Unwind() { n.fetch_add(1); }
  };
  auto stats = run_with<TypeParam>(procs_for<TypeParam>(2, 1), [&] {
    TypeParam::go([&] {
      Unwind u{unwound};
      started.store(true);
      for (;;) {
        if (main_returning.load()) TypeParam::yield();  // Goexit, once main
      }                                                 // has returned
    });
    while (!started.load()) {  // it runs, on the other thread or on this P
      TypeParam::sleep_for(std::chrono::microseconds(100));
    }
    main_returning.store(true);
  });
  EXPECT_EQ(unwound.load(), 1);
  EXPECT_EQ(stats.goroutines_exited, 1u);
  EXPECT_TRUE(conserved(stats));
}

TYPED_TEST_P(ApiSuite, GoroutinesQueuedWhenMainReturnsNeverRun) {
  std::atomic<int> ran{0};
  int ran_before_return = -1;
  // One proc, and main never blocks: nothing else can start before it
  // returns unless main is preempted (stages 3-5 count it: sysmon asks
  // after 10 ms, which a slow build such as ThreadSanitizer's can take to
  // make 20 goroutines), and nothing may start after.
  auto stats = run_with<TypeParam>(1, [&] {
    for (int i = 0; i < 20; ++i) TypeParam::go([&] { ran.fetch_add(1); });
    ran_before_return = ran.load();
  });
  bool preempted = false;
  if constexpr (requires { stats.preemptions; }) {
    preempted = stats.preemptions > 0;
  }
  if (!preempted) {
    EXPECT_EQ(ran_before_return, 0);
  }
  EXPECT_EQ(ran.load(), ran_before_return);
  EXPECT_EQ(stats.goroutines_finished, 1u + ran_before_return);
  EXPECT_EQ(stats.goroutines_never_started, 20u - ran_before_return);
}

// Goroutines parked when main returns unwind in an order nobody controls:
// one may destroy, as it unwinds, an object another parked goroutine was
// waiting on. The runtime must make that safe (common/sudog.h).
TYPED_TEST_P(ApiSuite, ExitUnwindsGoroutinesThatWaitOnEachOthersObjects) {
  constexpr int kPairs = 8;
  typename TypeParam::template Chan<int> never;  // nobody sends on it
  typename TypeParam::Runtime rt(
      this->config(procs_for<TypeParam>(2, 2 * kPairs)));
  for (int round = 0; round < 10; ++round) {
    rt.run([&] {
      for (int p = 0; p < kPairs; ++p) {
        TypeParam::go([&] {
          typename TypeParam::template Chan<int> mine;  // on this stack
          typename TypeParam::WaitGroup started;
          started.add(1);
          TypeParam::go([&] {
            started.done();
            (void)mine.recv();  // parks inside the other goroutine's object
          });
          started.wait();
          (void)never.recv();
        });
      }
      wait_until_blocked<TypeParam>(rt, 2 * kPairs);
    });
    EXPECT_EQ(rt.stats().goroutines_exited, 2u * kPairs);
  }
}

// Main returns at random moments while goroutines sleep for random short
// times: cancelling a sleep races with its timer going off. Main waits by
// spinning, not sleeping: on stages 3 and 4 (no preemption) sleepers
// whose timers are always due keep runnext full (their timers ready them
// there, as Go's do), and a main readied behind them would never run (the
// starvation Stage3Test.ARunnextChainStarvesTheLocalQueueAndTheGrq shows);
// it hung this test under ThreadSanitizer, where a sleeper's round takes
// longer than its sleep.
TYPED_TEST_P(ApiSuite, StressExitWhileSleepersWakeUp) {
  constexpr int kSleepers = 6;
  for (unsigned i = 0; i < 30; ++i) {
    SCOPED_TRACE("seed " + std::to_string(stress_seed(i)));
    std::mt19937 rng(stress_seed(i));
    auto token = std::make_shared<int>(0);
    auto stats = run_with<TypeParam>(
        procs_for<TypeParam>(2, kSleepers), [&] {
          for (int s = 0; s < kSleepers; ++s) {
            auto d = std::chrono::microseconds(1 + rng() % 200);
            TypeParam::go([token, d] {
              for (;;) TypeParam::sleep_for(d);  // only Goexit ends it
            });
          }
          const auto until = std::chrono::steady_clock::now() +
                             std::chrono::microseconds(rng() % 300);
          while (std::chrono::steady_clock::now() < until) {
          }
        });
    EXPECT_EQ(token.use_count(), 1);
    EXPECT_EQ(stats.goroutines_finished, 1u);  // main only
    EXPECT_TRUE(conserved(stats));
  }
}

// A WaitGroup counted up and down from several Ps at once, round after
// round: add's lock-free path (a change between two positive counts)
// races with the locked one (a change to zero, while goroutines wait).
// Each child writes its own plain slot before done(); main and the
// waiters read every slot after wait(), so a done() that did not happen
// before the wait's return is a data race under ThreadSanitizer, and a
// lost count is a hang or a wrong slot.
TYPED_TEST_P(ApiSuite, StressWaitGroupCountedFromEveryPManySeeds) {
  for (unsigned i = 0; i < 30; ++i) {
    SCOPED_TRACE("seed " + std::to_string(stress_seed(i)));
    std::mt19937 rng(stress_seed(i));
    const int workers = 1 + static_cast<int>(rng() % 4);
    const int per_worker = 10 + static_cast<int>(rng() % 150);
    const int waiters = static_cast<int>(rng() % 4);
    const int procs = procs_for<TypeParam>(1 + static_cast<int>(rng() % 4),
                                           workers + waiters + 1);
    run_with<TypeParam>(procs, [&] {
      typename TypeParam::WaitGroup wg, back;
      for (int round = 0; round < 3; ++round) {
        std::vector<int> slots(static_cast<std::size_t>(workers * per_worker));
        wg.add(1 + workers);  // main's own count keeps it above zero
        back.add(waiters);
        for (int w = 0; w < waiters; ++w) {
          TypeParam::go([&] {
            wg.wait();  // at once if the round is over already
            for (int v : slots) EXPECT_EQ(v, round + 1);
            back.done();
          });
        }
        for (int w = 0; w < workers; ++w) {
          TypeParam::go([&, w, seed = rng()] {
            std::mt19937 r(seed);
            for (int j = 0; j < per_worker; ++j) {
              wg.add(1);  // from a positive count: the lock-free path
              TypeParam::go([&, k = w * per_worker + j, y = r() % 4 == 0] {
                if (y) TypeParam::yield();
                slots[static_cast<std::size_t>(k)] = round + 1;
                wg.done();
              });
            }
            wg.done();
          });
        }
        wg.done();
        wg.wait();
        for (int v : slots) ASSERT_EQ(v, round + 1);
        back.wait();  // every waiter returned before the next add
      }
    });
  }
}

// ---- Stress: random programs, many seeds ------------------------------------

// One random program: producers send through a channel of random capacity
// to consumers, with random yields, sleeps and mutex-protected updates.
// Checks that every value arrives once, the mutex lost no update and every
// goroutine is accounted for. The seed is printed on failure.
template <class Api>
void run_random_program(unsigned seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const int producers = 1 + static_cast<int>(rng() % 4);
  const int consumers = 1 + static_cast<int>(rng() % 4);
  const std::size_t cap = rng() % 4;
  const int per_producer = 20 + static_cast<int>(rng() % 100);
  const int procs = procs_for<Api>(1 + static_cast<int>(rng() % 4),
                                   producers + consumers);
  std::vector<std::atomic<int>> got(producers * per_producer);
  long updates = 0;  // protected by mu
  std::atomic<long> intended{0};  // how many updates were made
  auto stats = run_with<Api>(procs, [&] {
    typename Api::template Chan<int> ch(cap);
    typename Api::Mutex mu;
    typename Api::WaitGroup sent, received;
    sent.add(producers);
    received.add(consumers);
    for (int p = 0; p < producers; ++p) {
      Api::go([&, p, pseed = rng()] {
        std::mt19937 r(pseed);
        for (int i = 0; i < per_producer; ++i) {
          switch (r() % 8) {
            case 0: Api::yield(); break;
            case 1: Api::sleep_for(std::chrono::microseconds(r() % 20)); break;
            case 2: {
              std::lock_guard lk(mu);
              ++updates;
              intended.fetch_add(1, std::memory_order_relaxed);
            } break;
            default: break;
          }
          ch.send(p * per_producer + i);
        }
        sent.done();
      });
    }
    for (int c = 0; c < consumers; ++c) {
      Api::go([&] {
        while (std::optional<int> v = ch.recv()) {
          got[*v].fetch_add(1, std::memory_order_relaxed);
          std::lock_guard lk(mu);
          ++updates;
          intended.fetch_add(1, std::memory_order_relaxed);
        }
        received.done();
      });
    }
    sent.wait();
    ch.close();
    received.wait();
  });
  EXPECT_EQ(updates, intended.load());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].load(), 1) << "value " << i;
  }
  EXPECT_EQ(stats.goroutines_created,
            1u + static_cast<unsigned>(producers + consumers));
  EXPECT_TRUE(conserved(stats));
}

TYPED_TEST_P(ApiSuite, StressRandomProgramsManySeeds) {
  for (unsigned i = 0; i < 40; ++i) {
    run_random_program<TypeParam>(stress_seed(i));
  }
}

REGISTER_TYPED_TEST_SUITE_P(
    ApiSuite, ConfigRejectsInvalidProcs,
    GomaxprocsInTheEnvironmentIsReadAsGoReadsIt,
    RunRunsMainOnceAndReturnsAfterIt,
    RuntimeCanRunAgain, EveryGoroutineRunsExactlyOnce,
    GoroutineOnlyCallsFromAPlainThreadAreUsageErrors,
    RunFromInsideAGoroutineIsAUsageError, EmptyFunctionsAreUsageErrors,
    WakingAGoroutineOfAnotherRuntimeIsAUsageError,
    YieldLetsAnotherGoroutineRun, SleepForSleepsAtLeastItsDuration,
    WaitGroupWaitReturnsAfterEveryDone,
    WaitGroupNegativeCounterPanicsAndChangesNothing,
    WaitGroupCounterOverflowPanicsAndChangesNothing,
    WaitGroupReusedAfterEveryWaitReturnedIsFine,
    WaitGroupReusedBeforeWaitReturnedPanicsInTheWaiter,
    MutexGivesMutualExclusion, MutexTryLockAndHandOffToAWaiter,
    UnbufferedSendIsARendezvous, BufferedChanIsFifoAndBlocksOnlyWhenFull,
    CloseDrainsBufferThenReportsClosed, ImpossibleCapacityPanicsLikeMakechan,
    SendOnClosedAndDoubleClosePanic,
    CloseWakesEveryBlockedReceiverAndSender, ChanCarriesMoveOnlyValues,
    GoTakesMoveOnlyCallables, NumGoroutineCountsTheLivingOnes,
    BlockingInsideACatchBlockKeepsTheException,
    ManySendersAndReceiversLoseAndDuplicateNothing,
    MainReturningEndsEveryOtherGoroutineCleanly,
    GoroutinesUnwindingLongerThanAGraceAllEnd,
    ARunningGoroutineEndsAtItsNextRuntimeCallAfterMain,
    GoroutinesQueuedWhenMainReturnsNeverRun,
    ExitUnwindsGoroutinesThatWaitOnEachOthersObjects,
    StressExitWhileSleepersWakeUp,
    StressWaitGroupCountedFromEveryPManySeeds, StressRandomProgramsManySeeds,
    StressSpawnAndJoinSeventyThousandTimes);

}  // namespace gmp::testing
