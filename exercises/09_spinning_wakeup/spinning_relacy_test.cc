// Exercise 09's memory-model test: the pool built with GMP_RELACY
// (exercises/testing/atomic.h: its atomics, locks and condition variables
// are Relacy's), one worker and one thread outside the pool run by Relacy,
// a C++11 memory-model checker that lets every load return any value the
// model allows. The delicate dance is a StoreLoad pattern: a relaxed
// order on nmspinning, which x86 and ThreadSanitizer both forgive, loses
// the wake-up here (docs/course/memory_order.md). The grader runs it
// (points.json, "relacy").
#include <gtest/gtest.h>

#include <mutex>

#include "exercises/09_spinning_wakeup/spinning.h"

namespace gmp::exercises::spinning {
namespace {

// The worker, out of work, spins and then parks; meanwhile the outside
// thread injects one task and waits for it to run. If the worker's "stop
// spinning, then look at the queues again" and the injector's "queue the
// task, then look at npidle and nmspinning" miss each other, the worker
// sleeps and nobody wakes it: both threads wait forever, which Relacy
// reports as a deadlock.
struct InjectWhileTheWorkerParks
    : rl::test_suite<InjectWhileTheWorkerParks, 2> {
  Pool pool{1, {}, 1, /*own_threads=*/false};
  Mutex mu;
  CondVar ran_cv;
  bool ran = false;  // guarded by mu

  void thread(unsigned index) {
    if (index == 0) {
      pool.run_worker(0);  // until shutdown
      return;
    }
    pool.inject([this] {
      std::lock_guard<Mutex> lock(mu);
      ran = true;
      ran_cv.notify_one();
    });
    {
      std::unique_lock<Mutex> lock(mu);
      ran_cv.wait(lock, [this] { return ran; });
    }
    pool.shutdown();
  }
};

TEST(SpinningMemoryModel, ATaskInjectedWhileTheWorkerParksIsRun) {
  EXPECT_TRUE(relacy::every_schedule_preempted<InjectWhileTheWorkerParks>(2))
      << "a task queued while the worker went idle was never run: the "
         "worker's nmspinning decrement and its second look at the queues, "
         "and the submitter's queueing and its loads of npidle and "
         "nmspinning, must be seq_cst (Relacy's history above)";
}

}  // namespace
}  // namespace gmp::exercises::spinning
