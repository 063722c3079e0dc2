/// \file
/// G: a goroutine (Go's g, runtime2.go).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "common/go_func.h"
#include "common/sudog.h"
#include "common/timer.h"
#include "common/wait_reason.h"
#include "stage2_global_queue/context.h"
#include "stage2_global_queue/stack.h"

namespace gmp::stage2 {

struct M;

/// Go's goroutine states (_Gidle ... _Gdead), with Go's numbers, and which
/// container holds a goroutine in each:
///
///   kIdle      just allocated, not yet initialised        (malg only)
///   kRunnable  ready to run                               the GRQ
///   kRunning   running on an M                            m->curg
///   kWaiting   parked on an object or a timer             a WaitQ / timers
///   kDead      finished, or new                           a free list
///
/// Go's 3, `_Gsyscall`, is not a stage 2 state: a goroutine here never
/// blocks in the kernel while the scheduler runs others. A scheduler built
/// on this one may give 3 that meaning (to_string names it as Go does).
///
/// malg makes a G dead at once, before anyone else can see it; every later
/// change goes through the runtime's casgstatus(), which checks the old
/// state and fails loudly if it is not the expected one.
enum class GStatus : std::uint8_t {
  kIdle = 0,
  kRunnable = 1,
  kRunning = 2,
  kWaiting = 4,
  kDead = 6,
};

/// steady_clock's time, read from the kernel's coarse clock: a few
/// milliseconds of resolution, at a fraction of the cost of a precise read.
/// For timestamps that only reports show (G::waitsince), taken on every park.
std::chrono::steady_clock::time_point coarse_now() noexcept;

/// Go's name for a state ("runnable"), for reports: Go's names for Go's
/// numbers (runtime/traceback.go's gStatusStrings), so a state a later
/// scheduler gives a number of Go's is named too.
std::string_view to_string(GStatus s) noexcept;

/// The fatal error of a casgstatus that found `seen` instead of `from`
/// (out of line, so that the check itself stays a compare and a branch).
[[noreturn]] void bad_gstatus(const struct G* gp, GStatus seen, GStatus from,
                              GStatus to) noexcept;

/// A goroutine: its stack, its saved registers, its function and its
/// scheduling state. Lives in Runtime::allgs_ from creation to the
/// runtime's destruction; reused (with its stack) after it dies.
struct G {
  // Written by newproc before the G is published on a run queue (ctx also
  // by each switch away from it); read by whoever runs it. (A scheduler
  // built on this one may give the stack only at the first run: then the
  // M that runs the G first writes `stack` and the first `ctx`.)
  Stack stack;               ///< [lo, lo + size), guard below lo
  Gobuf ctx;               ///< registers while not running (the switch)
  GoFunc fn;  ///< what it runs (common/go_func.h); destroyed by the G itself
  /// Its id; 1 is main. Set by newproc before the goroutine is published
  /// (relaxed: casgstatus's release publishes it); atomic because reports
  /// read it while a dead G may be reused for a new goroutine.
  std::atomic<std::uint64_t> goid{0};

  /// Go's atomicstatus: set kDead by malg before anyone can see the G, then
  /// changed only by the runtime's casgstatus (here: a compare-and-swap
  /// under the sched lock; a scheduler with per-P queues may use a checked
  /// load and a release store by the goroutine's one owner of the moment);
  /// read by anyone with readgstatus().
  std::atomic<GStatus> atomicstatus{GStatus::kIdle};

  /// The status. acquire: pairs with casgstatus's release, so a reader that
  /// sees kWaiting also sees `waiting` and `waitreason` set before it.
  GStatus readgstatus() const noexcept {
    return atomicstatus.load(std::memory_order_acquire);
  }

