/// \file
/// Stage 3: the G-M-P scheduler (Go 1.1 onwards; proc.go).
///
/// ```unparsed
/// Ps, local queues and stealing
/// =============================
/// Stage 2 took one global lock for every scheduling decision. Stage 3 adds
/// the P, a logical processor: GOMAXPROCS of them, and an M must hold one to
/// run goroutines. Each P has its own run queue of 256 slots, which its M
/// uses without any lock (runq.h), and a runnext slot for the goroutine it
/// readied last. The global run queue (GRQ) and its lock remain, but only
/// for overflow, fairness and work that has no P: most decisions touch
/// nothing shared.
///
/// The story lives beside its code, each at the top of its file: where
/// runnable goroutines go (runqput), spinning Ms and wakep, the wake-up
/// protocol (proc.cc); where an M looks for work (findRunnable, in
/// schedule.cc); stopping the world (stw.cc); timers in the P
/// (timers.cc); LockOSThread (lockosthread.cc); stacks only for
/// goroutines that run (stack_cache.h).
///
/// Everything else is stage 2's, reused: the context switch, the stack
/// pool, the goroutine machinery (switch, signals, current M), park and
/// ready through common/, the timer heap (common/timer.h), exit when main
/// returns, checkdead's report.
/// ```
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <typeinfo>
#include <utility>
#include <vector>

#include "common/counting_lock.h"
#include "common/go_func.h"
#include "common/note.h"
#include "common/runtime_lock.h"
#include "stage2_global_queue/g.h"
#include "stage2_global_queue/goroutine_dump.h"
#include "stage2_global_queue/stack.h"
#include "stage2_global_queue/template_thread.h"
#include "common/timer.h"
#include "stage3_gmp/config.h"
#include "stage3_gmp/g_with_p.h"
#include "stage3_gmp/go.h"
#include "stage3_gmp/m.h"
#include "stage3_gmp/p.h"
#include "stage3_gmp/sched.h"
#include "stage3_gmp/stats.h"
#include "trace/tracer.h"

/// Stage 3: Ps with lock-free local run queues, runnext, stealing and
/// spinning Ms (stage3_gmp/).
namespace gmp::stage3 {

using stage2::G;
using stage2::GStatus;



/// A stage 3 runtime: GOMAXPROCS Ps, Ms made as needed.
///
/// Thread safety: run() is called by one plain (non-goroutine) thread at a
/// time; stats(), schedtrace() and config() by any thread.
class Runtime {
 public:
  /// Resolves `config` against the environment (GOMAXPROCS, GMP_DEBUG)
  /// and the machine; gmp::ConfigError if anything is invalid.
  explicit Runtime(Config config = {});
  /// Fatal error if the runtime is still running (fatal_if_running).
  virtual ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// Runs `main` as goroutine 1 and returns once main has returned and
  /// every other goroutine has ended, as in stage 2 (or ends the program
  /// if one is still running a gmp::kExitGrace after the last other one
  /// ended). Errors as in stage 2.
  void run(std::function<void()> main);

  /// The resolved configuration (procs is the GOMAXPROCS of the next run).
  const Config& config() const noexcept { return config_; }

  /// Counters of the current or last run().
  Stats stats() const;

  /// Go's schedtrace output: one summary line ("SCHED 12ms: gomaxprocs=2
  /// idleprocs=0 threads=3 ..."), and with `detailed` one line per P, M
  /// and goroutine. Any thread; while running or after.
  std::string schedtrace(bool detailed) const;

  /// Every goroutine not dead, as stage 2's goroutine_dump.h prints them
  /// (with the P each last ran on); `first`'s block first (a panic's
  /// goroutine) if it is one of this runtime's, else it is left out (its
  /// G may be no GWithP). Any thread; SIGQUIT prints it.
  std::string dump_goroutines(const G* first = nullptr) const;

 protected:
  using Clock = std::chrono::steady_clock;  ///< the scheduler's clock

  // ==== How a later stage plugs in ==========================================
  // Stage 3 is a whole scheduler. A stage built on it adds its idea through
  // the four parts below, and through nothing else: the rest of the class
  // is private. Each part says, in stage 3's own terms, why it is here; a
  // virtual function's stage 3 version is stage 3's whole behaviour.

