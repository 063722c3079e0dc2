// Exercise 09: spinning workers and wake-ups that are never lost (Go's
// wakep, startm, resetspinning, and findRunnable's spinning -> idle
// transition; proc.go's essay "Worker thread parking/unparking").
//
// A real multi-threaded mini-scheduler: N worker threads, each an M that
// permanently holds its P (a local queue); a global queue for work from
// outside; an idle list of parked workers, each sleeping on its own note;
// and nmspinning, the number of workers looking for work. Given: the
// queues, the idle list, the notes, submit/inject/shutdown and the worker
// loop. Write wakep, find_runnable and resetspinning in spinning.cc. See
// README.md for the statement.
//
// Parking and unparking workers (the protocol you write)
// ======================================================
// A worker out of local work *spins*: it looks at the global queue and at
// the other workers' queues (stealing), counted in nmspinning. Submitting
// work must not wake a worker every time (a futex call per task), nor
// leave work queued while workers sleep. Go's answer:
//
//   submit (any thread): put the task in a queue, THEN wakep():
//     if a worker is idle and none is spinning, make one spinning
//     (nmspinning 0 -> 1 by compare-and-swap) and wake it. If one is
//     spinning already, it will find the task: wake nobody.
//
//   a spinning worker that finds work: resetspinning(): stop spinning
//     (nmspinning - 1), then wakep(): more work may be queued behind the
//     task it took, and while it spun, submitters woke nobody.
//
//   a spinning worker that finds nothing (the "delicate dance"):
//     1. publish that it is idle (pidleput);
//     2. stop spinning (nmspinning - 1);
//     3. look at every queue AGAIN (checkrunqs); if something is there,
//        take itself back off the idle list, spin again and search;
//     4. otherwise sleep until woken (notesleep).
//
// Why step 3, and why after steps 1 and 2: a submitter stores (the task)
// then loads (npidle, nmspinning); the worker stores (idle, nmspinning)
// then loads (the queues). If the worker looked at the queues before its
// stores were visible, both could miss each other: the submitter sees a
// spinning worker and wakes nobody, the worker sees empty queues and
// sleeps, and the task waits forever. With every one of these operations
// seq_cst (one total order), at least one side sees the other's store:
// the worker finds the task, or the submitter finds the worker idle and
// not spinning and wakes someone. That is the StoreLoad pair Go's essay
// calls the delicate dance. (Steps 1 and 2 may come in either order, as
// long as both come before step 3; the order above is Go's.)
//
// Model versus Go: a worker is an M and its P at once, so "idle" means
// both. A wakep may take a worker off the idle list (pidleget_spinning +
// startm) while it is still in steps 2-3: its note remembers the wake-up,
// so its notesleep returns at once, and startm keeps its spinning flag
// and nmspinning in step. Go limits spinning Ms to half the busy Ps; this
// model does not (every worker out of work spins).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "exercises/testing/atomic.h"

