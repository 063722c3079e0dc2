// Stage 5's tests: the behaviour every stage must have (testing/), then
// sysmon and cooperative preemption: a loop that calls functions is
// preempted, a loop without calls is not (Go 1.13's limit), runnext chains
// share one slice, sysmon polls the network when every M is busy. This
// file is compiled with -finstrument-functions (BUILD): its functions are
// safe points.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "stage3_gmp/gmp_suite.h"
#include "stage4_syscalls/net.h"
#include "stage5_preemption/api.h"
#include "stage5_preemption/async_preempt.h"
#include "stage5_preemption/user_code.h"
#include "testing/api_death_suite.h"
#include "testing/api_suite.h"
#include "testing/context_suite.h"
#include "testing/lock_os_thread_suite.h"
#include "testing/select_suite.h"
#include "testing/time_suite.h"
#include "testing/helpers.h"

namespace gmp::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(Stage5, ApiSuite, stage5::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage5, SelectSuite, stage5::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage5, TimeSuite, stage5::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage5, ContextSuite, stage5::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage5, LockOSThreadSuite, stage5::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage5, LockOSThreadDeathTest, stage5::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage5, SelectDeathTest, stage5::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage5, ApiDeathTest, stage5::Api);

}  // namespace gmp::testing

namespace gmp::stage3 {

INSTANTIATE_TYPED_TEST_SUITE_P(Stage5, GmpSuite, stage5::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage5, GmpDeathTest, stage5::Api);

}  // namespace gmp::stage3

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
// to yield after a time slice, and main's 1 ms sleep ends. (Main sleeps
// until it sees the loop begun: its first timer may be due before. Give-up
// bound: 10 s; it takes about 10 ms.)
TEST(Stage5Test, ALoopWithCallsIsPreemptedCooperatively) {
  Runtime rt(one_p(Preempt::kCooperative));
  bool main_woke_first = false;
  rt.run([&] {
    std::atomic<bool> started{false}, stop{false}, gave_up{false};
    WaitGroup wg;
    wg.add(1);
    go([&] {
      started.store(true);
      auto give_up = Clock::now() + std::chrono::seconds(10);
      long x = 0;
      while (!stop.load()) {
        x = step(x);
        if (Clock::now() > give_up) gave_up.store(true);
        if (gave_up.load()) break;
      }
      wg.done();
    });
    while (!started.load()) sleep_for(milliseconds(1));
    main_woke_first = !gave_up.load();
    stop.store(true);
    wg.wait();
  });
  EXPECT_TRUE(main_woke_first);
  Stats s = rt.stats();
  EXPECT_GE(s.preemptions, 1u);
  EXPECT_GE(s.preempt_requests, s.preemptions);
}

// Runs a loop on the only P of rt for `length`, with a call to step() per
// turn (a safe point) or without any call, while main sleeps 1 ms at a
// time until it sees the loop begun (if the OS holds the M up longer than
// main's first 1 ms, main's timer is due before the loop starts and main
// simply sleeps again). Returns whether the loop had ended when main first
// woke after it began: true unless the loop was preempted.
bool loop_done_when_main_woke(Runtime& rt, milliseconds length, bool calls) {
  bool done_when_main_woke = false;
  rt.run([&] {
    std::atomic<bool> started{false}, done{false};
    go([&] {
      started.store(true);
      auto until = Clock::now() + length;  // Clock::now is not instrumented
      long x = 0;
      while (Clock::now() < until) {
        if (calls) x = step(x);
      }
      done.store(true);
    });
    while (!started.load()) sleep_for(milliseconds(1));
    done_when_main_woke = done.load();
  });
  return done_when_main_woke;
}

// go() moves the function into the new G inside the runtime (newproc),
// with this goroutine's M and P in locals: the function's move
// constructor, user code and so a safe point, must not be preempted there,
// or the goroutine would go on on another M with the old one's P. A move
// that computes for 3 ms (three time slices) is not preempted; the
// request is honoured right after go() returns (Go's acquirem).
TEST(Stage5Test, GoNeverLosesItsMToPreemption) {
  for (Preempt mode : {Preempt::kCooperative, kDefaultPreempt}) {
    Config c = one_p(mode);
    c.time_slice = milliseconds(1);
    Runtime rt(c);
    std::atomic<int> slow_moves{0}, preempted_inside{0};
    struct SlowToMove {
      Runtime* rt;
      std::atomic<int>* slow;
      std::atomic<int>* preempted;
      int moves = 0;
      SlowToMove(Runtime* r, std::atomic<int>* s, std::atomic<int>* p)
          : rt(r), slow(s), preempted(p) {}
      SlowToMove(SlowToMove&& o) noexcept
          : rt(o.rt), slow(o.slow), preempted(o.preempted),
            moves(o.moves + 1) {
        if (moves != 2) return;  // the first makes go()'s GoFunc; the
        slow->fetch_add(1);      // second is inside go(), into newproc
        const std::uint64_t before = rt->stats().preemptions;
        auto until = Clock::now() + milliseconds(3);
        long x = 0;
        while (Clock::now() < until) x = step(x);  // safe points
        if (rt->stats().preemptions != before) preempted->fetch_add(1);
      }
      void operator()() const {}
    };
    rt.run([&] {
      for (int i = 0; i < 10; ++i) {
        go(SlowToMove(&rt, &slow_moves, &preempted_inside));
      }
    });
    EXPECT_EQ(slow_moves.load(), 10) << "go() no longer moves fn twice";
    EXPECT_EQ(preempted_inside.load(), 0);
    EXPECT_GE(rt.stats().preempt_requests, 1u) << "sysmon never asked";
  }
}