  // ---- Part 1. The runtime's name and life: what every runtime has.
  /// The stage's name in trace files ("stage3").
  virtual const char* stage_name() const { return "stage3"; }
  /// The destructors' first step: a fatal error ("<name> destroyed while
  /// its run() is running") if a run() is under way on another thread.
  /// Each stage's destructor calls it before its own members go (a derived
  /// runtime's members, such as a watcher thread, go first). Any thread.
  void fatal_if_running(const char* name) const;
  /// A later stage's own state, reset at a run's start: called by run()
  /// under sched_ once this run is known to be the only one (a run() that
  /// finds one under way throws before it, touching nothing). Stage 3: none.
  virtual void reset_run_state() {}
  /// Go's sched.maxmcount (debug.SetMaxThreads): a run making more Ms is
  /// fatal (reserve_m). Before run(); stage 3's own bound is 10000.
  void set_max_threads(int n) { maxmcount_ = n; }
  /// Go's minit: sets up the calling M's own thread as it starts, before
  /// it takes a P. Stage 3: stage 2's signal stack and fault reports, which
  /// name the goroutine's P. A stage with per-thread state of its own adds
  /// it after calling this one.
  virtual void minit(M* m);
  /// g0's part of an mcall request that stage 3 does not know (numbered
  /// from kFirstLaterCall, m.h: a later stage's own, such as Go's
  /// exitsyscall0).
  /// Stage 3: fatal.
  virtual void other_mcall(M* m, G* gp);
  /// The trace's stop reason for m's request `call` (stage 2's, or
  /// stage 3's preemption); a stage that adds requests names theirs.
  virtual trace::StopReason stop_reason(stage2::MCall call) const;

  // ---- Part 2. Events from outside the goroutines. Stage 3 already waits
  // for one kind, its timers: one idle M stays on duty and sleeps until the
  // next, and findRunnable keeps a step (4, Go's netpoll) for goroutines
  // that something outside the scheduler made ready. A source of such
  // events plugs in here; stage 3 has none but its timers.
  /// findRunnable's step 4: a goroutine that a source of events outside the
  /// scheduler made ready, now runnable, or null (stage 3 has no such
  /// source). Others it found go through injectglist. m holds a P.
  virtual G* poll_network(M* m);
  /// Whether one idle M must stay on duty, watching for events from
  /// outside the running goroutines: in stage 3, a timer it must wake for
  /// (timer_deadline). checkdead counts any sleeper, or this, as a waiter
  /// that is no deadlock. sched_ held.
  virtual bool idle_duty_wanted() const;
  /// How the idle M on duty waits until `until` (max: no timer) or until
  /// woken (wake_m). Goroutines that became ready meanwhile go into `ready`
  /// (still waiting: stopm makes them runnable on the GRQ, then takes an
  /// idle P to run them). Stage 3 sleeps on the M's Note and readies none.
  /// Without sched_.
  virtual void idle_wait(M* m, Clock::time_point until,
                         std::vector<G*>& ready);
  /// Wakes an idle M that was taken off the idle list (startm and
  /// start_the_world do so after releasing sched_, as Go does). Stage 3
  /// wakes its Note.
  virtual void wake_m(M* m);
  /// The idle M on duty (sleeping until the next timer, or in a later
  /// stage's idle_wait), or null. sched_ held.
  M* duty_m() const { return timer_m_.load(std::memory_order_relaxed); }
  /// What the idle M on duty waits for has changed (an earlier timer; in a
  /// later stage, a first I/O waiter): if it is asleep it is woken to wait
  /// again, and with nobody on duty while duty is wanted, an idle M takes
  /// it. sched_ held.
  void wake_duty_m();
  /// Go's injectglist: the goroutines in `gs` (waiting, claimed by the
  /// caller: ready all at once, as a source of events finds them) become
  /// runnable. From m holding a P: one per idle P goes to the GRQ, with an
  /// M started for each, the rest to m's P's queue. From an M without a P,
  /// or from no M (m null): all to the GRQ, with an M started for each
  /// idle P. Without sched_.
  void injectglist(M* m, std::span<G* const> gs);

  // ---- Part 3. Watchers: threads that watch the scheduler from outside
  // for the whole of a run, holding no P. What such a thread may start,
  // stop, read, and take into its own hands, and how a stop of the world
  // learns of Ps that no M brings to it.
  /// Threads that watch the scheduler from outside for the whole of a run,
  /// holding no P (Go's sysmon is one; stage 3 has none): started by run()
  /// once the run is its own and the execution trace is open, before main
  /// is made, so that nothing runs unwatched. Stage 3: none. run()'s
  /// thread.
  virtual void start_watchers() {}
  /// The other half of start_watchers: stops and joins them, once every M
  /// is joined and before the trace is written (a watcher's events belong
  /// in it). Also when start_watchers threw or main could not be made:
  /// then it stops only what was started. run()'s thread.
  virtual void stop_watchers() noexcept {}
  /// Step 3 of stop_the_world, after the idle Ps and the request to the
  /// running ones: takes, as they are, the Ps that no M will bring to a
  /// scheduling point (a later stage may let an M leave its P for a while
  /// without giving it up: Go's `_Psyscall`), each with stopped_for_world.
  /// sched_ held, gcwaiting_ raised (seq_cst). Stage 3: there are none.
  virtual void stop_unattended_ps() {}
  /// One more P is stopped for the stop of the world under way: the last
  /// wakes the stopper. sched_ held, the P's status already kStopped.
  void stopped_for_world();
  /// A thread that is not an M (a watcher, as Go's sysmon) is about to take
  /// a P or goroutines into its own hands and give them to Ms: until the
  /// matching outside_work_end, checkdead counts it as a running M, for
  /// what it holds is on no queue and held by no M (Go's incidlelocked(-1)
  /// around sysmon's retake and its injectglist). Takes sched_.
  void outside_work_begin();
  /// The other half, then a check for a deadlock, as when an M goes idle
  /// (Go's incidlelocked(1)). Takes sched_.
  void outside_work_end();
  /// A trace buffer for a watcher thread (start_watchers), which owns it
  /// from now on; null when this run is not traced. The watcher's thread.
  trace::Buffer* watcher_trace(int thread) { return trace_.buffer(thread); }
  /// The Ps of this moment: GOMAXPROCS (gomaxprocs()) and allp(i) for i
  /// below it. sched_ held, which a resize needs too.
  int nprocs() const { return gomaxprocs_.load(std::memory_order_relaxed); }
  /// P number i of allp (see nprocs). sched_ held.
  P* allp(int i) const { return allp_[static_cast<std::size_t>(i)].get(); }
  /// M number id, or null if no M has it. sched_ held (Ms are appended
  /// under it and live until the runtime goes).
  M* m_by_id(int id) const {
    return id >= 0 && static_cast<std::size_t>(id) < allm_.size()
               ? allm_[static_cast<std::size_t>(id)].get()
               : nullptr;
  }
  /// Go's timeSleepUntil: the earliest timer of every P of this moment, or
  /// max() for none. Read without the P's locks (timer0_when). sched_ held.
  Clock::time_point earliest_timer() const;