namespace gmp::exercises::spinning {

/// A unit of work: stands for a goroutine.
using Task = std::function<void()>;

/// Where the provided code calls Hooks::at: the windows of the protocol.
enum class Window {
  kQueued,          ///< submit/inject: the task is queued, wakep not yet called
  kStealFailed,     ///< runqsteal found nothing in any other queue
  kBeforePidleput,  ///< pidleput: about to publish the worker idle
  kAfterPidleput,   ///< pidleput: the worker is on the idle list
  kBeforeRecheck,   ///< checkrunqs: about to look at the queues
  kRecheckFailed,   ///< checkrunqs found every queue empty
  kBeforeSleep,     ///< notesleep: about to sleep
};

/// Test hooks (empty in normal use).
struct Hooks {
  /// Called by the provided code at each Window, on the thread that is
  /// there, with no lock held. `worker` is the id of the worker whose
  /// thread calls, or -1 on a thread outside the pool. It may delay, and
  /// it may call Pool::inject (a task queued from outside at exactly that
  /// moment).
  std::function<void(Window, int worker)> at;
};

/// Prints `what` and aborts: a broken invariant fails loudly.
[[noreturn]] inline void fatal(const char* what, int worker) {
  std::fprintf(stderr, "fatal error: %s (worker %d)\n", what, worker);
  std::fflush(stderr);
  std::abort();
}

/// A FIFO of tasks behind a mutex, with a size that can be read without it.
/// Thread-safe. (The queue is not the lesson: exercises 05 and 06 make the
/// lock-free one.)
class TaskQueue {
 public:
  /// Appends t.
  void push(Task t) {
    std::lock_guard<Mutex> lock(mu_);
    q_.push_back(std::move(t));
    // seq_cst: the "store" of the submitter's StoreLoad (see the essay):
    // ordered before the submitter's later loads of npidle/nmspinning.
    size_.fetch_add(1, std::memory_order_seq_cst);
  }
  /// Takes the head, or an empty Task.
  Task pop() {
    std::lock_guard<Mutex> lock(mu_);
    if (q_.empty()) return {};
    Task t = std::move(q_.front());
    q_.pop_front();
    // seq_cst: keeps every size change in the one order the essay needs.
    size_.fetch_sub(1, std::memory_order_seq_cst);
    return t;
  }
  /// Tasks queued. seq_cst: the "load" of the worker's StoreLoad.
  int size() const { return size_.load(std::memory_order_seq_cst); }

 private:
  Mutex mu_;
  std::deque<Task> q_;        // guarded by mu_
  Atomic<int> size_{0};  // written under mu_; read without it
};

class Pool;

/// One worker: an M holding its P (Go's m and p at once).
struct Worker {
  Worker(Pool* p, int index, std::uint64_t seed)
      : pool(p), id(index), rng(static_cast<std::uint32_t>(seed)) {}

  Pool* const pool;  ///< immutable
  const int id;      ///< immutable: the index in the pool

  /// The P's local queue: tasks this worker's tasks submitted. Any thread
  /// (others steal from it).
  TaskQueue runq;

  /// Go's m.spinning: this worker is counted in nmspinning. Written by the
  /// worker itself, and by startm (an exchange) once a wakep took the
  /// worker off the idle list, before its note is posted (the note orders
  /// it for the worker's next reads). Relaxed: the count that orders the
  /// protocol is nmspinning.
  Atomic<bool> spinning{false};

  std::minstd_rand rng;  ///< steal order; the worker's thread only
  std::thread thread;    ///< started by Pool, joined by shutdown

  // The note (Go's m.park): a one-shot wake-up that remembers a post made
  // before the sleep. Protected by note_mu.
  Mutex note_mu;
  CondVar note_cv;
  bool woken = false;  // guarded by note_mu
  // Protected by the pool's idle lock.
  bool idle = false;  // on the idle list
};

/// The mini-scheduler. Thread safety: submit, inject and the snapshots may
/// be called from any thread, including from inside tasks and hooks;
/// shutdown from one thread outside the pool.
class Pool {
 public:
  /// Starts `nworkers` workers (>= 1); each starts in find_runnable, not
  /// spinning. `seed` seeds the workers' steal order. With `own_threads`
  /// false the pool starts no thread: each worker runs only when a thread
  /// of the caller's calls run_worker (the memory-model test's threads).
  explicit Pool(int nworkers, Hooks hooks = {}, std::uint64_t seed = 1,
                bool own_threads = true)
      : hooks_(std::move(hooks)) {
    for (int i = 0; i < nworkers; ++i) {
      workers_.push_back(
          std::make_unique<Worker>(this, i, seed * 7919 + i + 1));
    }
    if (!own_threads) return;
    for (auto& w : workers_) {
      w->thread = std::thread(&Pool::mstart, this, w.get());
    }
  }

  /// Runs worker i's loop on the calling thread until shutdown, for a pool
  /// made without threads of its own. Once per worker.
  void run_worker(int i) { mstart(workers_.at(i).get()); }
  /// Shuts down (see shutdown()).
  ~Pool() { shutdown(); }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  /// Go's newproc + runqput + wakep: on one of this pool's workers, t goes
  /// to that worker's local queue; on any other thread, to the global
  /// queue. Then wakep(). Any thread.
  void submit(Task t) {
    Worker* self = current();
    if (self != nullptr && self->pool == this) {
      self->runq.push(std::move(t));
    } else {
      grq_.push(std::move(t));
    }
    hook(Window::kQueued);
    wakep();
  }

