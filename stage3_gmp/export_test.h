/// \file
/// What tests reach inside stage 3's scheduler, as Go's export_test.go
/// reaches inside its runtime: functions that a test can otherwise see only
/// through whole runs. Test code only (a testonly library).
#pragma once

#include <cstdint>

#include "stage3_gmp/runtime.h"

namespace gmp::stage3 {

/// Forwards to stage 3's private functions of the same name (each one's
/// comment in runtime.h says what it does and what it needs held). A friend
/// of Runtime; the runtimes of later stages are stage 3 runtimes too.
struct ExportTest {
  /// Runtime::gfget
  static G* gfget(Runtime& rt, P* pp) { return rt.gfget(pp); }
  /// Runtime::gfput
  static void gfput(Runtime& rt, P* pp, G* gp) { rt.gfput(pp, gp); }
  /// Runtime::globrunqget (sched lock held: sched_lock)
  static G* globrunqget(Runtime& rt, P* pp, std::uint32_t max) {
    return rt.globrunqget(pp, max);
  }
  /// Runtime::globrunqput (sched lock held)
  static void globrunqput(Runtime& rt, G* gp) { rt.globrunqput(gp); }
  /// Runtime::globrunqputhead (sched lock held)
  static void globrunqputhead(Runtime& rt, G* gp) { rt.globrunqputhead(gp); }
  /// Runtime::link_batch
  static void link_batch(G* const* gs, std::uint32_t n) {
    Runtime::link_batch(gs, n);
  }
  /// Runtime::globrunqputbatch (sched lock held)
  static void globrunqputbatch(Runtime& rt, G* head, G* tail,
                               std::uint32_t n) {
    rt.globrunqputbatch(head, tail, n);
  }
  /// Runtime::grq_empty
  static bool grq_empty(const Runtime& rt) { return rt.grq_empty(); }
  /// The sched lock, for the functions above that need it held.
  static CountingLock& sched_lock(Runtime& rt) { return rt.sched_; }
  /// Runtime::idle_p_with_queued_work (conservation_watch.h samples it)
  static bool idle_p_with_queued_work(const Runtime& rt) {
    return rt.idle_p_with_queued_work();
  }
};

}  // namespace gmp::stage3