  // ---- Part 4. The scheduler's verbs, with Go's names (proc.go): what a
  // later stage's new path through the scheduler does with goroutines, Ms
  // and Ps. Lock order: an object's lock (Chan, Mutex, WaitGroup), then
  // sched_, then gfree_lock_, then allglock_.
  /// Go's sched.lock: protects the private fields below, up to stats_,
  /// except where a field's own note says otherwise (the atomics,
  /// stopnote_, allp_, steal_coprimes_).
  mutable CountingLock sched_;
  /// Go's acquirep: m now holds pp.
  void acquirep(M* m, P* pp);
  /// Go's releasep: m gives up its P, which it returns.
  P* releasep(M* m);
  /// Go's handoffp: pp, whose M will not run goroutines for a while (it
  /// waits for its locked goroutine; in Go, also an M blocked in a system
  /// call), goes to an M that will run its work, or to the idle
  /// list, or to a stop of the world under way. Without sched_. Returns the
  /// M that got it (for counters and traces), or null.
  M* handoffp(P* pp);
  /// Go's startm: an idle M (or a new one) runs with pp (or an idle P). With no
  /// idle P, a spinning start undoes wakep's nmspinning increment. An idle M
  /// is woken once sched_ is released, as in Go: waking, it takes sched_ at
  /// once (stopm), and may run on this CPU before the caller does. Returns
  /// the M started (for traces), or null.
  M* startm(P* pp, bool spinning);
  /// Go's stopm: m (holding no P) goes idle until startm hands it a P. The
  /// first idle M sleeps only until timer_deadline(), then takes an idle P
  /// to run the due timers on; if startm or start_the_world took it off the
  /// idle list as its sleep ran out, it waits for their wake-up, which comes
  /// after their unlock. Returns with m->p set, or with none when the run
  /// stops.
  void stopm(M* m);
  /// Go's wakep: if no M is spinning, wakes (or makes) an M to spin on an idle
  /// P. With no idle P it raises needspinning_ (unless it is raised already)
  /// and reads npidle_ again: a P that went idle meanwhile gets the M; else
  /// the next M about to give its P up spins instead (proc.cc's essay,
  /// rule 3). The submitted work was queued before this check (rule 1):
  /// seq_cst orders it against nmspinning_, npidle_ and needspinning_.
  void wakep();
  /// Go's runqput: into pp's queue (runnext with `next`); a full queue sends
  /// half of itself and gp to the GRQ. Owner M of pp only.
  void runqput(P* pp, G* gp, bool next);
  /// Go's globrunqput: gp at the GRQ's tail. sched_ held.
  void globrunqput(G* gp);
  /// Go's pidleget: an idle P off the list, or null. sched_ held.
  P* pidleget();
  /// Takes pp off the idle list if it is there (for an M that wants one
  /// particular P back, such as a later stage's M back from a blocking
  /// call to its old P); whether it was. sched_ held.
  bool pidleremove(P* pp);
  /// The first half of ready: gp (waiting, claimed by the caller) becomes
  /// runnable; the caller queues it.
  void make_runnable(G* gp);
  /// Go's casgstatus: the status changes from `from` to `to`, or the program
  /// ends (a broken invariant). Every change has exactly one writer: the
  /// goroutine's creator (dead -> runnable, in newproc: a goroutine's M, or
  /// run()'s plain thread for main), its own M (running -> anything), the M
  /// that took it from a queue (runnable -> running), or the one that claimed
  /// its sudog (waiting -> runnable). So a checked load and store suffice,
  /// where Go needs a CAS because its garbage collector also marks statuses
  /// while scanning.
  void casgstatus(G* gp, GStatus from, GStatus to);
  /// Idle Ps (Go's sched.npidle), read with `order`: seq_cst on the
  /// wake-up protocol's paths (proc.cc's essay), relaxed where a hint will do.
  std::int32_t npidle(std::memory_order order) const {
    return npidle_.load(order);
  }
  /// Spinning Ms (Go's sched.nmspinning), read with `order` as npidle.
  std::int32_t nmspinning(std::memory_order order) const {
    return nmspinning_.load(order);
  }
  /// Whether a stop of the world is under way (Go's sched.gcwaiting), read
  /// with `order`: seq_cst in a Dekker pair with stop_the_world's store.
  bool world_stopping(std::memory_order order) const {
    return gcwaiting_.load(order);
  }
  /// Whether the GRQ is empty: a hint read without the lock (relaxed), as
  /// Go's handoffp reads sched.runqsize. Any thread.
  bool grq_empty() const {
    return grq_size_.load(std::memory_order_relaxed) == 0;
  }

