/// \file
/// What the labs' own tests reach inside stage 3 (labs/gfree_lab_test.cc,
/// labs/grq_lab_test.cc), as Go's export_test.go reaches its runtime's
/// internals: the free lists' and the GRQ's functions, which stage 3's
/// tests see only through whole runs.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>

#include "stage3_gmp/export_test.h"
#include "stage3_gmp/runtime.h"

namespace gmp::stage3::labs {

/// A configuration of n Ps, whatever GOMAXPROCS and GMP_DEBUG say.
inline Config lab_config(int n) {
  Config c;
  c.procs = n;
  c.debug = "";
  return c;
}

/// A Runtime whose free-list and GRQ functions a test may call (through
/// stage 3's ExportTest).
class LabProbe : public Runtime {
 public:
  using Runtime::Runtime;
  /// Runtime::gfget
  G* gfget(P* pp) { return ExportTest::gfget(*this, pp); }
  /// Runtime::gfput
  void gfput(P* pp, G* gp) { ExportTest::gfput(*this, pp, gp); }
  /// Runtime::globrunqget (inside with_sched)
  G* globrunqget(P* pp, std::uint32_t max) {
    return ExportTest::globrunqget(*this, pp, max);
  }
  /// Runtime::globrunqput (inside with_sched)
  void globrunqput(G* gp) { ExportTest::globrunqput(*this, gp); }
  /// Runtime::globrunqputhead (inside with_sched)
  void globrunqputhead(G* gp) { ExportTest::globrunqputhead(*this, gp); }
  /// Runtime::globrunqputbatch (inside with_sched)
  void globrunqputbatch(G* head, G* tail, std::uint32_t n) {
    ExportTest::globrunqputbatch(*this, head, tail, n);
  }
  /// Runtime::grq_empty
  bool grq_empty() const { return ExportTest::grq_empty(*this); }
  /// Runtime::link_batch
  static void link_batch(G* const* gs, std::uint32_t n) {
    ExportTest::link_batch(gs, n);
  }

  /// Runs `body` in main of a run, with the sched lock held (as the GRQ's
  /// functions require): the GRQ is empty then, and whatever body leaves
  /// in it is taken out before the lock is released (its Gs are the
  /// test's, not goroutines: no M may take one).
  void with_sched(const std::function<void()>& body) {
    run([&] {
      std::lock_guard lk(ExportTest::sched_lock(*this));
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