  /// Puts t on the global queue, then wakep(), from any thread: how work
  /// arrives from outside the Ps (Go's injectglist from the netpoller or a
  /// timer). Tests call it from hooks.
  void inject(Task t) {
    grq_.push(std::move(t));
    hook(Window::kQueued);
    wakep();
  }

  /// Stops the pool: wakes every idle worker; each returns at its next
  /// look at stopping(); joins the pool's own threads (the caller joins
  /// those that run_worker). Tasks still queued never run. One
  /// thread outside the pool; idempotent.
  void shutdown() {
    std::vector<Worker*> sleepers;
    {
      std::lock_guard<Mutex> lock(idle_mu_);
      if (stopping_.exchange(true, std::memory_order_acq_rel)) return;
      for (Worker* w : idle_) w->idle = false;
      sleepers.swap(idle_);
      npidle_.store(0, std::memory_order_seq_cst);
    }
    for (Worker* w : sleepers) notewakeup(*w);
    for (auto& w : workers_) {
      if (w->thread.joinable()) w->thread.join();
    }
  }

  /// Workers in the pool.
  int nworkers() const { return static_cast<int>(workers_.size()); }
  /// Go's sched.nmspinning; a snapshot.
  int nmspinning() const { return nmspinning_.load(std::memory_order_seq_cst); }
  /// Go's sched.npidle: workers on the idle list; a snapshot.
  int npidle() const { return npidle_.load(std::memory_order_seq_cst); }
  /// Tasks queued anywhere; a snapshot.
  int queued() const {
    int n = grq_.size();
    for (auto& w : workers_) n += w->runq.size();
    return n;
  }
  /// How many times startm woke a worker; a snapshot.
  std::uint64_t wakeups() const {
    return wakeups_.load(std::memory_order_relaxed);
  }

 private:
  // ---- Write these three in spinning.cc -------------------------------------

  /// Go's wakep: if a worker is idle (npidle > 0) and none is spinning,
  /// takes nmspinning from 0 to 1 with a compare-and-swap and wakes an
  /// idle worker as spinning: pidleget_spinning, then startm (if no idle
  /// worker is left by then, pidleget_spinning gives the count back).
  /// Otherwise does nothing. Called after a task is queued (submit,
  /// inject) and by resetspinning. Any thread.
  void wakep();

  /// Go's findRunnable, the part this exercise is about. Worker w's thread
  /// only. Returns a task to run, or an empty Task once stopping(). Looks,
  /// in order: its own queue, the global queue, then (spinning: counted in
  /// nmspinning) the other workers' queues. With nothing found, follows
  /// the essay's steps 1-4 (pidleput, stop spinning, checkrunqs, and
  /// either spin again or notesleep) and starts over when woken. May
  /// return while spinning: the caller then calls resetspinning.
  Task find_runnable(Worker& w);

  /// Go's resetspinning: w, spinning, found a task: w stops spinning
  /// (nmspinning - 1, never below 0) and calls wakep, so that another
  /// worker spins for the work that may be queued behind it. Worker w's
  /// thread only, before it runs the task.
  void resetspinning(Worker& w);

  // ---- Provided: what find_runnable, wakep and resetspinning use ------------

  /// Go's runqget: the head of w's own queue, or an empty Task.
  Task runqget(Worker& w) { return w.runq.pop(); }

  /// Go's globrunqget (a batch of one): the head of the global queue.
  Task globrunqget() { return grq_.pop(); }

  /// Go's stealWork + runqsteal, reduced to one task: visits every other
  /// worker once, from a random one, and takes the head of the first
  /// non-empty queue. Empty Task if all were empty (then the
  /// kStealFailed hook runs). Thief's thread only.
  Task runqsteal(Worker& thief) {
    int n = nworkers();
    int start = static_cast<int>(thief.rng() % static_cast<std::uint32_t>(n));
    for (int k = 0; k < n; ++k) {
      Worker& victim = *workers_[(start + k) % n];
      if (&victim == &thief) continue;
      if (Task t = victim.runq.pop()) return t;
    }
    hook(Window::kStealFailed);
    return {};
  }

