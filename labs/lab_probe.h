/// \file
/// What the labs' own tests reach inside stage 3 (labs/gfree_lab_test.cc,
/// labs/grq_lab_test.cc), as Go's export_test.go reaches its runtime's
/// internals: the free lists' and the GRQ's functions, which stage 3's
/// tests see only through whole runs.
#pragma once

#include <functional>
#include <mutex>

#include "stage3_gmp/runtime.h"

namespace gmp::stage3::labs {

/// A configuration of n Ps, whatever GOMAXPROCS and GMP_DEBUG say.
inline Config lab_config(int n) {
  Config c;
  c.procs = n;
  c.debug = "";
  return c;
}

/// A Runtime whose free-list and GRQ functions a test may call.
class LabProbe : public Runtime {
 public:
  using Runtime::Runtime;
  using Runtime::gfget;
  using Runtime::gfput;
  using Runtime::globrunqget;
  using Runtime::globrunqput;
  using Runtime::globrunqputbatch;
  using Runtime::globrunqputhead;
  using Runtime::grq_empty;
  using Runtime::link_batch;

  /// Runs `body` in main of a run, with sched_ held (as the GRQ's
  /// functions require): the GRQ is empty then, and whatever body leaves
  /// in it is taken out before the lock is released (its Gs are the
  /// test's, not goroutines: no M may take one).
  void with_sched(const std::function<void()>& body) {
    run([&] {
      std::lock_guard lk(sched_);
      body();
      P scratch(99);  // a P of no run
      while (globrunqget(&scratch, 0) != nullptr) {
        while (scratch.runq.owner().get().first != nullptr) {
        }
      }
    });
  }
};

}  // namespace gmp::stage3::labs