 public:
  /// A safe point of the goroutine running on m found its P's preempt
  /// request: the goroutine stops here (Go's preemptPark via gopreempt_m)
  /// and runs again later, perhaps on another M. Every call into the runtime
  /// is such a safe point (a goroutine's entry to go, yield, a channel, a
  /// mutex, a wait group...), as Go's function prologues were; a later
  /// stage may add more. On the goroutine; m is its M.
  void preempt_now(M* m);

 private:
  friend struct Sched;
  /// What tests reach inside the scheduler (export_test.h; Go's
  /// export_test.go).
  friend struct ExportTest;
  // Hidden from Doxygen, which would merge a friend with every
  // stage's free function of the same name (documented below).
  /// \cond
  friend void go(GoFunc fn, const std::type_info* type);
  friend void yield();
  friend int num_goroutine();
  friend void sleep_for(std::chrono::nanoseconds d);
  friend int gomaxprocs(int n);
  friend void lock_os_thread();
  friend void unlock_os_thread();
  friend std::uint32_t lock_os_count();
  friend void goroutine_body(G* gp) noexcept;
  /// \endcond

  // proc.cc: goroutines and run queues.
  /// Go's newproc1. m is the caller's M, or null for main (made from run()'s
  /// plain thread: it goes to the GRQ); `type` is fn's (gmp::function_type).
  /// Returns null if main has returned.
  G* newproc(GoFunc fn, M* m, const std::type_info* type);
  /// Go's malg: a new dead G, with no stack yet (gostartcallfn gives it
  /// one), in allgs_.
  G* malg();
  /// Go's gfget: a dead G from the P's cache, refilled from the global list.
  G* gfget(P* pp);
  /// Go's gfput: a dead G into the P's cache; a full cache spills half.
  void gfput(P* pp, G* gp);
  /// Go's stackalloc: a stack from pp's cache (StackCache), which refills
  /// from stacks_ when empty. Owner M of pp only. Throws std::system_error
  /// as StackPool::alloc does.
  stage2::Stack stackalloc(P* pp);
  /// Go's stackfree: `s` back to pp's cache. Owner M of pp only.
  void stackfree(P* pp, stage2::Stack s) noexcept;
  /// gp's first run on m (its P): a stack from the P's cache and the first
  /// frame on it (Go's newproc1 does both at go(); here a queued goroutine
  /// holds no stack). A stack that cannot be had is a fatal error.
  [[gnu::noinline]] void gostartcallfn(M* m, G* gp);
  /// Go's globrunqputhead: gp at the GRQ's head, to run before what waits
  /// there (a removed P's goroutines, procresize). sched_ held.
  void globrunqputhead(G* gp);
  /// Links gs[0..n) through schedlink, in order, the last to null: done
  /// before taking sched_ (Go's runqputslow), so that the lock is held
  /// for a splice only. n > 0; the caller owns the goroutines.
  static void link_batch(G* const* gs, std::uint32_t n) noexcept;
  /// Go's globrunqputbatch: the chain head..tail of n goroutines, linked
  /// by link_batch, at the GRQ's tail, in O(1). sched_ held.
  void globrunqputbatch(G* head, G* tail, std::uint32_t n);
  /// Go's globrunqget (1.19): a batch from the GRQ's head, of
  /// min(len/GOMAXPROCS + 1, len, max if nonzero, 128). The first is returned,
  /// the rest go to pp's local queue. sched_ held; owner of pp.
  G* globrunqget(P* pp, std::uint32_t max);
  /// Go's ready: gp (waiting, claimed by the caller) runs next on pp, the
  /// caller's P; an idle P is woken to take other work if needed.
  void ready(G* gp, P* pp);
  /// Goroutine ids in batches of 16 per P, so that newproc does not contend on
  /// one counter (Go's goidcache).
  std::uint64_t newgoid(P* pp);
  // proc.cc: Ms and Ps.
  /// wakep without its StoreLoad fence, for a caller that has fenced since
  /// its submission (add_timer: one fence for its duty check and wakep's).
  void wakep_fenced();
  /// wakep, for an M that holds a P and has just queued work on it (go(),
  /// a goroutine readied, a yield). With GOMAXPROCS 1 that P is the only
  /// one: none is idle, no M spins (a spinning M holds a P) and the next M
  /// to drop a P is this one, which sees its own queue; so there is nothing
  /// to wake and no fence to pay (Go's wakep also returns at once, at its
  /// first load of npidle). GOMAXPROCS changes only with the world stopped,
  /// when no holder of a P runs this.
  void wakep_holding_p() {
    if (nprocs() > 1) wakep();
  }
  /// Go's mReserveID and checkmcount: a new M is counted as running before it
  /// exists. Past the limit, fatal, as in Go (stage 3 makes at most about
  /// GOMAXPROCS + 1 Ms; in Go, Ms blocked in system calls make many).
  /// sched_ held.
  void reserve_m();
  /// Go's newm: a new M thread that starts holding pp. The thread count was
  /// reserved by the caller. A thread that cannot be made is fatal, as in Go
  /// ("newosproc: failed to create new OS thread"): the scheduler has work and
  /// a P for it, and cannot unwind from here. sched_ held, from the caller's
  /// check of stopping_ to the thread's handle (its mstart waits for it): so
  /// stop_ms, which stops M making under the same lock, finds every M in
  /// allm_ with its thread handle, and no M is added while it joins them.
  M* newm(P* pp, bool spinning);
  /// Go's handoffp's second check: if no M spins and no P is idle, nobody
  /// looks for work, and the caller's hand-off counts one spinning M
  /// (0 -> 1) for the M it starts; whether it did. seq_cst: the wake-up
  /// protocol's (wakep's increment is the same compare-exchange).
  bool claim_spinning_if_nobody_looks();
  /// Whether timers wait, or the stage wants an idle M on duty
  /// (idle_duty_wanted), while no idle M is on duty: a P given up now would
  /// leave them unwatched (handoffp's last check). sched_ held.
  bool duty_unwatched() const;
  // lockosthread.cc: LockOSThread (Go's lockedg / lockedm).
  /// Go's stoplockedm, on g0 of m, whose locked goroutine is not running:
  /// m hands its P off (handoffp) and sleeps, counted in nmidlelocked_,
  /// until an M that took the goroutine from a queue hands it a P
  /// (startlockedm). Returns with m->p set; the goroutine is runnable.
  void stoplockedm(M* m);
  /// Go's startlockedm: gp, taken from a queue by m, is locked to another
  /// M: m gives that M its P and wakes it to run gp, then goes idle.
  void startlockedm(M* m, G* gp);
  /// Go's mexit for an M whose locked goroutine ended (Go 1.10+): the
  /// goroutine may have left the thread in a state no other should see,
  /// so the thread ends; its P is handed off first. On m's g0.
  void mexit_locked(M* m);
  /// Go's newosproc: m's thread, running mstart. sched_ held.
  void newosproc(M* m);
  /// When the idle M on timer duty must wake: the earliest timer of all Ps
  /// (earliest_timer), or max() for none, or if it is due already while
  /// every P is held: then the Ms holding the Ps run it at their next
  /// findRunnable, onto their own queue.
  /// (An M without a P could only put the sleeper in the GRQ, where a
  /// runnext chain starves it: goroutines that ready each other through
  /// runnext never let their P look at the GRQ.) sched_ held.
  Clock::time_point timer_deadline() const;
  /// Whether the earliest timer of all Ps is due. sched_ held.
  bool timers_due() const;
  /// If goroutines sleep and no idle M is on timer duty, wakes an idle M
  /// (without a P) to take it: it will sleep until the earliest timer. Only
  /// timers need this at once (a later stage's I/O duty is taken by the next
  /// M that goes idle, as in Go). sched_ held.
  void ensure_timer_m();
  /// Go's mput: m onto the idle list. sched_ held.
  void mput(M* m);
  /// Go's mget: an idle M off the list, or null. sched_ held.
  M* mget();
  /// Takes m, which is idle, off the idle list (to wake it for a job).
  /// sched_ held.
  void mremove(M* m);
  /// Go's pidleput: pp (its queue empty) onto the idle list; an M on duty
  /// that sleeps past a due timer (timer_deadline) is woken. sched_ held.
  void pidleput(P* pp);
  /// Go's pidlegetSpinning: pidleget for one who found or submitted work
  /// and wants an M to spin for it; with no idle P it raises needspinning_,
  /// so that an M about to give its P up spins instead. sched_ held.
  P* pidleget_spinning();
  // schedule.cc: the M's loop.
  /// Go's mstart and schedule: the loop an M's thread runs, from its start
  /// until the run stops.
  void mstart(M* m);
  /// Go's findRunnable, in note 000's order (the top of schedule.cc). m
  /// holds a P on entry and on return; returns {null, false} only when the
  /// run is over.
  std::pair<G*, bool> find_runnable(M* m);
  /// Go's stealWork: 4 rounds over every other P in a random order, taking half
  /// of a victim's queue; runnext only in the last round.
  G* steal_work(M* m);
  /// The end of the delicate dance, after findRunnable gave m's P up (procs:
  /// GOMAXPROCS as it read it): a spinning M stops spinning and looks at
  /// every queue again, a non-spinning one at needspinning_; if work is
  /// waiting and a P is idle, m takes the P and spins. Returns whether m
  /// holds a P again.
  bool recheck_after_drop(M* m, int procs);
  /// m starts spinning: counted in nmspinning (seq_cst: see wakep), and
  /// needspinning_ is served.
  void become_spinning(M* m);
  /// m spins from now on (it made itself spin, or startm made it): its spin
  /// time (and trace slice) starts.
  void start_spin_clock(M* m);
  /// m stops spinning; the decrement is ordered before m's re-reads of
  /// the queues (a StoreLoad fence, paired with wakep's).
  void stop_spinning(M* m);
  /// Go's resetspinning: a spinning M found work; another should spin for the
  /// work that may follow.
  void resetspinning(M* m);
  /// Go's execute: runs gp on m until it switches back. A goroutine from
  /// runnext shares the time slice: the schedtick does not advance.
  /// Inlined into mstart, its only caller, and gogo ends in a jump to the
  /// switch (in the optimised build without sanitizers): g0's switch back
  /// then lands in the M's loop itself, not in a function that must return
  /// to it. Such a return is mispredicted on every switch, since the CPU's
  /// return predictor then holds the goroutine's calls, not g0's
  /// (stages_bench, `yield/stage3_gmp/procs:1`).
  [[gnu::always_inline]] inline void execute(M* m, G* gp, bool inherit_time);
  /// execute's trace events, out of line (schedule.cc says why).
  [[gnu::cold, gnu::noinline]] static void trace_execute(M* m);
  /// Go's park_m, on g0 once gp's registers are saved: gp waits, and only then
  /// is the object's lock released (stage 2's protocol 3).
  void park_m(M* m, G* gp);
  /// yield(): gp goes to the tail of this P's queue (the GRQ only if that is
  /// full), as note 003 implies and as Go's internal goyield does; but
  /// if no other goroutine is queued on this P and some wait in the GRQ, to
  /// the GRQ's tail behind them, taking the global lock, as Go's
  /// runtime.Gosched always does (with the 61-tick rule alone, a lone
  /// yielder would run 60 times in 61 while they wait). Either way this M
  /// looks for work next. If other goroutines were queued here, or in the
  /// GRQ, an idle P is woken to share them (wakep, as Go's goschedImpl
  /// does).
  void gosched_m(M* m, G* gp);
  /// Go's goexit0: gp is dead; its stack goes to this P's stack cache at
  /// once, the G to its free list.
  /// Returns whether m's thread must end (gp was locked to it: mexit_locked
  /// has handed its P off).
  bool goexit0(M* m, G* gp);
  /// Go's gopreempt_m, on g0: gp, stopped at a safe point, goes to the GRQ
  /// (behind everything queued there) and m schedules another.
  void gopreempt_m(M* m, G* gp);
  // timers.cc: Go 1.14's timers, a heap per P.
  /// Go's checkTimers: the due timers of `from` (m's own P, or another P's
  /// when m looks for work) fire. Sleepers become runnable on `onto`, m's
  /// P; then the program's timers' functions run, on this M, without any
  /// lock. If timers remain and no M is on duty, wakep. Returns how many
  /// fired. Takes from's timers_lock only if one is due (timer0_when).
  /// The caller's M holds `onto`.
  std::uint32_t run_timers(P* from, P* onto, Clock::time_point now);
  /// Go's addtimer: t into pp's heap (the P of the goroutine that sets it).
  /// If it is now that P's earliest: the idle M on duty, if it sleeps past
  /// it, is woken to sleep less; with none on duty, wakep (Go's
  /// wakeNetPoller). Takes pp's timers_lock, then sched_ if so.
  void add_timer(P* pp, RuntimeTimer* t);
  /// Go's deltimer: t out of whichever P's heap holds it; whether it was
  /// in one. Takes that P's timers_lock.
  static bool del_timer(RuntimeTimer* t);
  /// Go's moveTimers: every timer of `from` (a P that procresize removes)
  /// into `to`. The world stopped, sched_ held.
  void move_timers(P* from, P* to);
  /// Empties every P's heap (main has returned, or the run is over): no
  /// timer fires after main. sched_ held.
  void clear_timers();
  /// Whether any P of this moment holds a timer (timer0_when). sched_ held.
  bool any_timers() const;
  // stw.cc: stopping the world, GOMAXPROCS.
  /// Go's stopTheWorldWithSema, called by a goroutine: every P stops. Idle Ps
  /// are taken at once; Ms holding one give it up at their next scheduling
  /// point (gcstopm). With `exiting`, main's return is announced once the stop
  /// is ours. Returns the caller's M, once every P is stopped.
  M* stop_the_world(bool exiting);
  /// Go's startTheWorldWithSema: resizes to `newprocs` Ps if nonzero, then
  /// every P with work gets an M, the others go idle. The idle Ms handed a
  /// P are woken after sched_ is released, as in Go (startm says why).
  void start_the_world(M* m, int newprocs);
  /// Go's preemptall: asks the goroutine running on every held P to stop at
  /// its next safe point (P::preempt). stop_the_world asks again every
  /// 100 us while it waits, as Go does: a goroutine whose time slice began
  /// just as the stop did missed the first request. sched_ held.
  void preemptall();
  /// Go's gcstopm: m gives up its P to a stopping world, and sleeps until the
  /// world starts again and hands it a P.
  void gcstopm(M* m);
  /// Go's procresize, with the world stopped and sched_ held: n Ps. Removed Ps
  /// hand their goroutines to the GRQ and their free Gs to the global list; the
  /// caller's M moves to P 0 if its own P goes. New and kept Ps are left
  /// stopped, for start_the_world to hand out. m may be null (no caller P: the
  /// first resize of a run).
  void procresize(M* m, int n);
  /// Go's runtime.GOMAXPROCS(n), on a goroutine: stop the world, resize, start
  /// it again; the pause is measured.
  int set_gomaxprocs(int n);
  // runtime.cc: the life of a run.
  /// Protocol 4 of stage 2's runtime.h, with the world stopped: on goroutine 1
  /// right after main returned. New goroutines are dropped from now on, and
  /// queued ones are dropped when their first turn comes (goroutine_entry);
  /// parked ones are cancelled, unlinked, and readied to unwind.
  void exit_after_main();
  /// Every goroutine is dead: the Ms leave their loops and are joined.
  void stop_ms() noexcept;
  /// The run's last step, on run()'s thread once no M is left (after
  /// stop_ms, or when main's goroutine could not be made): writes the trace,
  /// then clears running_. In that order: a run()
  /// that another thread starts as soon as running_ is clear must not find
  /// this run's session open.
  void end_run() noexcept;
  /// The schedtrace thread's loop (GMP_DEBUG=schedtrace=X): Go prints
  /// from sysmon; stage 3 has a thread of its own for it.
  void schedtrace_loop();
  // checkdead.cc
  /// Go's checkdead: called with sched_ held whenever an M goes idle
  /// (mput) or outside work ends; fatal if no goroutine can ever run
  /// again, or if goroutines are queued while every M is idle.
  void checkdead();
  /// The state a lost wake-up leaves behind, sampled: a P is idle, no M
  /// spins and no stop of the world is under way, while a goroutine waits
  /// in the GRQ or in a running P's queue (conservation_watch.h samples
  /// it in the tests of stages 3-5). Passed through for a moment on every
  /// submission of work; staying in it is the bug. Any thread; takes
  /// sched_.
  bool idle_p_with_queued_work() const;
  // Tracing (trace/tracer.h).
  /// The trace file's description of this run.
  trace::RunInfo trace_info() const;
  /// The calling M's trace buffer, or null (tracing off, or not an M).
  /// One test of a flag when off; getm() only when on.
  trace::Buffer* mtrace() const {
    if (!trace_.on()) [[likely]] return nullptr;
    M* m = getm();
    return m != nullptr ? m->trace : nullptr;
  }


