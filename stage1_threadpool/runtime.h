/// \file
/// Stage 1: goroutines as tasks on a fixed pool of OS threads, each holding
/// a worker from its start to its end.
///
/// ```unparsed
/// The thread pool
/// ===============
/// The notes (docs/course/notes.md, note 000) start where everyone starts:
/// "give each ready goroutine a free thread". A Runtime owns `procs` OS threads
/// (workers) and one queue of goroutines waiting for a worker. go(f) appends f
/// to the queue; a free worker takes the oldest and runs it to the end. That is
/// all the scheduling there is: a goroutine never leaves its thread until it
/// returns.
///
/// Everything a goroutine does, it does with a whole OS thread:
///   - a goroutine that blocks (Chan::recv, Mutex::lock, WaitGroup::wait,
///     sleep_for) blocks its worker thread; the pool has one worker fewer
///     until it wakes up;
///   - so running N blocked goroutines at once takes N threads, each with
///     a stack of megabytes and a kernel task to create (the demo measures
///     both), where Go needs 2 KiB per goroutine;
///   - and with a fixed pool, if every worker is blocked waiting for a
///     goroutine that is still in the queue, nothing can ever run again
///     ("thread pool starvation"). The runtime detects it and says so.
/// Stage 2 cures both by making goroutines user-space threads that give their
/// OS thread back when they block.
///
/// Protocols
/// ---------
/// 1. go(f) (Go's newproc): lock mu_, append {new id, f} to queue_, wake one
///    idle worker.
/// 2. A worker (Go's schedule loop, minus everything clever): lock mu_; while
///    the queue is empty, wait (idle); take the oldest goroutine; unlock; run
///    it to the end; repeat.
/// 3. Blocking (park/ready, see common/scheduler.h): the goroutine records
///    itself as parked on its worker (under mu_), releases the object's lock
///    and sleeps on the worker's Note; the waker claims its sudog and wakes
///    the Note. The runtime counts blocked workers to detect deadlocks (5).
/// 4. Exit (Go ends the program when main returns): the moment main returns,
///    under the same lock, no goroutine may start any more (queued ones are
///    dropped unrun) and every parked goroutine has its wait cancelled; all
///    are unlinked from their wait queues, then woken to unwind (gmp::Goexit,
///    so their destructors run). Goroutines still running are waited for
///    (a blocking call now throws Goexit at once), and the workers joined:
///    run() returns with no thread and no goroutine left behind. One that
///    is still running a gmp::kExitGrace after the last one ended never
///    calls into the runtime: the program ends there, with status 0, as
///    Go's does (common/exit.h).
/// 5. Deadlock (Go's checkdead): whenever a worker blocks or goes idle, if no
///    worker is running and none can start (all blocked, or idle with nothing
///    queued), and no timer is pending, nothing can ever wake anyone: fatal
///    error, naming every goroutine and what it waits for.
/// 6. Timers (Go 1.0's timerproc): the program's timers (common/time.h) are
///    in one heap under mu_; the run's first timer starts a timer thread,
///    which sleeps until the earliest and calls the due timers' functions
///    without mu_ (they send on a channel, or queue a goroutine). A
///    sleep_for is not a timer here: the worker sleeps with its goroutine.
/// ```
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/chan.h"
#include "common/context.h"
#include "common/go_func.h"
#include "common/mutex.h"
#include "common/timer.h"
#include "common/select.h"
#include "common/time.h"
#include "common/wait_group.h"
#include "stage1_threadpool/config.h"
#include "stage1_threadpool/sched.h"

/// Stage 1: goroutines as tasks on a fixed pool of OS threads
/// (stage1_threadpool/).
namespace gmp::stage1 {

/// A Go channel whose blocked goroutines block their worker threads.
template <class T>
using Chan = BasicChan<T, Sched>;
/// Go's sync.Mutex for stage 1 goroutines.
using Mutex = BasicMutex<Sched>;
/// Go's sync.WaitGroup for stage 1 goroutines.
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

/// Counters of one Runtime::run, for tests, demos and benchmarks.
/// Conservation: created == finished + exited + never_started.
struct Stats {
  std::uint64_t goroutines_created = 0;   ///< main and every go()
  std::uint64_t goroutines_finished = 0;  ///< returned from their function
  std::uint64_t goroutines_exited = 0;    ///< unwound by Goexit at exit
  std::uint64_t goroutines_never_started = 0;  ///< still queued at exit
  std::uint64_t threads_created = 0;      ///< worker threads started
  std::size_t max_queue_len = 0;          ///< longest the queue has been
  /// Right now: goroutines parked on a channel, mutex or wait group (a
  /// gauge, not a counter; tests use it to wait until a goroutine blocked).
  std::int64_t goroutines_blocked = 0;
};

/// A stage 1 runtime: a fixed pool of Config::procs worker threads.
///
/// Thread safety: run() is called by one plain (non-goroutine) thread at a
/// time; stats() and config() by any thread.
class Runtime {
 public:
  /// Validates `config` (gmp::ConfigError if invalid). Starts no thread.
  explicit Runtime(Config config = {});
  /// Fatal error if the runtime is still running.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// Starts the workers, runs `main` as goroutine 1, and returns once main
  /// has returned and every other goroutine has ended (protocol 4). Can be
  /// called again afterwards. If a goroutine is still running a
  /// gmp::kExitGrace after the last other one ended (it never calls into
  /// the runtime), the program ends with status 0 instead, as Go's does
  /// (common/exit.h).
  ///
  /// Errors: gmp::UsageError if called from a goroutine, or while this
  /// runtime runs; std::system_error, with nothing started, if a worker
  /// thread cannot be created. An exception escaping `main` or any other
  /// goroutine ends the program like an unrecovered panic in Go.
  void run(std::function<void()> main);

