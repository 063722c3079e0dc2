/// \file
/// Stage 2: goroutines as green threads, M OS threads, one global run queue.
///
/// ```unparsed
/// Green threads on a global queue
/// ===============================
/// Stage 1 gave every running or blocked goroutine a whole OS thread. Here a
/// goroutine becomes a user-space thread: its own small stack (stack.h,
/// 64 KiB by default instead of 8 MiB) and its saved registers (context.h).
/// `procs` OS threads, the Ms, take turns running goroutines: an M runs one
/// until it blocks, yields or ends, then switches to the next, in user space
/// (a few nanoseconds, no kernel). A goroutine that blocks is parked: it
/// gives its M back, so 100,000 goroutines can wait on a channel with a
/// handful of threads.
///
/// This is Go 1.0's scheduler: every runnable goroutine waits in one global
/// run queue (the GRQ), and every scheduling decision takes the one
/// scheduler lock (`sched_`, Go's sched.lock): spawning, readying, yielding,
/// parking, finding work. The lock counts its acquisitions, contended
/// acquisitions and waiting time, and the demo shows them grow with the
/// number of Ms: that is the problem stage 3 solves.
///
/// Each M's own thread stack is its g0, the scheduler context: schedule()
/// runs there, and every switch goes g0 -> goroutine -> g0 (switch.h).
///
/// Protocols
/// ---------
/// 1. go(f) (Go's newproc): take a dead G and its stack from the free list
///    (or allocate both), prepare its context to start at f, then under the
///    sched lock make it runnable, append it to the GRQ and wake an idle M.
/// 2. schedule (each M's loop on g0): under the sched lock, ready the
///    goroutines whose timers expired, take the GRQ's head and mark it
///    running; switch to it (gogo). When it switches back (mcall), do what
///    it asked: park_m, gosched_m or goexit0. With nothing to run the M goes
///    idle (mput) and sleeps on its note; the first idle M sleeps only until
///    the earliest timer, to run it.
/// 3. Park and ready (common/scheduler.h): a goroutine that must wait puts
///    its request on its M and switches to g0. park_m, on g0, marks it
///    waiting under the sched lock and only then releases the object's lock:
///    the goroutine's registers are saved by then, so a waker that readies it
///    at once cannot resume it half-saved. (That lock is taken by the
///    goroutine and released by g0, hence RuntimeLock, which has no owner.)
///    ready: under the sched lock, waiting -> runnable, append to the GRQ,
///    wake an idle M.
/// 4. Exit, as in stage 1: the moment main returns no goroutine may start;
///    unstarted ones are dropped, parked ones are cancelled, unlinked and
///    readied to unwind (gmp::Goexit); run() returns once all are dead.
///    A running goroutine unwinds at its next call into the runtime; one
///    still running a gmp::kExitGrace after the last one ended never makes
///    one, and the program ends there, with status 0, as Go's does
///    (common/exit.h).
/// 5. Deadlock (Go's checkdead): when the last running M goes idle, with no
///    timer pending, no goroutine can ever run again: fatal error naming
///    every waiting goroutine and its wait reason (an M waiting for its
///    locked goroutine counts as idle).
/// 6. LockOSThread (lock_os_thread): a locked goroutine's M runs it only.
///    At most `procs` Ms run goroutines at once (their places); when the
///    locked goroutine waits, its M leaves its place to another M (an idle
///    one, or a new one) and sleeps (stoplockedm); the M that takes the
///    goroutine from the GRQ hands it its own place and goes idle
///    (startlockedm). A goroutine ending locked ends its thread,
///    and the Ms a locked M asks for are made by the template thread.
/// ```
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <typeinfo>
#include <utility>
#include <vector>

