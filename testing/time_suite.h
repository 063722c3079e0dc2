// Go's own tests of timers as values (time/sleep_test.go, tick_test.go),
// ported to the course's API and written once for every stage
// (common/time.h). A stage instantiates it with its Api type:
//
//   INSTANTIATE_TYPED_TEST_SUITE_P(Stage1, TimeSuite, gmp::stage1::Api);
//
// Behaviour only: a timer never fires early (a lower bound, never an upper
// one), fires once, stops, resets; no test bounds how late it fires.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/errors.h"
#include "common/select.h"
#include "testing/helpers.h"

namespace gmp::testing {

template <class Api>
class TimeSuite : public ::testing::Test {
 protected:
  using Clock = std::chrono::steady_clock;
  using ms = std::chrono::milliseconds;
};

TYPED_TEST_SUITE_P(TimeSuite);

// sleep_test.go TestAfter: the value arrives no earlier than d, and is a
// time no earlier than d after the call.
TYPED_TEST_P(TimeSuite, AfterDeliversNoEarlierThanItsDuration) {
  using Clock = typename TestFixture::Clock;
  run_procs<TypeParam>(1, 0, [] {
    for (auto d : {std::chrono::milliseconds(0), std::chrono::milliseconds(2),
                   std::chrono::milliseconds(10)}) {
      auto start = Clock::now();
      auto t = TypeParam::Timer::after(d);
      auto v = t.c()->recv();
      ASSERT_TRUE(v.has_value());
      EXPECT_GE(*v - start, d);
      EXPECT_GE(Clock::now() - start, d);
    }
  });
}

// sleep_test.go TestAfterFunc: a chain of ten after_func calls, each
// started from the previous one's goroutine, all run.
TYPED_TEST_P(TimeSuite, AfterFuncChainRunsEveryLink) {
  run_procs<TypeParam>(2, 1, [] {
    using Timer = typename TypeParam::Timer;
    typename TypeParam::template Chan<bool> done;
    std::atomic<int> i{10};
    std::vector<Timer> timers;  // kept alive until the chain ends
    typename TypeParam::Mutex mu;
    std::function<void()> f;
    f = [&] {
      if (i.fetch_sub(1) - 1 > 0) {
        std::lock_guard lk(mu);
        timers.push_back(Timer::after_func(std::chrono::microseconds(100), f));
      } else {
        done.send(true);
      }
    };
    {
      std::lock_guard lk(mu);
      timers.push_back(Timer::after_func(std::chrono::microseconds(100), f));
    }
    EXPECT_EQ(done.recv(), std::optional<bool>(true));
    EXPECT_EQ(i.load(), 0);
    std::lock_guard lk(mu);
    EXPECT_EQ(timers.size(), 10u);
  });
}

// sleep_test.go TestAfterStop: stopped timers neither send nor run; an
// unstopped one among them does.
TYPED_TEST_P(TimeSuite, StoppedTimersNeitherSendNorRun) {
  using ms = typename TestFixture::ms;
  run_procs<TypeParam>(2, 1, [] {
    using Timer = typename TypeParam::Timer;
    std::atomic<bool> ran{false};
    Timer f = Timer::after_func(ms(20), [&] { ran.store(true); });
    Timer t0 = Timer::new_timer(ms(20));
    Timer live = Timer::after(ms(40));
    EXPECT_TRUE(f.stop());
    EXPECT_TRUE(t0.stop());
    EXPECT_FALSE(f.stop());  // stopped already
    EXPECT_FALSE(t0.stop());
    live.c()->recv();  // 40 ms: the stopped ones were due long ago
    EXPECT_FALSE(ran.load());
    std::optional<typename Timer::Clock::time_point> v;
    EXPECT_FALSE(t0.c()->try_recv(v)) << "a stopped timer sent";
  });
}

// Go 1.23 (sleep_test.go TestTimerModifiedEarlier et al.): a timer that
// fired but whose value nobody received yet is stopped by stop() (true)
// and its value is gone; reset() likewise, and only the new value comes.
TYPED_TEST_P(TimeSuite, StopAndResetLeaveNoStaleValue) {
  using ms = typename TestFixture::ms;
  using Clock = typename TestFixture::Clock;
  run_procs<TypeParam>(1, 0, [] {
    using Timer = typename TypeParam::Timer;
    Timer t = Timer::new_timer(ms(1));
    TypeParam::sleep_for(ms(10));  // it fired; nobody received
    EXPECT_TRUE(t.stop());
    std::optional<typename Clock::time_point> v;
    EXPECT_FALSE(t.c()->try_recv(v)) << "a stale value after stop";
    EXPECT_FALSE(t.stop());

    Timer r = Timer::new_timer(ms(1));
    TypeParam::sleep_for(ms(10));  // fired, not received
    auto reset_at = Clock::now();
    EXPECT_TRUE(r.reset(ms(5)));
    EXPECT_FALSE(r.c()->try_recv(v)) << "a stale value after reset";
    v = r.c()->recv();
    ASSERT_TRUE(v.has_value());
    EXPECT_GE(*v - reset_at, ms(5)) << "the value is the old firing's";
    EXPECT_FALSE(r.reset(ms(1)));  // fired and received: not pending
    EXPECT_TRUE(r.c()->recv().has_value());
  });
}

// sleep_test.go TestReset: a timer reset before it fires fires once, at
// the new time.
TYPED_TEST_P(TimeSuite, ResetBeforeFiringMovesTheTime) {
  using ms = typename TestFixture::ms;
  using Clock = typename TestFixture::Clock;
  run_procs<TypeParam>(1, 0, [] {
    using Timer = typename TypeParam::Timer;
    auto start = Clock::now();
    Timer t = Timer::new_timer(ms(5));
    EXPECT_TRUE(t.reset(ms(20)));
    auto v = t.c()->recv();
    ASSERT_TRUE(v.has_value());
    EXPECT_GE(*v - start, ms(20));
    TypeParam::sleep_for(ms(10));
    std::optional<typename Clock::time_point> again;
    EXPECT_FALSE(t.c()->try_recv(again)) << "fired twice";
  });
}

// tick_test.go TestTicker: ticks arrive about every d, each no earlier
// than the last plus d (one that nobody takes is dropped, never queued).
TYPED_TEST_P(TimeSuite, TickerTicksUntilStopped) {
  using ms = typename TestFixture::ms;
  using Clock = typename TestFixture::Clock;
  run_procs<TypeParam>(1, 0, [] {
    using Timer = typename TypeParam::Timer;
    auto start = Clock::now();
    Timer tk = Timer::new_ticker(ms(2));
    typename Clock::time_point last = start;
    for (int i = 0; i < 5; ++i) {
      auto v = tk.c()->recv();
      ASSERT_TRUE(v.has_value());
      EXPECT_GE(*v - last, ms(2) - std::chrono::microseconds(1));
      last = *v;
    }
    EXPECT_GE(Clock::now() - start, ms(10));
    TypeParam::sleep_for(ms(10));  // ticks dropped: the slot holds one
    EXPECT_EQ(tk.c()->len(), 1u);
    EXPECT_TRUE(tk.stop());  // it dropped the waiting tick
    std::optional<typename Clock::time_point> v;
    EXPECT_FALSE(tk.c()->try_recv(v));
    TypeParam::sleep_for(ms(5));
    EXPECT_FALSE(tk.c()->try_recv(v)) << "a stopped ticker ticked";
    tk.reset(ms(1));  // a stopped ticker starts again
    EXPECT_TRUE(tk.c()->recv().has_value());
  });
}

// tick_test.go TestNewTickerLtZeroDuration, TestTickerResetLtZeroDuration:
// a non-positive interval panics with Go's message, and a failed reset
// changes nothing. Zero and negative timers fire at once.
TYPED_TEST_P(TimeSuite, BadIntervalsPanicAsGoAndZeroFiresAtOnce) {
  using ms = typename TestFixture::ms;
  run_procs<TypeParam>(1, 0, [] {
    using Timer = typename TypeParam::Timer;
    for (auto d : {ms(0), ms(-1)}) {
      try {
        Timer::new_ticker(d);
        ADD_FAILURE() << "no panic";
      } catch (const Panic& p) {
        EXPECT_STREQ(p.what(), "non-positive interval for NewTicker");
      }
    }
    Timer tk = Timer::new_ticker(ms(1));
    EXPECT_THROW(tk.reset(ms(0)), Panic);
    EXPECT_TRUE(tk.c()->recv().has_value());  // still ticking
    Timer z = Timer::new_timer(ms(0));
    Timer n = Timer::new_timer(ms(-5));
    EXPECT_TRUE(z.c()->recv().has_value());
    EXPECT_TRUE(n.c()->recv().has_value());
    Timer z2 = Timer::new_timer(ms(50));
    z2.reset(ms(-1));
    EXPECT_TRUE(z2.c()->recv().has_value());
  });
}

// A select with a timeout (Go's `case <-time.After(d):`): the timer case
// fires when the channel stays empty, and the channel's when it is not.
TYPED_TEST_P(TimeSuite, SelectWithATimeout) {
  using ms = typename TestFixture::ms;
  run_procs<TypeParam>(2, 1, [] {
    typename TypeParam::template Chan<int> c;
    EXPECT_EQ(select(recv_case(c), recv_case(TypeParam::Timer::after(
                                       ms(5)).c())),
              1);
    TypeParam::go([&] { c.send(1); });
    EXPECT_EQ(select(recv_case(c), recv_case(TypeParam::Timer::after(
                                       std::chrono::seconds(30)).c())),
              0);
  });
}

// sleep_test.go TestTimerStopStress / TestAfterStress: many goroutines
// starting, stopping and resetting timers at seeded random moments; every
// timer not stopped delivers exactly once, every stopped one never.
TYPED_TEST_P(TimeSuite, StressManyTimersStopAndFire) {
  run_procs<TypeParam>(2, 8, [] {
    using Timer = typename TypeParam::Timer;
    typename TypeParam::WaitGroup wg;
    std::atomic<int> delivered{0}, expected{0};
    constexpr int kGoroutines = 8;
    wg.add(kGoroutines);
    for (int g = 0; g < kGoroutines; ++g) {
      TypeParam::go([&, g] {
        std::mt19937 rng(1234u + static_cast<unsigned>(g));
        for (int i = 0; i < 50; ++i) {
          auto d = std::chrono::microseconds(rng() % 2000);
          Timer t = Timer::new_timer(d);
          if (rng() % 2 == 0) {
            TypeParam::sleep_for(std::chrono::microseconds(rng() % 2000));
            if (t.stop()) continue;  // prevented: nothing may arrive
            ADD_FAILURE() << "stop() false before any receive";
          }
          expected.fetch_add(1);
          if (t.c()->recv()) delivered.fetch_add(1);
          std::optional<typename Timer::Clock::time_point> v;
          EXPECT_FALSE(t.c()->try_recv(v)) << "delivered twice";
        }
        wg.done();
      });
    }
    wg.wait();
    EXPECT_EQ(delivered.load(), expected.load());
  });
}

// Tickers of a microsecond destroyed at seeded random moments, while the
// runtime takes their ticks: every destructor stops its ticker and waits
// for a tick under way. (CI's ASan run once found a ticker freed under its
// heap, when a tick took it out and pushed it back; that window is rare
// here, and TimerHeapTest.ATickerNeverLooksOutOfItsHeapWhileTicking shows
// it every time.)
TYPED_TEST_P(TimeSuite, StressTickersDestroyedWhileTicking) {
  run_procs<TypeParam>(2, 8, [] {
    using Ticker = typename TypeParam::Timer;  // also Go's Ticker
    typename TypeParam::WaitGroup wg;
    std::atomic<int> ticks{0};
    constexpr int kGoroutines = 4;
    wg.add(kGoroutines);
    for (int g = 0; g < kGoroutines; ++g) {
      TypeParam::go([&, g] {
        std::mt19937 rng(99u + static_cast<unsigned>(g));
        for (int i = 0; i < 300; ++i) {
          Ticker t = Ticker::new_ticker(std::chrono::microseconds(1));
          if (rng() % 2 == 0) {
            if (t.c()->recv()) ticks.fetch_add(1);
          } else {
            for (unsigned k = rng() % 50; k > 0; --k) TypeParam::yield();
          }
        }  // destroyed: stopped, a tick under way waited for
        wg.done();
      });
    }
    wg.wait();
    EXPECT_GT(ticks.load(), 0);
  });
}

// sleep_test.go TestConcurrentTimerReset and TestConcurrentTimerResetStop:
// eight goroutines reset (and stop) one timer at once. reset() holds the
// timer's lock while it puts the timer in a heap; a goroutine preempted
// there (stage 5) would leave every other one waiting for that lock for
// ever, on every M.
TYPED_TEST_P(TimeSuite, ConcurrentResetsOfOneTimer) {
  using Timer = typename TypeParam::Timer;
  constexpr int kGoroutines = 8;
  constexpr int kTries = 5000;
  for (bool with_stop : {false, true}) {
    run_procs<TypeParam>(2, kGoroutines, [&] {
      typename TypeParam::WaitGroup wg;
      auto timer = Timer::new_timer(std::chrono::hours(1));
      wg.add(kGoroutines);
      for (int i = 0; i < kGoroutines; ++i) {
        TypeParam::go([&, i] {
          for (int j = 0; j < kTries; ++j) {
            timer.reset(std::chrono::hours(1) + std::chrono::nanoseconds(i * j));
            if (with_stop) timer.stop();
          }
          wg.done();
        });
      }
      wg.wait();
      EXPECT_EQ(timer.stop(), !with_stop);  // one reset is pending, or none
    });
  }
}

// sleep_test.go TestOverflowSleep, and every other duration the time API
// takes: a duration so long that now + d is past the clock's end never
// fires (Go saturates); the most negative one fires at once.
TYPED_TEST_P(TimeSuite, DurationsPastTheClocksEndNeverFire) {
  using Timer = typename TypeParam::Timer;
  using ms = typename TestFixture::ms;
  constexpr auto kBig = std::chrono::nanoseconds::max();
  constexpr auto kNeg = std::chrono::nanoseconds::min();
  run_procs<TypeParam>(1, 0, [&] {
    std::atomic<bool> ran{false};
    auto after = Timer::after(kBig);
    auto func = Timer::after_func(kBig, [&] { ran.store(true); });
    auto reset = Timer::new_timer(std::chrono::hours(1));
    reset.reset(kBig);
    auto ticker = Timer::new_ticker(kBig);
    auto ticker_reset = Timer::new_ticker(ms(1));
    ticker_reset.reset(kBig);
    auto soon = Timer::after(ms(25));
    EXPECT_EQ(select(recv_case(after.c()), recv_case(reset.c()),
                     recv_case(ticker.c()), recv_case(ticker_reset.c()),
                     recv_case(soon.c())),
              4);
    EXPECT_FALSE(ran.load());
    EXPECT_TRUE(after.stop());  // still waiting
    EXPECT_TRUE(func.stop());
    EXPECT_TRUE(ticker.stop());
    TypeParam::sleep_for(kNeg);  // returns at once
    auto neg = Timer::after(kNeg);
    EXPECT_TRUE(neg.c()->recv().has_value());
    reset.reset(kNeg);
    EXPECT_TRUE(reset.c()->recv().has_value());
    EXPECT_THROW(Timer::new_ticker(kNeg), Panic);
  });
}

// A Timer belongs to the runtime that made it: a goroutine of another
// runtime that receives from its channel (recv, try_recv, select) or
// resets it gets a UsageError, which changes nothing: the timer then
// fires in its own runtime. stop() works from anywhere.
TYPED_TEST_P(TimeSuite, TimerOfAnotherRuntimeIsAUsageError) {
  using Api = TypeParam;
  using Timer = typename Api::Timer;
  using ms = typename TestFixture::ms;
  std::optional<Timer> timer;
  std::atomic<int> step{0};
  std::vector<std::string> errors;
  typename Api::Runtime a(typename Api::Config{});
  std::thread other([&] {
    a.run([&] {
      timer.emplace(Timer::new_timer(std::chrono::hours(1)));
      step.store(1);
      while (step.load() != 2) Api::sleep_for(ms(1));
      timer->reset(ms(5));  // unchanged by the other runtime's attempts
      EXPECT_TRUE(timer->c()->recv().has_value());
    });
  });
  run_procs<Api>(1, 0, [&] {
    while (step.load() != 1) Api::sleep_for(ms(1));
    auto expect_usage_error = [&](auto call) {
      try {
        call();
        ADD_FAILURE() << "a goroutine of another runtime used the timer";
      } catch (const UsageError& e) {
        errors.push_back(e.what());
      }
    };
    std::optional<typename Timer::Clock::time_point> v;
    expect_usage_error([&] { timer->c()->recv(); });
    expect_usage_error([&] { timer->c()->try_recv(v); });
    expect_usage_error([&] { select(recv_case(timer->c()), default_case); });
    expect_usage_error([&] { timer->reset(ms(1)); });
    EXPECT_TRUE(timer->stop());  // any thread may stop it
    step.store(2);
  });
  other.join();
  ASSERT_EQ(errors.size(), 4u);
  for (const std::string& e : errors) {
    EXPECT_NE(e.find("belongs to another runtime"), std::string::npos) << e;
  }
  EXPECT_EQ(errors[0].rfind("Chan::recv: this channel is a Timer's", 0), 0u)
      << errors[0];
  EXPECT_EQ(errors[3].rfind("Timer::reset: this Timer belongs", 0), 0u)
      << errors[3];
  timer.reset();
}

// Main returning while timers are pending: an after_func never runs, and
// timers outliving the run are destroyed after it without harm.
TYPED_TEST_P(TimeSuite, PendingTimersDieWithTheRun) {
  using Timer = typename TypeParam::Timer;
  std::atomic<bool> ran{false};
  std::optional<Timer> outlives;
  auto stats = run_procs<TypeParam>(1, 0, [&] {
    outlives.emplace(Timer::after_func(std::chrono::seconds(10), [&] { ran.store(true); }));
  });
  EXPECT_TRUE(conserved(stats));
  EXPECT_FALSE(ran.load());
  EXPECT_FALSE(outlives->stop());  // its run is over: nothing to stop
  outlives.reset();
}

// Timers from a plain thread: a UsageError, as every runtime call.
TYPED_TEST_P(TimeSuite, TimersOutsideAGoroutineAreAUsageError) {
  using Timer = typename TypeParam::Timer;
  EXPECT_THROW(Timer::new_timer(std::chrono::milliseconds(1)), UsageError);
  EXPECT_THROW(Timer::after_func(std::chrono::milliseconds(1), [] {}),
               UsageError);
}

REGISTER_TYPED_TEST_SUITE_P(TimeSuite, AfterDeliversNoEarlierThanItsDuration,
                            AfterFuncChainRunsEveryLink,
                            StoppedTimersNeitherSendNorRun,
                            StopAndResetLeaveNoStaleValue,
                            ResetBeforeFiringMovesTheTime,
                            TickerTicksUntilStopped,
                            BadIntervalsPanicAsGoAndZeroFiresAtOnce,
                            SelectWithATimeout, StressManyTimersStopAndFire,
                            StressTickersDestroyedWhileTicking,
                            PendingTimersDieWithTheRun,
                            TimersOutsideAGoroutineAreAUsageError,
                            ConcurrentResetsOfOneTimer,
                            DurationsPastTheClocksEndNeverFire,
                            TimerOfAnotherRuntimeIsAUsageError);

}  // namespace gmp::testing