// The notes' Go 1.13 example (note 001, docs/course/notes.md), bounded: a loop
// without function calls keeps the P for all its 200 ms, although sysmon asks
// it to yield; main's 1 ms sleep only ends after it.
TEST(Stage5Test, ALoopWithoutCallsIsNotPreemptedCooperatively) {
  Runtime rt(one_p(Preempt::kCooperative));
  EXPECT_TRUE(loop_done_when_main_woke(rt, milliseconds(200), false));
  EXPECT_GE(rt.stats().preempt_requests, 1u) << "sysmon never asked";
}

// With Preempt::kNone sysmon never asks: even a loop with calls keeps the
// P for its 50 ms. (Before main waited for the loop to begin, the clean-
// clone CI's ASan run once saw main's timer due before the loop started.)
TEST(Stage5Test, PreemptNoneNeverPreempts) {
  Runtime rt(one_p(Preempt::kNone));
  EXPECT_TRUE(loop_done_when_main_woke(rt, milliseconds(50), true));
  EXPECT_EQ(rt.stats().preempt_requests, 0u);
  EXPECT_EQ(rt.stats().preemptions, 0u);
}

// Go's preemptone asks only a goroutine (it declines when the M's curg is
// nil): an M that stays in its scheduler longer than a time slice is
// neither asked to yield nor signalled. Here it spends 50 ms in a timer's
// function, which the runtime calls on g0 while main sleeps. (On the
// timers 100k benchmark it was an M firing a long batch of timers: before
// the fix sysmon signalled it every round, and every signal declined.)
void spin_50ms(void* arg, std::uint64_t, Clock::time_point) {
  auto until = Clock::now() + milliseconds(50);
  while (Clock::now() < until) {
  }
  static_cast<RuntimeTimer*>(arg)->firing.fetch_sub(1, std::memory_order_release);
}