#include "common/chan.h"
#include "common/context.h"
#include "common/counting_lock.h"
#include "common/function_type.h"
#include "common/go_func.h"
#include "common/mutex.h"
#include "common/select.h"
#include "common/time.h"
#include "common/note.h"
#include "common/wait_group.h"
#include "stage2_global_queue/config.h"
#include "stage2_global_queue/g.h"
#include "stage2_global_queue/goroutine_dump.h"
#include "stage2_global_queue/m.h"
#include "stage2_global_queue/sched.h"
#include "stage2_global_queue/stack.h"
#include "stage2_global_queue/template_thread.h"
#include "common/timer.h"
#include "trace/tracer.h"

/// Stage 2: green threads on M OS threads, one global run queue
/// (stage2_global_queue/); its goroutine machinery is reused by stages 3-5.
namespace gmp::stage2 {

/// A Go channel whose blocked goroutines park, freeing their M.
template <class T>
using Chan = BasicChan<T, Sched>;
/// Go's sync.Mutex for stage 2 goroutines.
using Mutex = BasicMutex<Sched>;
/// Go's sync.WaitGroup for stage 2 goroutines.
using WaitGroup = BasicWaitGroup<Sched>;
/// Go's `select {}`: the calling goroutine waits forever (gmp::block).
/// select itself, and its cases, are gmp::select, gmp::recv_case,
/// gmp::send_case and gmp::default_case (common/select.h).
[[noreturn]] inline void block() { gmp::block<Sched>(); }

/// Go's time.Timer and time.Ticker (common/time.h): Timer::new_timer,
/// Timer::after, Timer::after_func and Timer::new_ticker are Go's
/// time.NewTimer, time.After, time.AfterFunc and time.NewTicker.
using Timer = BasicTimer<Sched>;
using Ticker = Timer;  ///< Go's time.Ticker: a Timer from new_ticker
/// Go's context.Context (common/context.h): Context::background(),
/// with_cancel, with_deadline, with_timeout.
using Context = BasicContext<Sched>;

/// Counters of one Runtime::run. Conservation: created == finished +
/// exited + never_started.
struct Stats {
  std::uint64_t goroutines_created = 0;   ///< main and every go()
  std::uint64_t goroutines_finished = 0;  ///< returned from their function
  std::uint64_t goroutines_exited = 0;    ///< unwound by Goexit at exit
  std::uint64_t goroutines_never_started = 0;  ///< still queued at exit
  std::uint64_t threads_created = 0;      ///< Ms started
  std::size_t max_queue_len = 0;          ///< longest the GRQ has been
  /// Right now: goroutines parked on a channel, mutex or wait group.
  std::int64_t goroutines_blocked = 0;
  std::uint64_t context_switches = 0;  ///< g0 -> goroutine switches
  std::uint64_t stacks_mapped = 0;     ///< stacks ever mapped (reused after)
  std::int64_t max_live = 0;  ///< the most goroutines alive at once (run)
  /// The sched lock (the GRQ's lock): how often it was taken, how often
  /// someone else held it, and how long takers waited in total.
  LockCounters sched_lock;
};

/// A stage 2 runtime: Config::procs Ms sharing one global run queue.
///
/// Thread safety: run() is called by one plain (non-goroutine) thread at a
/// time; stats() and config() by any thread.
class Runtime {
 public:
  /// Validates `config`, its unset `trace` taken from GMP_TRACE
  /// (gmp::ConfigError if invalid). Starts no thread.
  explicit Runtime(Config config = {});
  /// Fatal error if the runtime is still running.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// Starts the Ms, runs `main` as goroutine 1, and returns once main has
  /// returned and every other goroutine has ended (protocol 4). Can be
  /// called again afterwards. If a goroutine is still running a
  /// gmp::kExitGrace after the last other one ended (it never calls into
  /// the runtime), the program ends with status 0 instead, as Go's does
  /// (common/exit.h).
  ///
  /// Errors: gmp::UsageError if called from a goroutine or while running;
  /// std::system_error, with nothing run, if an M's thread or main's stack
  /// cannot be had. An exception escaping a goroutine ends the program like
  /// an unrecovered panic in Go.
  void run(std::function<void()> main);

