// Stage 5's tests: the behaviour every stage must have (testing/), then
// sysmon and cooperative preemption: a loop that calls functions is
// preempted, a loop without calls is not (Go 1.13's limit), runnext chains
// share one slice, sysmon polls the network when every M is busy. This
// file is compiled with -finstrument-functions (BUILD): its functions are
// safe points.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "stage4_syscalls/net.h"
#include "stage5_preemption/api.h"
#include "testing/api_death_suite.h"
#include "testing/api_suite.h"
#include "testing/helpers.h"

namespace gmp::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(Stage5, ApiSuite, stage5::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage5, ApiDeathTest, stage5::Api);

}  // namespace gmp::testing

namespace gmp::stage5 {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

Config one_p(Preempt mode) {
  Config c;
  c.procs = 1;
  c.debug = "";
  c.preempt = mode;
  return c;
}

// A function call: a safe point (instrumented), never inlined away.
__attribute__((noinline)) long step(long x) { return (x * 3 + 1) % 1000003; }

// A goroutine computing with function calls, on the only P: sysmon asks it
// to yield after a time slice, and main's 1 ms sleep ends. (Give-up bound:
// 10 s; it takes about 10 ms.)
TEST(Stage5Test, ALoopWithCallsIsPreemptedCooperatively) {
  Runtime rt(one_p(Preempt::kCooperative));
  bool main_woke_first = false;
  rt.run([&] {
    std::atomic<bool> stop{false}, gave_up{false};
    WaitGroup wg;
    wg.add(1);
    go([&] {
      auto give_up = Clock::now() + std::chrono::seconds(10);
      long x = 0;
      while (!stop.load()) {
        x = step(x);
        if (Clock::now() > give_up) gave_up.store(true);
        if (gave_up.load()) break;
      }
      wg.done();
    });
    sleep_for(milliseconds(1));
    main_woke_first = !gave_up.load();
    stop.store(true);
    wg.wait();
  });
  EXPECT_TRUE(main_woke_first);
  Stats s = rt.stats();
  EXPECT_GE(s.preemptions, 1u);
  EXPECT_GE(s.preempt_requests, s.preemptions);
}

// The notes' Go 1.13 example, bounded: a loop without function calls keeps
// the P for all its 200 ms, although sysmon asks it to yield; main's 1 ms
// sleep only ends after it.
TEST(Stage5Test, ALoopWithoutCallsIsNotPreemptedCooperatively) {
  Runtime rt(one_p(Preempt::kCooperative));
  bool loop_done_when_main_woke = false;
  rt.run([&] {
    std::atomic<bool> loop_done{false};
    go([&] {
      auto until = Clock::now() + milliseconds(200);
      while (Clock::now() < until) {  // Clock::now is not instrumented
      }
      loop_done.store(true);
    });
    sleep_for(milliseconds(1));
    loop_done_when_main_woke = loop_done.load();
  });
  EXPECT_TRUE(loop_done_when_main_woke);
  EXPECT_GE(rt.stats().preempt_requests, 1u) << "sysmon never asked";
}

TEST(Stage5Test, PreemptNoneNeverPreempts) {
  Runtime rt(one_p(Preempt::kNone));
  bool loop_done_when_main_woke = false;
  rt.run([&] {
    std::atomic<bool> loop_done{false};
    go([&] {
      auto until = Clock::now() + milliseconds(50);
      long x = 0;
      while (Clock::now() < until) x = step(x);
      loop_done.store(true);
    });
    sleep_for(milliseconds(1));
    loop_done_when_main_woke = loop_done.load();
  });
  EXPECT_TRUE(loop_done_when_main_woke);
  EXPECT_EQ(rt.stats().preempt_requests, 0u);
  EXPECT_EQ(rt.stats().preemptions, 0u);
}

// The notes' "LIFO buffer" story: two goroutines handing a value back and
// forth through runnext share one time slice (only a non-inherited run
// ticks), so after 10 ms they are preempted to the GRQ and a third
// goroutine, queued on the same P, runs. Without preemption it would wait
// for ever.
TEST(Stage5Test, RunnextChainsShareOneSliceAndArePreempted) {
  Runtime rt(one_p(Preempt::kCooperative));
  std::atomic<bool> third_ran{false};
  std::atomic<long> hand_offs{0};
  rt.run([&] {
    Chan<int> a, b;
    WaitGroup wg;
    wg.add(2);
    go([&] {  // in runnext, then pushed to the local queue by the next go
      third_ran.store(true);
      wg.done();
    });
    go([&] {  // main's partner: every hand-off readies the other as runnext
      while (std::optional<int> v = a.recv()) b.send(static_cast<int>(step(*v)));
      wg.done();
    });
    for (int v = 0; !third_ran.load(); v = static_cast<int>(step(v) % 1000)) {
      a.send(v);
      v = *b.recv();
      hand_offs.fetch_add(1);
    }
    a.close();
    wg.wait();
  });
  EXPECT_TRUE(third_ran.load());
  EXPECT_GT(hand_offs.load(), 0);
  EXPECT_GE(rt.stats().preemptions, 1u);
}

// Every M busy (one P, a loop sysmon may not preempt): sysmon polls the
// network after 10 ms without a poll, and queues the reader, which runs as
// soon as the loop ends.
TEST(Stage5Test, SysmonPollsTheNetworkWhenEveryMIsBusy) {
  Runtime rt(one_p(Preempt::kNone));
  std::string got;
  int write_fd = -1;
  std::thread writer;
  rt.run([&] {
    auto [r, w] = stage4::pipe();
    auto reader = std::make_shared<stage4::Conn>(std::move(r));
    auto keep = std::make_shared<stage4::Conn>(std::move(w));
    WaitGroup wg;
    wg.add(1);
    go([&, reader] {
      char buf[8];
      std::size_t n = reader->read(buf, sizeof buf);
      got.assign(buf, n);
      wg.done();
    });
    yield();  // the reader parks on the pipe
    go([&, keep] {  // busy for 100 ms; meanwhile the pipe becomes readable
      keep->write("ready");
      auto until = Clock::now() + milliseconds(100);
      while (Clock::now() < until) {
      }
    });
    wg.wait();
  });
  (void)write_fd;
  EXPECT_EQ(got, "ready");
  EXPECT_GE(rt.stats().sysmon_netpolls, 1u);
}

// Go's lazy hand-off: a call that returns quickly takes its P back with one
// compare-exchange; no other M is woken. (Most calls: one that happened to
// span two sysmon rounds, on a busy machine, is retaken, correctly.)
TEST(Stage5Test, AFastSyscallKeepsItsP) {
  Runtime rt(one_p(Preempt::kCooperative));
  constexpr int kCalls = 2000;
  bool same_p_throughout = true;
  rt.run([&] {
    for (int i = 0; i < kCalls; ++i) {
      blocking([] { return ::getppid(); });
    }
    same_p_throughout = stage3::getm()->p->id == 0;
  });
  Stats s = rt.stats();
  EXPECT_TRUE(same_p_throughout);
  EXPECT_EQ(s.syscalls, static_cast<std::uint64_t>(kCalls));
  EXPECT_GE(s.syscalls_fast, s.syscalls / 2);
  EXPECT_EQ(s.syscalls_fast + s.exitsyscall_oldp + s.exitsyscall_otherp +
                s.exitsyscall_grq,
            s.syscalls);
  EXPECT_LE(s.syscall_retakes, s.syscalls - s.syscalls_fast);
}

// A call that lasts: sysmon retakes its P, and the goroutine queued behind
// it on the only P runs during the call (in stage 3 it would wait).
TEST(Stage5Test, SysmonRetakesThePOfALongSyscall) {
  Runtime rt(one_p(Preempt::kCooperative));
  bool other_ran_during_call = false;
  rt.run([&] {
    std::atomic<bool> other_ran{false};
    WaitGroup wg;
    wg.add(1);
    go([&] {
      other_ran.store(true);
      wg.done();
    });
    // The call waits for the other goroutine (give-up bound: 10 s).
    other_ran_during_call = blocking([&] {
      auto give_up = Clock::now() + std::chrono::seconds(10);
      while (!other_ran.load() && Clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
      return other_ran.load();
    });
    wg.wait();
  });
  EXPECT_TRUE(other_ran_during_call);
  Stats s = rt.stats();
  EXPECT_GE(s.syscall_retakes, 1u);
  EXPECT_EQ(s.syscalls_fast, 0u);
}

// A stop of the world (a GOMAXPROCS change) takes a P left in a system
// call as it is: it completes while the call still blocks.
TEST(Stage5Test, StopTheWorldTakesAPInASyscall) {
  Config c = one_p(Preempt::kCooperative);
  c.procs = 2;
  Runtime rt(c);
  bool call_still_blocked = false;
  rt.run([&] {
    std::atomic<bool> in_call{false}, release{false};
    WaitGroup wg;
    wg.add(1);
    go([&] {
      blocking([&] {
        in_call.store(true);
        auto give_up = Clock::now() + std::chrono::seconds(10);
        while (!release.load() && Clock::now() < give_up) {
          std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
      });
      wg.done();
    });
    while (!in_call.load()) yield();
    gomaxprocs(1);
    gomaxprocs(2);
    call_still_blocked = !release.load();
    release.store(true);
    wg.wait();
  });
  EXPECT_TRUE(call_still_blocked);
}

// Stress over seeds: calls of varied length (some returning at once, some
// retaken) among goroutines exchanging on a channel, 1-2 Ps.
TEST(Stage5Test, StressLazySyscalls) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    Config c = one_p(Preempt::kCooperative);
    c.procs = 1 + static_cast<int>(seed % 2);
    Runtime rt(c);
    long sum = 0;
    rt.run([&] {
      Chan<long> out(2);
      constexpr int kWorkers = 6;
      for (int w = 0; w < kWorkers; ++w) {
        go([&out, w, seed] {
          long x = 0;
          for (int i = 0; i < 200; ++i) {
            unsigned us = (seed * 7 + static_cast<unsigned>(w * i)) % 40;
            x += blocking([us] {
              if (us > 30) std::this_thread::sleep_for(std::chrono::microseconds(us * 10));
              return static_cast<long>(::getppid() > 0);
            });
          }
          out.send(x);
        });
      }
      for (int w = 0; w < kWorkers; ++w) sum += *out.recv();
    });
    EXPECT_EQ(sum, 6 * 200) << "seed " << seed;
    Stats s = rt.stats();
    EXPECT_EQ(s.syscalls_fast + s.exitsyscall_oldp + s.exitsyscall_otherp +
                  s.exitsyscall_grq,
              s.syscalls)
        << "seed " << seed;
  }
}

TEST(Stage5Test, ConfigRejectsBadTimeSlices) {
  Config c = one_p(Preempt::kCooperative);
  c.time_slice = std::chrono::microseconds(10);
  EXPECT_THROW(Runtime{c}, ConfigError);
  c.time_slice = std::chrono::seconds(11);
  EXPECT_THROW(Runtime{c}, ConfigError);
}

// Stress over seeds: goroutines computing with calls on 1-2 Ps with a
// short slice, exchanging results on a channel; all arrive, sums agree.
TEST(Stage5Test, StressPreemptionWithChannels) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    Config c = one_p(Preempt::kCooperative);
    c.procs = 1 + static_cast<int>(seed % 2);
    c.time_slice = std::chrono::microseconds(200 + 100 * seed);
    Runtime rt(c);
    long total = 0, expect = 0;
    rt.run([&] {
      Chan<long> results(4);
      constexpr int kWorkers = 8;
      for (int w = 0; w < kWorkers; ++w) {
        go([&results, w, seed] {
          long x = w + static_cast<long>(seed);
          for (int i = 0; i < 200000; ++i) x = step(x) % 1000003;
          results.send(x);
        });
      }
      for (int w = 0; w < kWorkers; ++w) {
        long x = w + static_cast<long>(seed);
        for (int i = 0; i < 200000; ++i) x = (x * 3 + 1) % 1000003;
        expect += x;
        total += *results.recv();
      }
    });
    EXPECT_EQ(total, expect) << "seed " << seed;
  }
}

}  // namespace
}  // namespace gmp::stage5
