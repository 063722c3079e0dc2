// Exercise 10's memory-model test: the poll descriptor and the Parker
// built with GMP_RELACY (exercises/testing/atomic.h: their atomics, lock
// and condition variable are Relacy's), a reader and a closer run by
// Relacy, a C++11 memory-model checker that lets every load return any
// value the model allows. The close against a parking reader is a
// StoreLoad pattern (each side stores, then loads what the other stored):
// a relaxed order there, which x86 and ThreadSanitizer both forgive, lets
// both miss each other (docs/course/memory_order.md). The grader runs it
// (points.json, "relacy").
#include <gtest/gtest.h>

#include "exercises/10_netpoll_park/netpoll.h"

namespace gmp::exercises::netpoll {
namespace {

// The reader waits on a descriptor with nothing to read (netpollblock);
// the closer closes it at the same time (pollunblock). The reader must
// come back: it sees `closing` before it parks, or the closer sees its
// announce in `rg` and wakes it. If both miss each other, the reader
// sleeps with nobody left to wake it, which Relacy reports as a deadlock.
struct CloseWhileTheReaderParks : rl::test_suite<CloseWhileTheReaderParks, 2> {
  PollDesc pd;
  Parker reader;
  bool ready = true;  // thread 0's; read in after()

  void thread(unsigned index) {
    if (index == 0) {
      ready = netpollblock(&pd, reader);
      return;
    }
    pollunblock(&pd);
  }

  void after() { RL_ASSERT(!ready); }  // a close is not readiness
};

TEST(NetpollMemoryModel, ACloseRacingTheReadersParkWakesIt) {
  EXPECT_TRUE(relacy::every_interleaving<CloseWhileTheReaderParks>())
      << "a reader parked while the descriptor closed and was never woken: "
         "the closer's store of closing and its load of rg, and the reader's "
         "announce in rg and its load of closing, must be seq_cst (Relacy's "
         "history above)";
}

}  // namespace
}  // namespace gmp::exercises::netpoll