  /// The validated configuration (`trace` decided).
  const Config& config() const noexcept { return config_; }

  /// Counters of the current or last run().
  Stats stats() const;

  /// Every goroutine not dead, as goroutine_dump.h prints them; `first`'s
  /// block first (a panic's goroutine). Any thread; SIGQUIT prints it.
  std::string dump_goroutines(const G* first = nullptr) const;

 private:
  friend struct Sched;
  // Hidden from Doxygen, which would merge a friend with every
  // stage's free function of the same name (documented below).
  /// \cond
  friend void go(GoFunc fn, const std::type_info* type);
  friend void yield();
  friend int num_goroutine();
  friend void sleep_for(std::chrono::nanoseconds d);
  friend void lock_os_thread();
  friend bool goroutine_body(G* gp) noexcept;
  /// \endcond

  // proc.cc: goroutines and Ms (Go's proc.go, 1.0 edition).
  /// Protocol 1 (Go's newproc): a new runnable goroutine at the GRQ's tail.
  /// m is the calling goroutine's M, or null for main (run() creates it
  /// from a plain thread); `type` is fn's (gmp::function_type). Returns null
  /// if main has already returned (the goroutine is dropped: `fn` is
  /// destroyed by the caller, after the lock is released). One lock
  /// acquisition when a dead G can be reused, which is the common case.
  G* newproc(GoFunc fn, M* m, const std::type_info* type);
  /// Go's malg: a new dead G with its stack, in allgs_. Takes sched_;
  /// throws std::system_error as StackPool::alloc does, changing nothing.
  G* malg();
  /// Go's casgstatus: gp's status changes from `from` to `to`, or the
  /// program ends (a broken invariant). sched_ held. Inline (below).
  void casgstatus(G* gp, GStatus from, GStatus to);
  /// Go's ready: gp (waiting, claimed by the caller) goes to the GRQ's
  /// tail; with `wake`, an idle M is woken for it if a place is free.
  /// sched_ held.
  void ready(G* gp, bool wake = true);
  /// Go's mput: m onto the idle list. sched_ held.
  void mput(M* m);
  /// Go's mget: an idle M off the list, or null. sched_ held.
  M* mget();
  /// Takes m, which is idle, off the idle list. sched_ held.
  void mremove(M* m);
  /// Wakes an idle M, if a place is free, to run what was just queued; with
  /// no idle M, a place is free only because Ms wait for their locked
  /// goroutines or have ended with them: a new M takes it. sched_ held.
  void wake_idle_m();
  /// Go's newm: a new M, beyond the first `procs`, to take a place a
  /// locked M left (made by the template thread if the caller is locked).
  /// sched_ held.
  void newm();
  /// Go's newosproc: m's thread, running mstart; fatal if it cannot be
  /// made. sched_ held.
  void newosproc(M* m);
  // gfree.cc: dead Gs.
  /// Go's gfget: a dead G (with its stack) off the free list, or null.
  /// sched_ held.
  G* gfget();
  /// Go's gfput: gp, dead, onto the free list. sched_ held.
  void gfput(G* gp);
  // grq.h: the global run queue (inline, as casgstatus).
  /// Go's globrunqput: gp at the GRQ's tail. sched_ held.
  void globrunqput(G* gp);
  /// Go's globrunqget: the GRQ's head, or null. sched_ held.
  G* globrunqget();
  // schedule.cc: the M's loop (protocols 2 and 3).
  /// Go's mstart and schedule: the loop an M's thread runs, from its start
  /// until the run stops.
  void mstart(M* m);
  /// Go's findRunnable: the next goroutine for m, from the GRQ, after
  /// running the due timers; m sleeps while there is none (and one idle M
  /// sleeps until the next timer). Null when the run is over.
  G* find_runnable(M* m);
  /// Go's execute: runs gp on m until it switches back to g0.
  void execute(M* m, G* gp);
  /// Go's park_m, on g0 once gp's registers are saved: gp waits, and only
  /// then is the object's lock released (protocol 3).
  void park_m(M* m, G* gp);
  /// Go's gosched_m: gp goes to the GRQ's tail.
  void gosched_m(M* m, G* gp);
  /// Go's goexit0: gp is dead; its G and stack go to the free list.
  /// Returns whether m's thread must end (gp was locked to it: Go 1.10+).
  bool goexit0(M* m, G* gp);
  // timers.cc: one heap under sched_.
  /// Due timers, sched_ held: sleepers are readied; function timers are
  /// recorded in `fire`, for the caller to call once it has unlocked.
  void run_timers(std::chrono::steady_clock::time_point now,
                  std::vector<TimerFiring>& fire);
  /// A timer into the heap, sched_ held; the M on timer duty resleeps if
  /// it is now the earliest.
  void add_timer_locked(RuntimeTimer* t);
  /// Sched::add_timer's work: add_timer_locked under sched_.
  void add_timer(RuntimeTimer* t);
  /// Sched::del_timer's work: t out of the heap, under sched_; whether it
  /// was there.
  bool del_timer(RuntimeTimer* t);
  // lockosthread.cc: LockOSThread (Go 1.0's lockedm).
  /// m's locked goroutine is not running. m leaves its place (one of
  /// `procs`) to another M and sleeps until an M that took the goroutine
  /// from the GRQ hands it over (startlockedm).
  void stoplockedm(M* m);
  /// gp, taken from the GRQ by m, is locked to another M: gp runs there,
  /// in m's place, and m goes idle. sched_ held.
  void startlockedm(M* m, G* gp);
  /// Go 1.0's matchmg: an M left its place (locked wait, or its thread
  /// ended): if goroutines or timers wait for one, another M takes it.
  /// sched_ held.
  void matchmg();
  // runtime.cc: the life of a run.
  /// The first `procs` Ms, made and started for a run.
  void start_ms();
  /// Every goroutine is dead: the Ms leave their loops and are joined.
  void stop_ms() noexcept;
  /// The run's last step, on run()'s thread: writes the trace, then
  /// clears running_.
  void end_run() noexcept;
  /// Protocol 4, on goroutine 1 right after main returned: no goroutine
  /// may start or keep waiting.
  void exit_after_main();
  // checkdead.cc
  /// Go's checkdead: called with sched_ held whenever an M goes idle; fatal
  /// if no goroutine can ever run again, with the report Go prints.
  void checkdead();