  // ---- Stage 3's own state: a later stage asks through the parts above.
  Config config_;        ///< resolved; immutable during a run
  DebugSettings debug_;  ///< parsed config_.debug
  stage2::StackPool stacks_;  ///< thread-safe

  // ---- Protected by sched_.
  G* grq_head_ = nullptr;  ///< global run queue, FIFO, linked by schedlink
  G* grq_tail_ = nullptr;  ///< the GRQ's last goroutine
  std::atomic<std::int32_t> grq_size_{0};  ///< written under sched_; read
                                           ///< without it (relaxed: a hint)
  M* midle_ = nullptr;  ///< idle Ms (Go's sched.midle)
  int nmidle_ = 0;      ///< how many Ms are on midle_
  /// Ms waiting for their locked goroutine (Go's sched.nmidlelocked):
  /// idle for checkdead.
  int nmidlelocked_ = 0;
  int mcount_ = 0;      ///< Ms made (Go's mcount), including starting ones
  int maxmcount_ = 10000;  ///< Go's sched.maxmcount (SetMaxThreads)
  P* pidle_ = nullptr;  ///< idle Ps (Go's sched.pidle)
  std::atomic<std::int32_t> npidle_{0};  ///< written under sched_; read by
                                         ///< wakep and spinning checks
  /// The idle M sleeping until the next timer (the M on duty), or null.
  /// Written under sched_; read without it by run_timers, which wants an
  /// M on duty for the next timer (relaxed: a hint, checked under sched_).
  std::atomic<M*> timer_m_{nullptr};
  /// Until when the M on duty sleeps (timer_deadline when it went to
  /// sleep, RuntimeTimer::ns), or 0 while no M is on duty (Go's
  /// sched.pollUntil): an earlier new timer must wake it. Written under
  /// sched_ with timer_m_; read without it by add_timer: seq_cst, a Dekker
  /// pair with the new timer's timer0_when (fences on both sides).
  std::atomic<std::int64_t> duty_until_{0};
  int stopwait_ = 0;             ///< Ps still to stop (stop the world)
  int outside_work_ = 0;  ///< threads between outside_work_begin and _end
  /// Woken when stopwait_ reaches 0. A Note, thread-safe: slept on by the
  /// stopper without sched_.
  Note stopnote_;
  /// Every P ever made. Grown only by procresize (world stopped, sched_
  /// held); read without the lock by Ms (steal_work, recheck_after_drop).
  /// Reserved to kMaxProcs in the constructor, so never reallocated.
  std::vector<std::unique_ptr<P>> allp_;
  std::vector<std::unique_ptr<M>> allm_;  ///< every M of this run
  /// Go's stealOrder: the steps coprime to GOMAXPROCS. Rewritten only by
  /// procresize, with the world stopped; read without the lock by
  /// steal_work (its M holds a P, so no resize can run).
  std::vector<std::uint32_t> steal_coprimes_;
  /// "stage3::Config.stack_size" (stage_name()'s), for the Ms' overflow
  /// reports: set by the first newm, then immutable.
  std::string stack_size_field_;
  bool running_ = false;    ///< between run()'s start and its end
  bool main_done_ = false;  ///< main returned: parks become Goexit
  std::chrono::steady_clock::time_point started_at_;  ///< run()'s start
  Stats stats_;  ///< the counters kept under sched_

