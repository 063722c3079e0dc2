// Note 004's eleven scenarios of the G-M-P model, one test each where
// stage 3 shows it (docs/course/notes.md, under note 004, lists them all,
// with the tests of scenarios 8, 10 and 11, which live beside the code they
// exercise: stage3_test.cc, stage4_syscalls/stage4_test.cc). Each test
// checks the counters the scenario predicts, not timing.
#include <gtest/gtest.h>

#include <atomic>

#include "stage3_gmp/api.h"

namespace gmp::stage3 {
namespace {

Config procs(int n) {
  Config c;
  c.procs = n;
  c.debug = "";  // no schedtrace, whatever GMP_DEBUG says
  return c;
}

// A run on `nprocs` Ps in which main makes `n` empty goroutines without
// pause, then waits for them; its counters.
Stats spawn_then_wait(int nprocs, int n) {
  Runtime rt(procs(nprocs));
  rt.run([n] {
    WaitGroup wg;
    wg.add(n);
    for (int i = 0; i < n; ++i) go([&] { wg.done(); });
    wg.wait();
  });
  return rt.stats();
}

// Scenario 1: G1 (main) makes G2 with go; for locality G2 goes to G1's own
// P (its runnext), not to the GRQ, and runs there when G1 waits.
TEST(Note004Scenarios, S01_ANewGoroutineGoesToItsCreatorsP) {
  Stats s = spawn_then_wait(1, 1);
  EXPECT_EQ(s.grq_goroutines, 1u);  // main only, which starts there
  // G2, from its creator's runnext; then main, readied by G2's done() into
  // the runnext of G2's P (the same).
  EXPECT_EQ(s.runnext_hits, 2u);
}

// Scenario 2: a goroutine ends (goexit0) and the same M's g0 schedules the
// next one from the P's local queue: the M is reused, never a new thread.
TEST(Note004Scenarios, S02_WhenAGoroutineEndsItsMRunsTheNextOne) {
  constexpr int kGoroutines = 1000;
  std::atomic<int> ran{0};
  Runtime rt(procs(1));
  rt.run([&] {
    WaitGroup wg;
    wg.add(kGoroutines);
    for (int i = 0; i < kGoroutines; ++i) {
      go([&] {
        ran.fetch_add(1);
        wg.done();
      });
    }
    wg.wait();
  });
  EXPECT_EQ(ran.load(), kGoroutines);
  EXPECT_EQ(rt.stats().threads_created, 1u);  // one M ran all 1001
}

// Scenarios 3 and 4: a goroutine fills its P's queue (256 slots here, 3
// in the note's picture); the next go finds it full and moves the oldest
// half, plus the goroutine it was queueing, to the GRQ in one batch:
// 128 + 1. (Go shuffles the batch; the course keeps its order.)
TEST(Note004Scenarios, S03_S04_AFullLocalQueueSendsHalfAndOneToTheGrq) {
  // 257 fill runnext and the 256 slots; the 258th displaces one more.
  Stats s = spawn_then_wait(1, 258);
  EXPECT_EQ(s.runq_overflows, 1u);
  EXPECT_EQ(s.max_queue_len, 129u);  // the GRQ held the batch at once
}

// Scenario 5: while the queue has room, a new goroutine stays on the P;
// the GRQ is never used (but for main, which starts there).
TEST(Note004Scenarios, S05_ANewGoroutineStaysLocalWhileTheQueueHasRoom) {
  Stats s = spawn_then_wait(1, 200);
  EXPECT_EQ(s.runq_overflows, 0u);
  EXPECT_EQ(s.grq_goroutines, 1u);  // main
  EXPECT_EQ(s.max_queue_len, 1u);   // main, before it first ran
}

// Scenario 6: making a goroutine while a P is idle and no M spins wakes an
// M for that P (wakep); it starts spinning, looking for work to steal. The
// runtime begins with one M (main's); the second is the one wakep made.
TEST(Note004Scenarios, S06_ANewGoroutineWakesAnIdlePAndASpinningM) {
  Stats s = spawn_then_wait(2, 1);
  // 2, or more when a later wake-up finds no M spinning (seen under
  // AddressSanitizer, whose Ms are slower to start).
  EXPECT_GE(s.threads_created, 2u);
  EXPECT_GT(s.spinning_ns, 0u);  // the woken M spun before it found work
}

// Scenario 7: an M whose P has nothing takes a batch from the GRQ,
// n = min(len/GOMAXPROCS + 1, 128) (the note writes cap(LQ)/2): here 129
// goroutines wait there on 1 P, so one take moves most of them at once
// (the 61-tick rule may take a few one by one first).
TEST(Note004Scenarios, S07_AnEmptyPTakesABatchFromTheGrq) {
  Stats s = spawn_then_wait(1, 258);  // as in S03_S04: 129 go to the GRQ
  EXPECT_EQ(s.grq_goroutines, 1u + 129u);  // main, then the batch's
  // 1 take for main, a few fairness takes of one, and the batches: at
  // least one of them moved over 100 goroutines.
  EXPECT_LE(s.grq_takes, 1u + 129u - 100u);
}

// Scenario 9: Ms that find no work spin for a while (looking at every
// queue) before they park (the cap on their number, half the busy Ps, is
// schedule.cc's find_runnable; no test checks it); an M's time spinning and
// its parks are counted. Four Ps,
// one goroutine besides main: the M woken for it spins, and an M that
// finds nothing parks.
TEST(Note004Scenarios, S09_AnMWithNothingToDoSpinsThenParks) {
  Stats s = spawn_then_wait(4, 1);
  EXPECT_GT(s.spinning_ns, 0u);
  EXPECT_GE(s.parks, 1u);  // an M that found nothing went to sleep
}

}  // namespace
}  // namespace gmp::stage3