TEST(Stage5Test, AnMInItsSchedulerIsNeverAskedToYield) {
  Runtime rt(one_p(kDefaultPreempt));
  RuntimeTimer t;  // outlives the run: its function has returned by then
  t.f = &spin_50ms;
  t.arg = &t;
  rt.run([&] {
    t.when = Clock::now();
    stage3::Sched::add_timer(t);  // due now: fired once main sleeps
    sleep_for(milliseconds(60));
  });
  EXPECT_EQ(t.firing.load(), 0);
  EXPECT_EQ(rt.stats().preempt_requests, 0u);
  EXPECT_EQ(rt.stats().preempt_signals, 0u);
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

// Stops of the world in a loop (GOMAXPROCS changes) while one goroutine
// goes in and out of a system call and another yields: a stop that finds
// every other P in a call takes them all itself (stop_unattended_ps) and
// counts the last one down to zero, right after a stop that had to wait
// and left its note woken. Each stop must clear the note before it counts
// (a second wake-up is fatal: it was, on most seeds, found by review).
TEST(Stage5Test, StopsOfTheWorldRaceSystemCallsAndSpinners) {
  Config c = one_p(Preempt::kCooperative);
  c.procs = 2;
  Runtime rt(c);
  constexpr int kStops = 2000;
  rt.run([&] {
    std::atomic<bool> stop{false};
    WaitGroup wg;
    wg.add(2);
    go([&] {  // in and out of a 100 us system call
      while (!stop.load()) blocking([] { return ::usleep(100); });
      wg.done();
    });
    go([&] {  // a plain spinner: stops that must wait for it
      while (!stop.load()) yield();
      wg.done();
    });
    for (int i = 0; i < kStops; ++i) gomaxprocs(i % 2 ? 2 : 3);
    stop.store(true);
    wg.wait();
  });
  EXPECT_EQ(rt.stats().stw_pauses, static_cast<std::uint64_t>(kStops));
  EXPECT_GT(rt.stats().syscalls, 0u);
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

// A goroutine whose short calls follow each other keeps one schedtick
// through all of them. Once its slice has run out, sysmon takes its P in
// whichever call it finds it, seen before or not (Go's sysretake), and the
// goroutine queued behind it on the only P runs. With no preemption, a
// retake is the only way that goroutine can run before main gives up; and
// after 60 ms of quiet, sysmon sleeps 10 ms, so it never sees one 50 us
// call twice.
TEST(Stage5Test, ShortCallsBackToBackDoNotKeepTheirPForever) {
  Runtime rt(one_p(Preempt::kNone));
  bool other_ran = false;
  std::uint64_t calls = 0;
  rt.run([&] {
    sleep_for(milliseconds(60));  // sysmon's sleep doubles up to 10 ms
    std::atomic<bool> ran{false};
    WaitGroup wg;
    wg.add(1);
    go([&] {  // queued on the only P, behind main
      ran.store(true);
      wg.done();
    });
    auto give_up = Clock::now() + std::chrono::seconds(10);
    while (!ran.load() && Clock::now() < give_up) {
      blocking([] { return ::usleep(50); });
      ++calls;
    }
    other_ran = ran.load();
    wg.wait();
  });
  EXPECT_TRUE(other_ran) << "after " << calls << " calls";
  EXPECT_GE(rt.stats().syscall_retakes, 1u);
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

// Go's TestPingPongHog (runtime/proc_test.go), on the only P: a pair of
// "hog" goroutines pass a token back and forth and count to a million at
// each pass, a "light" pair counts to a thousand. Each pair lives on
// runnext hand-offs, sharing one time slice; only preemption lets the
// other pair run, and then their counts stay within 20x of each other.
// The hogs call no instrumented function: in cooperative mode the safe
// point they reach is their channel operation (a call into the runtime).
// Go's select on a done channel becomes a flag and a close at the end.
// One measurement: the hogs' and the light pair's counts after 100 ms.
std::pair<long, long> ping_pong_hog_counts(Preempt mode, Stats& st) {
  Runtime rt(one_p(mode));
  volatile long hog_count = 0, light_count = 0;
  rt.run([&] {
    std::atomic<bool> done{false};
    std::atomic<int> exited{0};
    Chan<bool> hog_chan, light_chan;
    WaitGroup wg;
    auto run = [&](long limit, volatile long* counter, Chan<bool>& wake) {
      while (wake.recv() && !done.load()) {
        for (long i = 0; i < limit; ++i) *counter = *counter + 1;
        if (done.load()) break;
        wake.send(true);
      }
      exited.fetch_add(1);
      wg.done();
    };
    wg.add(4);
    for (int i = 0; i < 2; ++i) go([&] { run(1'000'000, &hog_count, hog_chan); });
    for (int i = 0; i < 2; ++i) go([&] { run(1'000, &light_count, light_chan); });
    hog_chan.send(true);
    light_chan.send(true);
    sleep_for(milliseconds(100));
    done.store(true);
    // One goroutine of each pair ends on its next token; the other is left
    // waiting for a token that will not come (not sending: the close is
    // safe then).
    while (exited.load() < 2 || rt.stats().goroutines_blocked < 2) {
      sleep_for(milliseconds(1));
    }
    hog_chan.close();
    light_chan.close();
    wg.wait();
  });
  st = rt.stats();
  return {hog_count, light_count};
}

void ping_pong_hog(Preempt mode) {
#if defined(__SANITIZE_ADDRESS__)
  // As Go skips it under its race detector: the ratio compares work done in
  // equal time slices, and AddressSanitizer slows the light pair's runtime
  // calls far more than the hogs' plain loop (36x measured, against 20).
  GTEST_SKIP() << "the ratio measures the sanitizer's overhead here";
#endif
  // The slices are equal in time, not in CPU: a machine busy with other
  // processes can take the thread away for part of one slice and skew one
  // measurement. Up to three; without preemption the first one does not
  // end: main, which ends it, waits behind the hogs on the only P for good
  // (Stage5Test.PreemptNoneNeverPreempts shows such a wait), and a
  // preemption that lets the light pair run one slice in many fails all
  // three.
  std::string tried;
  for (int attempt = 0; attempt < 3; ++attempt) {
    Stats st;
    auto [hog, light] = ping_pong_hog_counts(mode, st);
    ASSERT_GT(hog, 0);
    ASSERT_GT(light, 0) << "the light pair never ran";
    if (hog / light <= 20 && light / hog <= 20) return;
    tried += std::to_string(hog) + " / " + std::to_string(light) +
             " (preempt requests " + std::to_string(st.preempt_requests) +
             ", preemptions " + std::to_string(st.preemptions) + "); ";
  }
  ADD_FAILURE() << "hog / light beyond 20x in each of 3 measurements: "
                << tried;
}

TEST(Stage5Test, PingPongHogCooperative) {
  ping_pong_hog(Preempt::kCooperative);
}

// ---- Asynchronous preemption ---------------------------------------------------

#define SKIP_WITHOUT_ASYNC()                                              \
  if (!kAsyncPreemptSupported) {                                          \
    GTEST_SKIP() << "no asynchronous preemption in this build (x86-64 " \
                    "only; ThreadSanitizer runs handlers on a copy of "   \
                    "the context)";                                       \
  }

// The notes' Go 1.13 program, which hangs with cooperative preemption: a
// loop without any call (the flag is read with a compiler builtin, not a
// function), main sleeping 5 ms on the only P. The signal stops the loop.
TEST(Stage5Test, ATightLoopIsPreemptedAsynchronously) {
  SKIP_WITHOUT_ASYNC();
  Runtime rt(one_p(Preempt::kAsync));
  bool loop_running_when_main_woke = false;
  rt.run([&] {
    int stop = 0;
    long u = 1;
    WaitGroup wg;
    wg.add(1);
    go([&] {
      while (__atomic_load_n(&stop, __ATOMIC_RELAXED) == 0) u -= 2;
      wg.done();
    });
    sleep_for(milliseconds(5));
    loop_running_when_main_woke = true;  // main ran while the loop had not ended
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    wg.wait();
  });
  EXPECT_TRUE(loop_running_when_main_woke);
  Stats s = rt.stats();
  EXPECT_GE(s.async_preemptions, 1u);
  EXPECT_GE(s.preempt_signals, s.async_preemptions);
}

// The signal reaches the Ms of a second run of the same Runtime: each run
// records its Ms' thread ids afresh (reset_run_state clears tids_, minit
// fills it), also for Ms made by a GOMAXPROCS change, and after the first
// run's locked M ended with its goroutine.
TEST(Stage5Test, ASecondRunPreemptsItsNewMsAsynchronously) {
  SKIP_WITHOUT_ASYNC();
  Runtime rt(one_p(Preempt::kAsync));
  for (int run = 0; run < 2; ++run) {
    rt.run([&] {
      if (run == 0) {  // a locked goroutine ends: its M exits with it
        WaitGroup locked;
        locked.add(1);
        go([&] {
          lock_os_thread();
          locked.done();
        });
        locked.wait();
      }
      gomaxprocs(2);  // new Ms, and their ids, in this run
      int stop = 0;
      long u = 1;
      WaitGroup wg;
      wg.add(2);
      for (int i = 0; i < 2; ++i) {  // a tight loop on each P
        go([&] {
          while (__atomic_load_n(&stop, __ATOMIC_RELAXED) == 0) u -= 2;
          wg.done();
        });
      }
      sleep_for(milliseconds(30));  // main runs only if a loop is preempted
      __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
      wg.wait();
      gomaxprocs(1);
    });
    EXPECT_GE(rt.stats().async_preemptions, 1u) << "run " << run;
  }
}

// A locked goroutine in a tight loop is preempted like any other (Go's
// gopreempt_m: to the GRQ); its M then waits for it alone, and the M that
// takes it from the GRQ hands that M its P back: it resumes on its own
// thread, and main ran meanwhile.
TEST(Stage5Test, ALockedTightLoopIsPreemptedAndResumesOnItsThread) {
  SKIP_WITHOUT_ASYNC();
  Runtime rt(one_p(Preempt::kAsync));
  bool main_ran = false;
  int before = 0, after = 0;
  rt.run([&] {
    int stop = 0;
    long u = 1;
    WaitGroup wg;
    wg.add(1);
    go([&] {
      lock_os_thread();
      before = static_cast<int>(::gettid());
      while (__atomic_load_n(&stop, __ATOMIC_RELAXED) == 0) u -= 2;
      after = static_cast<int>(::gettid());
      wg.done();
    });
    sleep_for(milliseconds(5));
    main_ran = true;
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    wg.wait();
  });
  EXPECT_TRUE(main_ran);
  EXPECT_EQ(after, before);
  EXPECT_GE(rt.stats().async_preemptions, 1u);
}

TEST(Stage5Test, PingPongHogAsync) {
  SKIP_WITHOUT_ASYNC();
  ping_pong_hog(Preempt::kAsync);
}

// Go's GCFairness2 (runtime/testdata/testprog/gc.go), without its GC: on
// the only P, three goroutines allocate in a loop with no call of their own
// into the runtime (new and delete are the C++ library's, not instrumented:
// a signal landing there finds no safe point); within 30 ms each has run,
// or, as Go allows, within one more second.
TEST(Stage5Test, GcFairness2EveryAllocatingLoopRuns) {
  SKIP_WITHOUT_ASYNC();
  Runtime rt(one_p(Preempt::kAsync));
  std::array<std::atomic<long>, 3> count{};
  bool all_ran = false;
  rt.run([&] {
    std::atomic<bool> stop{false};
    std::array<char*, 3> sink{};
    WaitGroup wg;
    wg.add(3);
    for (std::size_t i = 0; i < count.size(); ++i) {
      go([&, i] {
        while (!stop.load(std::memory_order_relaxed)) {
          delete[] std::exchange(sink[i], new char[1024]);
          count[i].fetch_add(1, std::memory_order_relaxed);
        }
        delete[] sink[i];
        wg.done();
      });
    }
    auto ran = [&] {
      for (auto& c : count) {
        if (c.load() == 0) return false;
      }
      return true;
    };
    sleep_for(milliseconds(30));
    all_ran = ran();
    if (!all_ran) {
      sleep_for(std::chrono::seconds(1));
      all_ran = ran();
    }
    stop.store(true);
    wg.wait();
  });
  EXPECT_TRUE(all_ran) << count[0] << " " << count[1] << " " << count[2];
}

// 13 general registers, the carry flag and the 16 SSE registers, all live
// across every iteration of a loop without calls: any register the
// trampoline failed to restore changes the result. Returns a checksum.
std::uint64_t register_mix(std::uint64_t seed, std::uint64_t rounds) {
  std::uint64_t out = 0;
  asm volatile(
      // Every register from the seed.
      "movq %[seed], %%rax\n\t"
      "leaq 1(%%rax), %%rbx\n\t  leaq 2(%%rax), %%rcx\n\t"
      "leaq 3(%%rax), %%rdx\n\t  leaq 4(%%rax), %%rsi\n\t"
      "leaq 5(%%rax), %%rdi\n\t  leaq 6(%%rax), %%r8\n\t"
      "leaq 7(%%rax), %%r9\n\t   leaq 8(%%rax), %%r10\n\t"
      "leaq 9(%%rax), %%r11\n\t  leaq 10(%%rax), %%r12\n\t"
      "leaq 11(%%rax), %%r13\n\t leaq 12(%%rax), %%r14\n\t"
      "movq %%rax, %%xmm0\n\t    movq %%rbx, %%xmm1\n\t"
      "movq %%rcx, %%xmm2\n\t    movq %%rdx, %%xmm3\n\t"
      "movq %%rsi, %%xmm4\n\t    movq %%rdi, %%xmm5\n\t"
      "movq %%r8, %%xmm6\n\t     movq %%r9, %%xmm7\n\t"
      "movq %%r10, %%xmm8\n\t    movq %%r11, %%xmm9\n\t"
      "movq %%r12, %%xmm10\n\t   movq %%r13, %%xmm11\n\t"
      "movq %%r14, %%xmm12\n\t   movq %%rax, %%xmm13\n\t"
      "movq %%rbx, %%xmm14\n\t   movq %%rcx, %%xmm15\n\t"
      "clc\n"
      // One round: a carry chain through the flags (CF survives the
      // round's decq), rotations, and a chain through the SSE registers.
      "1:\n\t"
      "adcq %%rax, %%rbx\n\t adcq %%rbx, %%rcx\n\t adcq %%rcx, %%rdx\n\t"
      "adcq %%rdx, %%rsi\n\t adcq %%rsi, %%rdi\n\t adcq %%rdi, %%r8\n\t"
      "adcq %%r8, %%r9\n\t   adcq %%r9, %%r10\n\t  adcq %%r10, %%r11\n\t"
      "adcq %%r11, %%r12\n\t adcq %%r12, %%r13\n\t adcq %%r13, %%r14\n\t"
      "rolq $7, %%rax\n\t    xorq %%r14, %%rax\n\t"
      "paddq %%xmm0, %%xmm1\n\t  paddq %%xmm1, %%xmm2\n\t"
      "paddq %%xmm2, %%xmm3\n\t  paddq %%xmm3, %%xmm4\n\t"
      "paddq %%xmm4, %%xmm5\n\t  paddq %%xmm5, %%xmm6\n\t"
      "paddq %%xmm6, %%xmm7\n\t  paddq %%xmm7, %%xmm8\n\t"
      "paddq %%xmm8, %%xmm9\n\t  paddq %%xmm9, %%xmm10\n\t"
      "paddq %%xmm10, %%xmm11\n\t paddq %%xmm11, %%xmm12\n\t"
      "paddq %%xmm12, %%xmm13\n\t paddq %%xmm13, %%xmm14\n\t"
      "paddq %%xmm14, %%xmm15\n\t pxor %%xmm15, %%xmm0\n\t"
      "decq %[rounds]\n\t"
      "jnz 1b\n\t"
      // Fold everything into the result (and the last carry).
      "adcq $0, %%rax\n\t"
      "addq %%rbx, %%rax\n\t addq %%rcx, %%rax\n\t addq %%rdx, %%rax\n\t"
      "addq %%rsi, %%rax\n\t addq %%rdi, %%rax\n\t addq %%r8, %%rax\n\t"
      "addq %%r9, %%rax\n\t  addq %%r10, %%rax\n\t addq %%r11, %%rax\n\t"
      "addq %%r12, %%rax\n\t addq %%r13, %%rax\n\t addq %%r14, %%rax\n\t"
      "paddq %%xmm1, %%xmm0\n\t  paddq %%xmm2, %%xmm0\n\t"
      "paddq %%xmm3, %%xmm0\n\t  paddq %%xmm4, %%xmm0\n\t"
      "paddq %%xmm5, %%xmm0\n\t  paddq %%xmm6, %%xmm0\n\t"
      "paddq %%xmm7, %%xmm0\n\t  paddq %%xmm8, %%xmm0\n\t"
      "paddq %%xmm9, %%xmm0\n\t  paddq %%xmm10, %%xmm0\n\t"
      "paddq %%xmm11, %%xmm0\n\t paddq %%xmm12, %%xmm0\n\t"
      "paddq %%xmm13, %%xmm0\n\t paddq %%xmm14, %%xmm0\n\t"
      "paddq %%xmm15, %%xmm0\n\t movq %%xmm0, %%rbx\n\t"
      "addq %%rbx, %%rax\n\t"
      "movq %%rax, %[out]\n\t"
      : [out] "=m"(out), [rounds] "+m"(rounds)
      : [seed] "m"(seed)
      : "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
        "r12", "r13", "r14", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
        "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",
        "xmm14", "xmm15", "cc", "memory");
  return out;
}

// Thousands of preemptions inside register_mix, on 1 P with the shortest
// slice: every result equals the one computed on a plain thread.
TEST(Stage5Test, RegistersFlagsAndVectorsSurviveThousandsOfPreemptions) {
  SKIP_WITHOUT_ASYNC();
  constexpr std::uint64_t kRounds = 2'000'000;
  constexpr int kGoroutines = 3;
  constexpr std::uint64_t kWanted = 2000;  // async preemptions
  std::uint64_t expect[kGoroutines];
  for (int i = 0; i < kGoroutines; ++i) expect[i] = register_mix(i + 1, kRounds);
  Config c = one_p(Preempt::kAsync);
  c.time_slice = std::chrono::microseconds(100);
  Runtime rt(c);
  std::atomic<int> wrong{0};
  std::atomic<long> runs{0};
  rt.run([&] {
    auto give_up = Clock::now() + std::chrono::seconds(60);
    WaitGroup wg;
    wg.add(kGoroutines);
    for (int i = 0; i < kGoroutines; ++i) {
      go([&, i] {
        while (rt.stats().async_preemptions < kWanted && Clock::now() < give_up) {
          if (register_mix(i + 1, kRounds) != expect[i]) wrong.fetch_add(1);
          runs.fetch_add(1);
        }
        wg.done();
      });
    }
    wg.wait();
  });
  EXPECT_EQ(wrong.load(), 0) << "of " << runs.load() << " runs";
  EXPECT_GE(rt.stats().async_preemptions, kWanted);
}

// The AVX registers' upper halves are vector state too (XSAVE saves them).
__attribute__((target("avx2"))) std::uint64_t avx_mix(std::uint64_t seed,
                                                     std::uint64_t rounds) {
  std::uint64_t out[4];
  asm volatile(
      "vpbroadcastq %[seed], %%ymm0\n\t"
      "vpaddq %%ymm0, %%ymm0, %%ymm1\n\t  vpaddq %%ymm1, %%ymm0, %%ymm2\n\t"
      "vpaddq %%ymm2, %%ymm0, %%ymm3\n\t  vpaddq %%ymm3, %%ymm0, %%ymm4\n\t"
      "vpaddq %%ymm4, %%ymm0, %%ymm5\n\t  vpaddq %%ymm5, %%ymm0, %%ymm6\n\t"
      "vpaddq %%ymm6, %%ymm0, %%ymm7\n"
      "1:\n\t"
      "vpaddq %%ymm0, %%ymm1, %%ymm1\n\t  vpaddq %%ymm1, %%ymm2, %%ymm2\n\t"
      "vpaddq %%ymm2, %%ymm3, %%ymm3\n\t  vpaddq %%ymm3, %%ymm4, %%ymm4\n\t"
      "vpaddq %%ymm4, %%ymm5, %%ymm5\n\t  vpaddq %%ymm5, %%ymm6, %%ymm6\n\t"
      "vpaddq %%ymm6, %%ymm7, %%ymm7\n\t  vpxor %%ymm7, %%ymm0, %%ymm0\n\t"
      "vpermq $0x93, %%ymm0, %%ymm0\n\t"
      "decq %[rounds]\n\t"
      "jnz 1b\n\t"
      "vpaddq %%ymm1, %%ymm0, %%ymm0\n\t  vpaddq %%ymm3, %%ymm0, %%ymm0\n\t"
      "vpaddq %%ymm5, %%ymm0, %%ymm0\n\t  vpaddq %%ymm7, %%ymm0, %%ymm0\n\t"
      "vmovdqu %%ymm0, %[out]\n\t"
      "vzeroupper\n\t"
      : [out] "=m"(out), [rounds] "+m"(rounds)
      : [seed] "m"(seed)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "cc",
        "memory");
  return out[0] ^ out[1] ^ out[2] ^ out[3];
}

TEST(Stage5Test, AvxStateSurvivesPreemption) {
  SKIP_WITHOUT_ASYNC();
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "no AVX2 on this CPU";
  constexpr std::uint64_t kRounds = 3'000'000;
  std::uint64_t expect[2] = {avx_mix(1, kRounds), avx_mix(2, kRounds)};
  Config c = one_p(Preempt::kAsync);
  c.time_slice = std::chrono::microseconds(100);
  Runtime rt(c);
  std::atomic<int> wrong{0};
  rt.run([&] {
    auto give_up = Clock::now() + std::chrono::seconds(60);
    WaitGroup wg;
    wg.add(2);
    for (int i = 0; i < 2; ++i) {
      go([&, i] {
        while (rt.stats().async_preemptions < 500 && Clock::now() < give_up) {
          if (avx_mix(i + 1, kRounds) != expect[i]) wrong.fetch_add(1);
        }
        wg.done();
      });
    }
    wg.wait();
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE(rt.stats().async_preemptions, 500u);
}

// The handler's decision, point by point (Go's isAsyncSafePoint), from a
// goroutine whose P has a request: a PC in this file's code is safe; the
// same PC holding a runtime lock is not; a PC in libc or in the runtime is
// not; without a request, nothing is.
TEST(Stage5Test, TheSafePointCheckDeclinesRuntimeLibcAndHeldLocks) {
  SKIP_WITHOUT_ASYNC();
  ASSERT_GT(user_code::function_count(), 0u) << "no instrumented function found";
  Runtime rt(one_p(Preempt::kAsync));
  SafePoint user = SafePoint::kNoRequest, locked = SafePoint::kNoRequest,
            libc = SafePoint::kNoRequest, runtime = SafePoint::kNoRequest,
            no_request = SafePoint::kSafe;
  rt.run([&] {
    auto* m = stage3::getm();
    auto sp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    auto here = reinterpret_cast<std::uintptr_t>(&step) + 4;
    RuntimeLock lock;
    no_request = check_safe_point(m, here, sp);
    // No instrumented call until the flag is down again: it would yield.
    m->p->preempt.store(true);
    user = check_safe_point(m, here, sp);
    lock.lock();
    locked = check_safe_point(m, here, sp);
    lock.unlock();
    libc = check_safe_point(m, reinterpret_cast<std::uintptr_t>(&::malloc), sp);
    runtime = check_safe_point(
        m, reinterpret_cast<std::uintptr_t>(&stage3::yield) + 4, sp);
    m->p->preempt.store(false);
  });
  EXPECT_EQ(no_request, SafePoint::kNoRequest);
  EXPECT_EQ(user, SafePoint::kSafe);
  EXPECT_EQ(locked, SafePoint::kLocksHeld);
  EXPECT_EQ(libc, SafePoint::kNotUserCode);
  EXPECT_EQ(runtime, SafePoint::kNotUserCode);
  EXPECT_TRUE(user_code::contains(reinterpret_cast<std::uintptr_t>(&step)));
  EXPECT_FALSE(user_code::contains(reinterpret_cast<std::uintptr_t>(&::free)));
}

// Stress: allocation-heavy goroutines (malloc's locks, the C++ library,
// channels and the runtime's own locks, all places a signal must not stop a
// goroutine) on 1-2 Ps with short slices, over seeds. A preemption inside
// malloc or the runtime would deadlock the only P or corrupt the heap.
TEST(Stage5Test, StressAsyncPreemptionWithAllocations) {
  SKIP_WITHOUT_ASYNC();
  std::uint64_t async_total = 0;
  for (unsigned seed = 1; seed <= 6; ++seed) {
    Config c = one_p(Preempt::kAsync);
    c.procs = 1 + static_cast<int>(seed % 2);
    c.time_slice = std::chrono::microseconds(100 + 50 * seed);
    Runtime rt(c);
    std::size_t total = 0, expect = 0;
    rt.run([&] {
      Chan<std::size_t> results(2);
      Mutex mu;
      std::vector<std::string> shared;
      constexpr int kWorkers = 6;
      for (int w = 0; w < kWorkers; ++w) {
        go([&, w] {
          std::size_t sum = 0;
          for (int i = 0; i < 3000; ++i) {
            std::vector<std::string> v;
            for (int k = 0; k < 8; ++k) {
              v.push_back(std::string(static_cast<std::size_t>(16 + (w + i + k) % 64), 'x'));
            }
            auto p = std::make_unique<std::vector<int>>(static_cast<std::size_t>(10 + i % 50), w);
            for (const auto& s : v) sum += s.size();
            sum += p->size();
            if (i % 200 == 0) {
              mu.lock();
              shared.push_back(v.front());
              mu.unlock();
            }
          }
          results.send(sum);
        });
      }
      for (int w = 0; w < kWorkers; ++w) {
        for (int i = 0; i < 3000; ++i) {
          for (int k = 0; k < 8; ++k) expect += static_cast<std::size_t>(16 + (w + i + k) % 64);
          expect += static_cast<std::size_t>(10 + i % 50);
        }
        total += *results.recv();
      }
      EXPECT_EQ(shared.size(), static_cast<std::size_t>(kWorkers * 15));
    });
    EXPECT_EQ(total, expect) << "seed " << seed;
    async_total += rt.stats().async_preemptions;
  }
  EXPECT_GT(async_total, 0u);
}

TEST(Stage5Test, AsyncIsRejectedWhereUnsupported) {
  if (kAsyncPreemptSupported) {
    EXPECT_NO_THROW(Runtime{one_p(Preempt::kAsync)});
  } else {
    EXPECT_THROW(Runtime{one_p(Preempt::kAsync)}, ConfigError);
  }
}

// Opt-in stall reports: a goroutine running 60 ms without a safe point (no
// preemption) and one in a 60 ms blocking call, with a 20 ms threshold,
// are each reported once, by id.
TEST(Stage5Test, StallReportsNameTheGoroutine) {
  Config c = one_p(Preempt::kNone);
  c.procs = 2;
  c.stall_threshold = milliseconds(20);
  std::vector<std::string> reports;
  std::mutex mu;
  c.stall_sink = [&](const std::string& line) {
    std::lock_guard lk(mu);
    reports.push_back(line);
  };
  auto count = [&](const std::string& what) {
    std::lock_guard lk(mu);
    int n = 0;
    for (const auto& r : reports) n += r.find(what) != std::string::npos;
    return n;
  };
  // Each stall lasts until its report has come (sysmon's rounds come late
  // on a loaded machine); 10 s is only a give-up bound.
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  std::atomic<std::uint64_t> busy_id{0}, caller_id{0};
  auto ran_too_long = [&] {
    return "goroutine " + std::to_string(busy_id.load()) + " has run for ";
  };
  auto in_a_call = [&] {
    return "goroutine " + std::to_string(caller_id.load()) +
           " has been in one blocking call for ";
  };
  Runtime rt(c);
  rt.run([&] {
    WaitGroup wg;
    wg.add(2);
    go([&] {
      busy_id = stage3::getm()->curg->goid.load();
      while (count(ran_too_long()) == 0 && Clock::now() < give_up) {
      }
      wg.done();
    });
    go([&] {
      caller_id = stage3::getm()->curg->goid.load();
      blocking([&] {
        while (count(in_a_call()) == 0 && Clock::now() < give_up) {
          std::this_thread::sleep_for(milliseconds(1));
        }
      });
      wg.done();
    });
    wg.wait();
  });
  EXPECT_EQ(count(ran_too_long()), 1);
  EXPECT_EQ(count(in_a_call()), 1);
  std::lock_guard lk(mu);
  EXPECT_EQ(rt.stats().stalls_reported, reports.size());
}

TEST(Stage5Test, ConfigRejectsBadStallThresholds) {
  Config c = one_p(Preempt::kCooperative);
  c.stall_threshold = std::chrono::microseconds(999);
  EXPECT_THROW(Runtime{c}, ConfigError);
  c.stall_threshold = milliseconds(1);
  EXPECT_NO_THROW(Runtime{c});
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

// A value whose move constructor computes (user code, so a safe point):
// the runtime moves it with locks held (into a channel's buffer, to a
// waiting receiver) and with an M and P in locals (go()'s closure).
struct HeavyMove {
  long x = 0;
  HeavyMove() = default;
  explicit HeavyMove(long v) : x(v) {}
  HeavyMove(HeavyMove&& o) noexcept : x(o.x) {
    for (int i = 0; i < 40; ++i) x = step(x);
    x = o.x;  // the same value, after the work
  }
  HeavyMove& operator=(HeavyMove&& o) noexcept {
    x = o.x;
    return *this;
  }
};

// Stress: 10,000 goroutines a round, spawned with a heavy closure on 2 Ps
// with a 100 us slice, each selecting to receive from one channel or send
// on another while closers close them: preemption requests land inside the
// runtime's moves all the time, and are honoured only outside them
// (preempted with a channel lock held, or inside go(), a run used to
// corrupt a P's queue: "pidleput: P has non-empty run queue", 3 in 6).
TEST(Stage5Test, StressPreemptionInsideTheRuntimesMoves) {
  for (Preempt mode : {Preempt::kCooperative, kDefaultPreempt}) {
    for (int round = 0; round < 3; ++round) {
      Config c = one_p(mode);
      c.procs = 2;
      c.time_slice = std::chrono::microseconds(100);
      Runtime rt(c);
      std::atomic<int> done{0};
      rt.run([&] {
        constexpr int kChans = 8, kGoroutines = 10'000;
        std::vector<std::unique_ptr<Chan<HeavyMove>>> chans;
        for (int i = 0; i < kChans; ++i) {
          chans.push_back(std::make_unique<Chan<HeavyMove>>(4));
        }
        WaitGroup wg;  // the selectors and the closers: chans outlives all
        wg.add(kGoroutines + kChans);
        for (int i = 0; i < kGoroutines; ++i) {
          Chan<HeavyMove>* a = chans[i % kChans].get();
          Chan<HeavyMove>* b = chans[(i * 7 + 3) % kChans].get();
          go([a, b, &wg, &done, v = HeavyMove(i)]() mutable {
            std::optional<HeavyMove> got;
            try {
              select(recv_case(*a, got), send_case(*b, std::move(v)));
            } catch (const Panic&) {  // b was closed: a send panics
            }
            done.fetch_add(1);
            wg.done();
          });
          if (i % 1250 == 1249) {
            Chan<HeavyMove>* closing = chans[i / 1250].get();
            go([closing, &wg] {
              closing->close();
              wg.done();
            });
          }
        }
        wg.wait();
      });
      EXPECT_EQ(done.load(), 10'000);
      EXPECT_TRUE(gmp::testing::conserved(rt.stats()));
    }
  }
}

}  // namespace
}  // namespace gmp::stage5