  // ---- Atomics read on fast paths without a lock.
  std::atomic<int> gomaxprocs_{0};  ///< changed only with the world stopped
  /// Spinning Ms. seq_cst on the wake-up protocol's paths (proc.cc's essay);
  /// relaxed where only a hint is read.
  std::atomic<std::int32_t> nmspinning_{0};
  /// Go's sched.needspinning: work was submitted or found while every P was
  /// held, and no M spins for it; the next M about to give its P up spins
  /// instead (proc.cc's essay, rule 3). Raised by wakep and
  /// pidleget_spinning, cleared by become_spinning; seq_cst, a Dekker pair
  /// with npidle_ (wakep raises it then reads npidle_; findRunnable puts
  /// its P on the idle list, then reads it).
  std::atomic<bool> needspinning_{false};
  std::atomic<bool> gcwaiting_{false};    ///< stop the world under way
  std::atomic<bool> exiting_{false};      ///< main returned
  std::atomic<bool> stopping_{false};     ///< every goroutine dead: Ms exit
  std::atomic<std::uint64_t> goidgen_{0};  ///< ids, handed out in batches
  std::atomic<std::int64_t> live_{0};     ///< goroutines not dead
  std::atomic<std::int64_t> max_live_{0};  ///< live_'s highest (relaxed)
  std::atomic<std::int32_t> nblocked_{0};  ///< parked on an object
  std::atomic<std::uint64_t> created_{0};  ///< goroutines made this run
  std::atomic<std::uint64_t> finished_{0};  ///< returned from their function
  std::atomic<std::uint64_t> exited_{0};    ///< unwound by Goexit at exit
  std::atomic<std::uint64_t> never_started_{0};  ///< dropped at exit, unrun
  std::atomic<std::uint64_t> preemptions_{0};  ///< preempt_now calls

