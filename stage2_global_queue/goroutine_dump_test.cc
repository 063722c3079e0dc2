// The goroutine dump's lines, on hand-made Gs (no runtime): each state,
// the wait time, where it last ran, who made it.
#include "stage2_global_queue/goroutine_dump.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>

namespace gmp::stage2 {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

void made_by_test() {}

TEST(GoroutineDump, AParkedGoroutineShowsItsReasonWaitAndPlace) {
  G g;
  g.goid = 7;
  g.atomicstatus = GStatus::kWaiting;
  g.waitreason = WaitReason::kChanReceive;
  Clock::time_point now = Clock::now();
  g.waitsince = (now - milliseconds(12)).time_since_epoch().count();
  g.last_m = 1;
  g.parent_goid = 1;
  std::function<void()> fn = [] {};
  g.fn_type = &fn.target_type();
  std::string text = goroutine_lines(g, now, /*p=*/0);
  EXPECT_EQ(text.substr(0, text.find("created by")),
            "goroutine 7 [chan receive, 12 ms]:\n\tlast ran on M 1, P 0\n\t");
  EXPECT_NE(text.find("created by goroutine 1: "), std::string::npos) << text;
  EXPECT_NE(text.find("{lambda()#1}"), std::string::npos) << text;
}

TEST(GoroutineDump, StageTwoHasNoPAndUnrunGoroutinesSaySo) {
  G ran, fresh;
  ran.goid = 2;
  ran.atomicstatus = GStatus::kRunnable;
  ran.last_m = 3;  // and no P: stage 2
  std::function<void()> fn = made_by_test;
  ran.fn_type = &fn.target_type();
  fresh.goid = 3;
  fresh.atomicstatus = GStatus::kRunnable;
  EXPECT_EQ(goroutine_lines(ran, Clock::now()),
            "goroutine 2 [runnable]:\n\tlast ran on M 3\n"
            "\tcreated by Runtime::run: void (*)()\n");
  EXPECT_EQ(goroutine_lines(fresh, Clock::now()),
            "goroutine 3 [runnable]:\n\tnot run yet\n"
            "\tcreated by Runtime::run: \n");
}

TEST(GoroutineDump, TheDumpPutsFirstFirstThenSortsByIdAndLeavesOutTheDead) {
  G a, b, c, d;
  a.goid = 9;
  a.atomicstatus = GStatus::kRunning;
  b.goid = 4;
  b.atomicstatus = static_cast<GStatus>(3);  // Go's _Gsyscall: a later stage's
  c.goid = 5;
  c.atomicstatus = GStatus::kDead;
  d.goid = 6;
  d.atomicstatus = GStatus::kRunning;
  std::string dump = goroutine_dump({&a, &b, &c, &d}, /*first=*/&d);
  EXPECT_EQ(dump.find("goroutine 6 [running]:"), 0u) << dump;
  std::size_t four = dump.find("\n\ngoroutine 4 [syscall]:");
  std::size_t nine = dump.find("\n\ngoroutine 9 [running]:");
  EXPECT_NE(four, std::string::npos) << dump;
  EXPECT_NE(nine, std::string::npos) << dump;
  EXPECT_LT(four, nine) << dump;
  EXPECT_EQ(dump.find("goroutine 5"), std::string::npos) << dump;
  EXPECT_EQ(dump.find("goroutine 6", 1), std::string::npos) << "twice: " << dump;
  EXPECT_EQ(goroutine_dump({&a, &b}).find("goroutine 4 [syscall]:"), 0u);
}

TEST(GoroutineDump, ASchedulerWithPsNamesEachGoroutinesLastP) {
  G a, b;
  a.goid = 1;
  a.atomicstatus = GStatus::kRunning;
  a.last_m = 0;
  b.goid = 2;
  b.atomicstatus = GStatus::kRunnable;
  b.last_m = 2;
  LastP p_of = [](const G& g) { return g.goid == 1 ? 1 : -1; };  // b: none yet
  std::string dump = goroutine_dump({&b, &a}, nullptr, p_of);
  EXPECT_NE(dump.find("goroutine 1 [running]:\n\tlast ran on M 0, P 1\n"),
            std::string::npos) << dump;
  EXPECT_NE(dump.find("goroutine 2 [runnable]:\n\tlast ran on M 2\n"),
            std::string::npos) << dump;
  EXPECT_EQ(goroutine_dump({&a}).find("P 1"), std::string::npos)
      << "no LastP, no P";
}

}  // namespace
}  // namespace gmp::stage2