  /// Go's checkRunqsNoP: true if the global queue or any worker's queue
  /// holds a task. Reads every size with seq_cst: the loads of the
  /// worker's side of the StoreLoad. Runs the kBeforeRecheck hook first,
  /// and the kRecheckFailed hook before returning false.
  bool checkrunqs() {
    hook(Window::kBeforeRecheck);
    bool work = grq_.size() > 0;
    for (auto& w : workers_) work = work || w->runq.size() > 0;
    if (!work) hook(Window::kRecheckFailed);
    return work;
  }

  /// Go's pidleput: publishes w idle: on the idle list, npidle + 1
  /// (seq_cst: a store of the worker's side of the StoreLoad). w's own
  /// queue must be empty. After shutdown began, w is not listed but its
  /// note is posted, so that its next notesleep returns. Worker w's thread.
  void pidleput(Worker& w) {
    hook(Window::kBeforePidleput);
    if (w.runq.size() != 0) {
      fatal("pidleput: worker has a non-empty queue", w.id);
    }
    bool stopping = false;
    {
      std::lock_guard<Mutex> lock(idle_mu_);
      if (w.idle) fatal("pidleput: worker is already idle", w.id);
      stopping = stopping_.load(std::memory_order_relaxed);  // idle_mu_ held
      if (!stopping) {
        w.idle = true;
        idle_.push_back(&w);
        npidle_.fetch_add(1, std::memory_order_seq_cst);
      }
    }
    if (stopping) notewakeup(w);
    hook(Window::kAfterPidleput);
  }

  /// wakep's pidleget (Go 1.21's pidlegetSpinning, with wakep's undo):
  /// takes the most recently idle worker off the idle list (npidle - 1)
  /// and returns it, for startm. If the list is empty, gives back the
  /// nmspinning count the caller's compare-and-swap took, and returns null.
  /// Both under the idle lock: the give-back is ordered before every later
  /// pidleput, so a worker that publishes itself idle afterwards is never
  /// misled by a spinner that does not exist (a submitter that sees the
  /// phantom count wakes nobody). Any thread; the caller's CAS succeeded.
  Worker* pidleget_spinning() {
    std::lock_guard<Mutex> lock(idle_mu_);
    if (idle_.empty()) {
      // seq_cst: as every nmspinning access (see the essay).
      if (nmspinning_.fetch_sub(1, std::memory_order_seq_cst) <= 0) {
        fatal("wakep: negative nmspinning", -1);
      }
      return nullptr;
    }
    Worker* w = idle_.back();
    idle_.pop_back();
    w->idle = false;
    npidle_.fetch_sub(1, std::memory_order_seq_cst);
    return w;
  }

  /// Worker w takes itself back off the idle list (npidle - 1), after its
  /// re-check found work: true if it was still there. False if somebody
  /// took it off first (a wakep, whose startm has posted or will post w's
  /// note, or shutdown); then w must notesleep, which returns at once or
  /// soon, and must not count itself again: startm keeps w.spinning and
  /// nmspinning in step. Worker w's thread.
  bool pidleremove(Worker& w) {
    std::lock_guard<Mutex> lock(idle_mu_);
    if (!w.idle) return false;
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      if (*it == &w) {
        idle_.erase(it);
        break;
      }
    }
    w.idle = false;
    npidle_.fetch_sub(1, std::memory_order_seq_cst);
    return true;
  }

