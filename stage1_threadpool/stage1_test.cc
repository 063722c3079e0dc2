// Stage 1's tests: first the behaviour every stage must have (the shared
// suites of testing/), then what is particular to stage 1: a blocked
// goroutine keeps its OS thread, so the pool can starve; and every proc is
// a thread that may fail to start.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <string>
#include <system_error>

#include "common/errors.h"
#include "stage1_threadpool/api.h"
#include "testing/api_death_suite.h"
#include "testing/api_suite.h"
#include "testing/context_suite.h"
#include "testing/select_suite.h"
#include "testing/time_suite.h"
#include "testing/helpers.h"

namespace gmp::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(Stage1, ApiSuite, stage1::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage1, SelectSuite, stage1::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage1, TimeSuite, stage1::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage1, ContextSuite, stage1::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage1, SelectDeathTest, stage1::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage1, ApiDeathTest, stage1::Api);

}  // namespace gmp::testing

namespace gmp::stage1 {
namespace {

using gmp::testing::wait_until_blocked;

Config procs(int n) {
  Config c;
  c.procs = n;
  return c;
}

// The notes' (docs/course/notes.md) stage 1 problem: main waits for a consumer,
// the consumer waits for a producer, and the producer waits in the queue behind
// both of them for a worker that will never be free.
void consumer_waits_for_a_queued_producer(Runtime& rt) {
  rt.run([&] {
    Chan<int> ch;
    WaitGroup wg;
    wg.add(2);
    go([&] {  // goroutine 2: the consumer; takes the second worker
      (void)ch.recv();
      wg.done();
    });
    wait_until_blocked<Api>(rt, 1);
    go([&] {  // goroutine 3: the producer; needs a third worker
      ch.send(1);
      wg.done();
    });
    wg.wait();  // main (goroutine 1) blocks its worker too
  });
}

TEST(Stage1DeathTest, PoolStarvationIsDetectedAndExplained) {
  Runtime rt(procs(2));
  EXPECT_EXIT(consumer_waits_for_a_queued_producer(rt),
              ::testing::ExitedWithCode(2),
              "fatal error: thread pool starvation - deadlock!\n"
              "All 2 workers are blocked, and 1 goroutine waits in the queue"
              "(.|\n)*goroutine 1 \\[sync.WaitGroup.Wait\\]: on worker"
              "(.|\n)*goroutine 2 \\[chan receive\\]: on worker"
              "(.|\n)*goroutine 3 \\[runnable\\]: queued, never started");
}

TEST(Stage1Test, TheSameProgramRunsWithOneMoreThread) {
  Runtime rt(procs(3));
  consumer_waits_for_a_queued_producer(rt);
  Stats s = rt.stats();
  EXPECT_EQ(s.goroutines_finished, 3u);
  EXPECT_EQ(s.threads_created, 3u);
}

TEST(Stage1Test, BlockedGoroutinesEachHoldAWorker) {
  constexpr int kBlocked = 5;
  Runtime rt(procs(kBlocked + 1));
  rt.run([&] {
    Chan<int> ch;
    for (int i = 0; i < kBlocked; ++i) go([&] { (void)ch.recv(); });
    wait_until_blocked<Api>(rt, kBlocked);
    // Every worker but main's is now stuck in ch.recv().
    EXPECT_EQ(rt.stats().goroutines_blocked, kBlocked);
    for (int i = 0; i < kBlocked; ++i) ch.send(i);
  });
  EXPECT_EQ(rt.stats().goroutines_finished, kBlocked + 1u);
}

TEST(Stage1Test, StatsCountThreadsAndTheLongestQueue) {
  Runtime rt(procs(1));
  rt.run([&] {
    for (int i = 0; i < 10; ++i) go([] {});  // one worker: all must queue
  });
  Stats s = rt.stats();
  EXPECT_EQ(s.threads_created, 1u);
  EXPECT_EQ(s.max_queue_len, 10u);
  // The only worker ran main; when main returned, the rest never started.
  EXPECT_EQ(s.goroutines_finished, 1u);
  EXPECT_EQ(s.goroutines_never_started, 10u);
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
// A worker thread that cannot be created is reported with the limits to
// look at, nothing runs, and the runtime still works afterwards. (Skipped
// under sanitizers, which reserve terabytes of address space.)
void run_under_a_small_address_space_limit() {
  rlimit old{};
  getrlimit(RLIMIT_AS, &old);
  rlimit tight = old;
  tight.rlim_cur = 256ull << 20;  // 256 MiB: room for ~25 thread stacks
  setrlimit(RLIMIT_AS, &tight);
  Runtime rt(procs(1000));
  bool ran = false;
  try {
    rt.run([&] { ran = true; });
  } catch (const std::system_error& e) {
    fprintf(stderr, "%s\n", e.what());
  }
  setrlimit(RLIMIT_AS, &old);
  if (ran) _exit(3);
  Runtime small(procs(2));
  small.run([&] { ran = true; });
  _exit(ran ? 0 : 4);
}

TEST(Stage1DeathTest, ThreadCreationFailureIsReportedAndLosesNothing) {
  EXPECT_EXIT(run_under_a_small_address_space_limit(),
              ::testing::ExitedWithCode(0),
              "stage1: could not start worker thread [0-9]+ of 1000; nothing "
              "was run(.|\n)*ulimit -u");
}
#endif

}  // namespace
}  // namespace gmp::stage1
