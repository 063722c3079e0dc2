// Exercise 05's memory-model tests: the queue built with GMP_RELACY
// (exercises/testing/atomic.h), its threads run by Relacy, a C++11
// memory-model checker, which lets every load return any value the model
// allows. A missing release or acquire fails here although x86 would hide
// it (docs/course/memory_order.md). The grader runs them (points.json,
// "relacy"); a failure prints Relacy's history of the run that failed,
// each access with its line in runq.cc.
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>

#include "exercises/05_local_runq/runq.h"

namespace gmp::exercises::runq {
namespace {

// The owner fills a goroutine (a plain field), then puts it; a thief
// steals from the queue at the same time. Whatever the thief takes must be
// that goroutine, filled in: the slot and the payload are published by
// the release store of tail_ and seen through the thief's acquire of it.
struct Publication : rl::test_suite<Publication, 2> {
  G g;
  LocalRunQueue victim;
  LocalRunQueue thief;
  G* stolen = nullptr;  // thread 1's, read in after()

  void thread(unsigned index) {
    if (index == 0) {
      g.id = 7;
      RL_ASSERT(victim.runqput(&g));
      return;
    }
    stolen = thief.runqsteal(victim);
    if (stolen != nullptr) {
      RL_ASSERT(stolen == &g);  // not a slot's old value
      RL_ASSERT(stolen->id == 7);  // a data race without the pair
    }
  }

  void after() {
    // Stolen, or still there: never claimed and lost.
    RL_ASSERT(stolen == &g || victim.size() == 1);
  }
};

TEST(LocalRunQueueMemoryModel, TheTailPublishesTheSlotAndTheGoroutine) {
  EXPECT_TRUE(relacy::every_interleaving<Publication>())
      << "a thief took a goroutine whose slot or contents it could not yet "
         "see: tail_ must be stored with release after the slot, and loaded "
         "with acquire before the slots are read (Relacy's history above)";
}

// A thief reads head_, is preempted, and reads tail_ only after the owner
// has filled its ring, taken half of it and put as many again: the pair it
// read, (0, 10) in this build's 8-slot ring, looks like 10 goroutines,
// more than the ring holds, and half of it, 5, more than the batch holds.
// runqgrab must see that the pair is not consistent and read both again
// (Go's "if n > uint32(len(_p_.runq)/2)"). A solution that trusts the
// pair writes past the batch: this build's bounds checks
// (_GLIBCXX_ASSERTIONS) end the run. Every schedule that preempts a
// thread once, and every value each load may read in it.
struct TornPair : rl::test_suite<TornPair, 2> {
  static constexpr int kPut = LocalRunQueue::kCapacity - 2;
  static constexpr int kTaken = LocalRunQueue::kCapacity / 2;
  G gs[kPut + kTaken];
  LocalRunQueue victim;
  LocalRunQueue thief;
  int owner_took = 0, thief_took = 0;  // each thread's own; read in after()

  void thread(unsigned index) {
    if (index == 0) {
      for (int i = 0; i < kPut; ++i) RL_ASSERT(victim.runqput(&gs[i]));
      for (int i = 0; i < kTaken; ++i) {
        owner_took += victim.runqget() != nullptr;
      }
      for (int i = kPut; i < kPut + kTaken; ++i) {
        RL_ASSERT(victim.runqput(&gs[i]));
      }
      return;
    }
    if (thief.runqsteal(victim) != nullptr) thief_took = 1 + thief.size();
  }

  void after() {  // every goroutine in one place, none twice
    RL_ASSERT(owner_took + thief_took + victim.size() == kPut + kTaken);
  }
};

TEST(LocalRunQueueMemoryModel, AThiefRereadsAHeadAndTailThatDoNotMatch) {
  EXPECT_TRUE(relacy::every_schedule_preempted<TornPair>(1))
      << "a goroutine was lost or taken twice: a thief trusted a head and a "
         "tail read far apart in time, or took slots that its tail did not "
         "publish (Relacy's history above)";
}

}  // namespace
}  // namespace gmp::exercises::runq