  /// Go's startm(nil, spinning=true) for a worker pidleget_spinning
  /// returned: marks it spinning, counted by the caller's compare-and-swap,
  /// and posts its note. Any thread.
  ///
  /// The model's one twist (an M and its P are one worker here): w may
  /// still be spinning, between its pidleput and its own decrement. Then
  /// it is counted already; the caller's count is surplus and is given
  /// back (w is about to re-check the queues anyway, and the post makes it
  /// search once more). In Go the P would go to another M, with its own
  /// count.
  void startm(Worker& w) {
    {
      std::lock_guard<Mutex> lock(w.note_mu);
      // The exchange decides, against w's own store of false, who counts w.
      if (w.spinning.exchange(true, std::memory_order_relaxed)) {
        nmspinning_.fetch_sub(1, std::memory_order_seq_cst);  // surplus
      }
      post(w);
    }
    wakeups_.fetch_add(1, std::memory_order_relaxed);
    w.note_cv.notify_one();
  }

  /// Go's notesleep in stopm: w sleeps until its note is posted (or returns
  /// at once if it was), then clears it. w must not be spinning unless the
  /// post is already there (startm made it spinning): a worker that sleeps
  /// while counted in nmspinning would stop every wakep forever. Worker
  /// w's thread.
  void notesleep(Worker& w) {
    hook(Window::kBeforeSleep);
    std::unique_lock<Mutex> lock(w.note_mu);
    if (!w.woken && w.spinning.load(std::memory_order_relaxed)) {
      fatal("stopm: a spinning worker goes to sleep (stop spinning first)",
            w.id);
    }
    w.note_cv.wait(lock, [&] { return w.woken; });
    w.woken = false;
  }

  /// True once shutdown has begun. Any thread.
  bool stopping() const { return stopping_.load(std::memory_order_acquire); }

  /// nmspinning itself (Go's sched.nmspinning), for the three functions
  /// above. Every access is seq_cst (see the essay).
  Atomic<int> nmspinning_{0};

  // ---- Provided: the machinery --------------------------------------------

  // The worker's loop (Go's mstart + schedule): find a task, stop spinning
  // if it was spinning, run it. An exception from a worker (a function not
  // written yet) is fatal: there is nobody to report it to.
  void mstart(Worker* w) {
    current() = w;
    try {
      for (;;) {
        Task t = find_runnable(*w);
        if (!t) break;  // stopping
        if (w->spinning.load(std::memory_order_relaxed)) resetspinning(*w);
        t();
      }
    } catch (const std::exception& e) {
      static std::mutex first;  // one report, not one per worker
      first.lock();             // held until the process ends
      std::fprintf(stderr, "worker %d: %s\n", w->id, e.what());
      std::fflush(stderr);
      std::abort();
    }
    if (w->spinning.load(std::memory_order_relaxed)) {  // woken, then stopped
      w->spinning.store(false, std::memory_order_relaxed);
      nmspinning_.fetch_sub(1, std::memory_order_seq_cst);
    }
    current() = nullptr;
  }

  // Posts w's note; w.note_mu held.
  static void post(Worker& w) {
    if (w.woken) {
      fatal(
          "notewakeup: double wake-up (a worker that pidleremove could not "
          "take back must notesleep to receive its wake-up)",
          w.id);
    }
    w.woken = true;
  }
  static void notewakeup(Worker& w) {
    {
      std::lock_guard<Mutex> lock(w.note_mu);
      post(w);
    }
    w.note_cv.notify_one();
  }

  void hook(Window where) {
    if (!hooks_.at) return;
    Worker* self = current();
    hooks_.at(where, self != nullptr && self->pool == this ? self->id : -1);
  }

  static Worker*& current() {
    static thread_local Worker* w = nullptr;  // the worker this thread is
    return w;
  }

  const Hooks hooks_;
  // Immutable after the constructor.
  std::vector<std::unique_ptr<Worker>> workers_;
  TaskQueue grq_;  // the global queue (Go's sched.runq); thread-safe

  Mutex idle_mu_;               // the idle list's lock (Go: sched.lock)
  std::vector<Worker*> idle_;   // guarded by idle_mu_ (Go's sched.pidle)
  Atomic<int> npidle_{0};       // written under idle_mu_, read without it
  Atomic<bool> stopping_{false};      // set once, under idle_mu_
  Atomic<std::uint64_t> wakeups_{0};  // statistics only
};

}  // namespace gmp::exercises::spinning
