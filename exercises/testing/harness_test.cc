// The harness itself: seeds are reproducible and distinct, chaos threads
// all run, skeletons throw a clear error.
#include "exercises/testing/harness.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>

#include "exercises/testing/skeleton.h"

namespace gmp::exercises {
namespace {

TEST(Harness, SeedsAreReproducibleAndDistinct) {
  std::vector<std::uint64_t> a = stress_seeds(20, "x");
  EXPECT_EQ(a, stress_seeds(20, "x"));
  EXPECT_NE(a, stress_seeds(20, "y"));
  EXPECT_EQ(std::set<std::uint64_t>(a.begin(), a.end()).size(), a.size());
}

TEST(Harness, ChaosBelowStaysInRange) {
  Chaos c(7);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(c.below(13), 13u);
}

TEST(Harness, RunThreadsRunsEveryThreadOnce) {
  std::atomic<int> mask{0};
  run_threads(6, base_seed(), [&](int i, Chaos& chaos) {
    chaos.point();
    mask.fetch_or(1 << i);
  });
  EXPECT_EQ(mask.load(), 0x3f);
}

TEST(Harness, EventuallySeesDoneAndGivesUp) {
  EXPECT_TRUE(eventually([] { return true; }, 0.01));
  EXPECT_FALSE(eventually([] { return false; }, 0.01));
}

TEST(Harness, WatchdogLetsAQuickScopeEnd) {
  int ran = 0;
  {
    Watchdog dog("a quick scope", 30);
    ++ran;
  }
  EXPECT_EQ(ran, 1);
}

TEST(HarnessDeathTest, WatchdogEndsAHungScopeWithItsName) {
  EXPECT_EXIT(
      {
        Watchdog dog("a hung scope", 0.05);
        for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      },
      ::testing::ExitedWithCode(1), "HANG: a hung scope did not finish");
}

// Runs only when asked (below): hangs, for the harness's watchdog to end.
TEST(Harness, DISABLED_HangsUntilTheWatchdogEndsIt) {
  for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

// The harness's own watchdog, armed for every test (gtest does not tell a
// death test's child that a test started, so this runs the binary again):
// the test above, with a limit of 1 s, ends with the test's name.
TEST(Harness, EveryTestHasAWatchdogThatNamesIt) {
  std::string cmd =
      "GMP_EXERCISE_TEST_LIMIT=1 /proc/" + std::to_string(getpid()) +
      "/exe --gtest_also_run_disabled_tests "
      "--gtest_filter=Harness.DISABLED_HangsUntilTheWatchdogEndsIt 2>&1";
  FILE* child = popen(cmd.c_str(), "r");
  ASSERT_NE(child, nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, child) != nullptr) out += buf;
  int status = pclose(child);
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 1) << out;
  EXPECT_NE(out.find("HANG: test Harness.DISABLED_HangsUntilTheWatchdogEndsIt "
                     "did not finish within 1 s"),
            std::string::npos)
      << out;
}

TEST(Harness, NotWrittenNamesTheFunction) {
  try {
    not_written("runqput (exercises/05_local_runq)");
    FAIL() << "not_written returned";
  } catch (const NotWritten& e) {
    EXPECT_STREQ(e.what(), "not written yet: runqput (exercises/05_local_runq)");
  }
}

}  // namespace
}  // namespace gmp::exercises