  const Config config_;  // immutable
  StackPool stacks_;     // thread-safe

  // ---- Protected by sched_ (Go's sched.lock). Lock order: an object's
  // lock (Chan, Mutex, WaitGroup), then sched_.
  mutable CountingLock sched_;
  G* grq_head_ = nullptr;  // global run queue, FIFO, linked by schedlink
  G* grq_tail_ = nullptr;
  std::size_t grq_size_ = 0;
  M* midle_ = nullptr;     // idle Ms, linked by schedlink (Go's sched.midle)
  int nmidle_ = 0;
  // Ms whose threads run (Go's mcount): `procs`, plus those made for the
  // places of Ms waiting for their locked goroutine, minus those whose
  // locked goroutine ended. At most `procs` are neither idle nor waiting.
  int mcount_ = 0;
  int nmidlelocked_ = 0;   // Ms waiting for their locked goroutine
  M* timer_m_ = nullptr;   // the idle M sleeping until the next timer
  TimerHeap timers_{this};  // sleepers and function timers, earliest first
  std::vector<std::unique_ptr<G>> allgs_;  // every G ever made (Go's allgs)
  G* gfree_ = nullptr;     // dead Gs with their stacks (Go's sched.gFree)
  std::uint64_t goidgen_ = 0;  // last goroutine id given
  std::int64_t live_ = 0;      // goroutines not dead
  int nblocked_ = 0;           // goroutines parked on an object
  bool running_ = false;       // between start and stop of a run
  bool main_done_ = false;     // main returned: protocol 4 under way
  bool stopping_ = false;      // every goroutine is dead: Ms exit
  Stats stats_;