  /// The validated configuration.
  const Config& config() const noexcept { return config_; }

  /// Counters of the current or last run().
  Stats stats() const;

 private:
  friend struct Sched;
  // Hidden from Doxygen, which would merge a friend with every
  // stage's free function of the same name (documented below).
  /// \cond
  friend void go(GoFunc fn);
  friend void yield();
  friend int num_goroutine();
  friend void sleep_for(std::chrono::nanoseconds d);
  /// \endcond

  /// Where the runtime is in run().
  enum class State { kStopped, kStarting, kRunning, kExiting, kStopping };

  /// A goroutine that has not started yet: its id and its function.
  struct Task {
    std::uint64_t goid;
    GoFunc fn;
  };

  void start_workers();
  void stop_workers() noexcept;
  void join_workers() noexcept;
  void worker_loop(Worker* w);
  void execute(Task task);
  void newproc(GoFunc fn);
  void exit_after_main(std::unique_lock<std::mutex>& lk);
  bool park(Worker* w, Sudog<Worker*>& s, ParkUnlock unlock, WaitReason why,
            std::chrono::nanoseconds timeout);
  void ready(Worker* w) noexcept;
  void checkdead();
  bool exiting() const;  // main has returned (protocol 4); any thread
  // Timers (protocol 6): Sched::add_timer's and del_timer's work, and the
  // timer thread's loop.
  void add_timer(RuntimeTimer* t);
  bool del_timer(RuntimeTimer* t);
  void timerproc();

  const Config config_;  // immutable

  // Every field below is protected by mu_ (the only runtime lock). Lock
  // order: an object's lock (Chan, Mutex, WaitGroup) before mu_.
  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // idle workers wait for queue_/kStopping
  std::condition_variable done_cv_;  // run() waits for main, then quiescence
  State state_ = State::kStopped;
  std::deque<Task> queue_;           // goroutines waiting for a worker, FIFO
  // The workers; the vector is filled before any thread starts and cleared
  // after all are joined, so only the Worker fields change while running.
  std::vector<std::unique_ptr<Worker>> workers_;
  int nidle_ = 0;        // workers waiting for work_cv_
  int nblocked_ = 0;     // workers whose goroutine is parked on an object
  bool main_done_ = false;
  std::uint64_t next_goid_ = 1;  // main is goroutine 1, as in Go
  Stats stats_;
  TimerHeap timers_{this};  // the program's timers (protocol 6)
  bool timers_firing_ = false;  // the timer thread is calling due ones
  std::condition_variable timer_cv_;  // the timer thread waits here
  // Started by a run's first timer, joined by stop_workers (mu_ guards
  // the handle; only run()'s thread joins it).
  std::thread timer_thread_;

  // state_ == kExiting, readable without mu_ for yield()'s check. Written
  // under mu_ with state_; relaxed (see exiting()).
  std::atomic<bool> exiting_{false};
};

/// Starts a new goroutine running `fn` (Go's `go fn()`; any callable with
/// no arguments, move-only ones too): queues it; a free worker runs it. Must be called from a goroutine (gmp::UsageError
/// otherwise; an empty `fn` is one too). Once main has returned, new
/// goroutines are dropped without running, as Go never runs them.
void go(GoFunc fn);

/// Lets other threads run (Go's runtime.Gosched). In stage 1 this can only
/// yield the OS thread: the goroutine keeps its worker. Goroutine only;
/// throws gmp::Goexit once main has returned.
void yield();

/// Go's runtime.NumGoroutine: how many goroutines of the caller's runtime
/// exist now (main included; queued, running and blocked ones; not the
/// dead). A snapshot. Goroutine only (gmp::UsageError otherwise).
int num_goroutine();

/// Parks the calling goroutine for at least `d` (Go's time.Sleep); returns
/// at once if d <= 0. In stage 1 the worker thread sleeps with it.
/// Goroutine only; throws gmp::Goexit if main returns meanwhile.
void sleep_for(std::chrono::nanoseconds d);

}  // namespace gmp::stage1