  /// One stop-the-world at a time (Go's worldsema). A goroutine mutex: a
  /// goroutine that waits for it parks, so its M can still give up its P to
  /// the stop under way (an M blocked on a plain lock would keep its P, and
  /// the stop would wait for it forever).
  Mutex worldsema_;

  // ---- Protected by gfree_lock_ (Go's sched.gFree.lock): the global
  // list of dead Gs. A lock of its own, not sched_, as in Go: a P's cache
  // spills and refills there for every 32 goroutines that die or start,
  // and would otherwise wait behind the run queue's batches.
  mutable RuntimeLock gfree_lock_;  ///< protects gfree_; taken after sched_
  G* gfree_ = nullptr;  ///< global free list, fed by full P caches
  /// How many Gs gfree_ holds: written under gfree_lock_; peeked without
  /// it (relaxed: gfget rechecks under the lock).
  std::atomic<int> ngfree_{0};

  // ---- Protected by allglock_ (Go's allglock): every G ever made.
  mutable RuntimeLock allglock_;  ///< Go's allglock: protects allgs_
  std::vector<std::unique_ptr<GWithP>> allgs_;  ///< every G ever made; allglock_

  /// Makes the Ms' threads a locked M asks for (newm): started by the
  /// run's first lock_os_thread, stopped by stop_ms. Thread-safe.
  stage2::TemplateThread template_thread_;

  Note main_returned_;  ///< woken when main returns, once per run
  Note all_dead_;       ///< woken by the goexit0 that ends the last goroutine
  /// The schedtrace printer, when GMP_DEBUG asks for it (not the
  /// execution trace below). run()'s thread starts and joins it.
  std::thread schedtrace_thread_;
  Note schedtrace_stop_;  ///< woken to stop schedtrace_thread_ at the end
  /// The execution trace of the run under way (trace/tracer.h), if
  /// Config::trace asks for one. Started and finished by run()'s thread,
  /// around the whole run: the Ms and any watcher (start_watchers).
  trace::Session trace_;
};

}  // namespace gmp::stage3