  // main_done_, readable without the lock, for yield()'s cheap check.
  // Relaxed: park_m rechecks main_done_ under the lock, so a stale false
  // only delays the Goexit to the goroutine's next park.
  std::atomic<bool> exiting_{false};

  // The Ms: the first `procs` made before any thread starts, more by
  // newm (sched_ held); cleared after all are joined.
  std::vector<std::unique_ptr<M>> ms_;
  // Makes the Ms a locked M asks for: started by the run's first
  // lock_os_thread, stopped by stop_ms. Thread-safe.
  TemplateThread template_thread_;
  Note main_returned_;  // woken by exit_after_main, once per run
  Note all_dead_;  // woken by the goexit0 that ends the last goroutine
  trace::Session trace_;  // this run's execution trace (trace/tracer.h)
};

/// The first and last frame of every goroutine (schedule.cc); internal.
void goroutine_entry(void* arg) noexcept;

/// go(fn)'s work, once fn's type is known (gmp::function_type, for the
/// goroutine dumps and traces).
void go(GoFunc fn, const std::type_info* type);

/// Starts a new goroutine running `fn`, any callable with no arguments
/// (Go's `go fn()`). Goroutine only (gmp::UsageError otherwise, or for an
/// empty fn). Throws std::system_error, with nothing started, if no stack
/// can be had. Once main has returned, new goroutines are dropped without
/// running.
template <class F>
void go(F&& fn) {
  const std::type_info* type = function_type(fn);
  go(GoFunc(std::forward<F>(fn)), type);  // move-only ones too
}

/// Puts the calling goroutine at the back of the global run queue and runs
/// another (Go's runtime.Gosched). Goroutine only. Once main has returned
/// it throws gmp::Goexit instead.
void yield();

/// Go's runtime.NumGoroutine: how many goroutines of the caller's runtime
/// exist now (main included; queued, running and blocked ones; not the
/// dead). A snapshot. Goroutine only (gmp::UsageError otherwise).
int num_goroutine();

/// Go's runtime.LockOSThread: wires the calling goroutine to its M (its
/// OS thread) until as many unlock_os_thread calls: it runs on that thread
/// only, and the thread runs no other goroutine. When the goroutine waits,
/// its M leaves its place (one of Config::procs) to another M and sleeps
/// until the goroutine is ready again. A goroutine that ends while wired
/// takes its thread with it: the thread exits (Go 1.10+). Goroutine only
/// (gmp::UsageError otherwise).
void lock_os_thread();

/// Go's runtime.UnlockOSThread: undoes one lock_os_thread call; without
/// one it does nothing, as in Go. Goroutine only.
void unlock_os_thread();

/// How many lock_os_thread calls of the caller are not undone yet (the
/// first value of Go's export_test LockOSCounts). Goroutine only.
std::uint32_t lock_os_count();

/// Parks the calling goroutine for at least `d` (Go's time.Sleep): its M
/// runs other goroutines meanwhile. Returns at once if d <= 0. Goroutine
/// only; throws gmp::Goexit if main returns meanwhile.
void sleep_for(std::chrono::nanoseconds d);

// Go's casgstatus. In stage 2 every caller holds sched_, so the CAS
// cannot lose a race; it is a CAS because the check is the point. Inline
// for the reason grq.h gives.
inline void Runtime::casgstatus(G* gp, GStatus from, GStatus to) {
  GStatus seen = from;
  // acq_rel: release publishes what was written before the new status
  // (readgstatus pairs with it); acquire sees what the last change wrote.
  if (!gp->atomicstatus.compare_exchange_strong(seen, to,
                                                std::memory_order_acq_rel))
      [[unlikely]] {
    bad_gstatus(gp, seen, from, to);
  }
}

}  // namespace gmp::stage2

#include "stage2_global_queue/grq.h"  // Runtime's inline hot paths