  // Written by the goroutine's owner of the moment (its creator, the M
  // running it, the waker that claimed its sudog), under the sched lock
  // here; park_m sets `waiting` before it publishes kWaiting.
  bool started = false;          ///< has run; at exit unstarted Gs are dropped
  Sudog<G*>* waiting = nullptr;  ///< its sudog while kWaiting (Go: g.waiting)
  /// The timer of its sleep_for (Go's g.timer): f null, arg its sudog; in
  /// the runtime's timer heap while it sleeps (heap fields: sched lock).
  RuntimeTimer timer;
  /// Its sudog for a wait on one object (a channel operation, a Mutex, a
  /// WaitGroup: common/scheduler.h's OwnSudog) or for a sleep_for, where
  /// it is the timer's arg: whoever wakes it touches the G only, not the
  /// goroutine's stack. Engaged and reset by the goroutine itself, around
  /// one wait; the claim in it is raced for as any sudog's (Sudog::state).
  std::optional<Sudog<G*>> sudog;
  /// When it parked (coarse_now(), as steady_clock ticks); relaxed: read
  /// by goroutine dumps while the goroutine may park again.
  std::atomic<std::chrono::steady_clock::rep> waitsince{0};
  // Read by reports (schedtrace, deadlock) while the goroutine runs on:
  // relaxed atomics, since a report may show a value a moment old.
  std::atomic<WaitReason> waitreason{WaitReason::kNone};  ///< why kWaiting
  std::atomic<int> last_m{-1};  ///< id of the M it last ran on

  /// The runtime that made it (malg), as an identity: Sched::runtime_of.
  /// Immutable: a G never moves to another runtime.
  const void* runtime = nullptr;

  // Belongs to the list that holds the G: under the lock of the GRQ or
  // of the global free list (in this stage both are the sched lock), the
  // owner M's alone for a free list that belongs to one M's processor.
  G* schedlink = nullptr;  ///< next G in a run queue or a free list

  /// The M it is wired to by lock_os_thread (Go's g.lockedm), or null: it
  /// runs on that M only, and that M runs nothing else. Written by the
  /// goroutine itself (lock, unlock) and by its goexit0; read by the M that
  /// takes it off a run queue (ordered by the queue, as `fn`).
  struct MCore* lockedm = nullptr;

  /// The C++ runtime's exception-handling state of this goroutine while it
  /// is switched out (the exceptions being handled by catch blocks it is
  /// in, and std::uncaught_exceptions()). The C++ runtime keeps it per OS
  /// thread, so a goroutine that parks inside a catch block and resumes on
  /// another thread must take it along (switch.cc). Owned like ctx.
  struct EhState {
    void* caught_exceptions = nullptr;  ///< libstdc++'s caught chain
    unsigned int uncaught_exceptions = 0;  ///< std::uncaught_exceptions()
  } eh;  ///< this goroutine's exception state while it is switched out

  // Sanitizer bookkeeping, owned by whichever thread switches to/from it.
  void* tsan_fiber = nullptr;       ///< ThreadSanitizer's fiber of this G
  void* asan_fake_stack = nullptr;  ///< AddressSanitizer's saved fake stack

  // For dumps and traces only (cold): set by newproc like goid.
  /// The goroutine that made it (0: run() made it), for goroutine dumps
  /// (Go's parentGoid). Set by newproc like goid.
  std::atomic<std::uint64_t> parent_goid{0};
  /// Its function's type (`fn.target_type()`), for traces and dumps: the
  /// label "main()::{lambda()#1}". Set by newproc like goid.
  std::atomic<const std::type_info*> fn_type{nullptr};
};

/// How a scheduler with Ps reads the P a goroutine of its own last ran
/// on (an id, or -1 if none yet); null for a scheduler without Ps. For
/// the reports that list goroutines (goroutine_dump.h, deadlock_report).
using LastP = int (*)(const G& g);

/// Go's deadlock report: "all goroutines are asleep - deadlock!", then
/// every goroutine of `waiting` by id, as goroutine_dump.h prints them
/// ("goroutine 1 [chan receive, 3 ms]:" and where it last ran: its M,
/// and its P if `last_p` is given). For the runtimes' checkdead.
std::string deadlock_report(std::vector<const G*> waiting,
                            LastP last_p = nullptr);

/// The first step of exit after main (protocol 4 of stage 2's runtime.h),
/// for every runtime with Gs: the sudog of every goroutine of `allgs` that
/// waits, and whose sudog no waker has claimed, is cancelled and returned.
/// The caller then unlinks them all (gmp::unlink_cancelled) before it
/// readies any, which then throws gmp::Goexit. With the lock that keeps
/// `allgs` from growing held.
template <class Gs>
std::vector<Sudog<G*>*> cancel_parked(const Gs& allgs) {
  std::vector<Sudog<G*>*> cancelled;
  for (const auto& g : allgs) {
    Sudog<G*>* s = g->waiting;  // once: a G that leaves kWaiting clears it
    if (g->readgstatus() == GStatus::kWaiting && s != nullptr &&
        s->try_cancel()) {
      cancelled.push_back(s);
    }
  }
  return cancelled;
}

}  // namespace gmp::stage2
