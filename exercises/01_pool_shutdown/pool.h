// Exercise 01: stage 1's thread pool, with a graceful shutdown and a
// starvation detector.
//
// The interface and the fields are given; write the functions in pool.cc.
// See README.md for the statement.
//
// A fixed pool of OS threads (workers) takes tasks from one FIFO queue and
// runs each to its end. That is stage 1's whole scheduler, and its flaw: a
// task that blocks keeps its worker, so when every worker holds a blocked
// task the queued tasks wait ("starve") however urgent they are. starving()
// makes that visible: it counts the tasks that have waited in the queue
// longer than a threshold, on a clock the caller injects (tests use a
// manual clock, so the count does not depend on how fast the machine is).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gmp::exercises::pool {

/// A source of time for the pool's starvation detector. now() must be safe
/// to call from any thread and must never go back.
class Clock {
 public:
  virtual ~Clock() = default;
  /// The current time, from an arbitrary fixed origin.
  virtual std::chrono::nanoseconds now() const = 0;
};

/// Given: the clock of a real program (std::chrono::steady_clock).
class SteadyClock final : public Clock {
 public:
  std::chrono::nanoseconds now() const override {
    return std::chrono::steady_clock::now().time_since_epoch();
  }
};

/// A fixed number of worker threads running submitted tasks, oldest first.
///
/// Thread safety: submit(), queued(), starving() and failed() may be called
/// by any thread, tasks included. The constructor, shutdown() and the
/// destructor belong to the pool's owner: one thread at a time, never a
/// worker (shutdown() from a task would wait for itself).
class ThreadPool {
 public:
  /// Starts `workers` worker threads that wait for tasks. `clock` stamps
  /// each task as it is queued; it must outlive the pool.
  ///
  /// Errors: std::invalid_argument if workers < 1, with a message naming
  /// the value given (e.g. "ThreadPool: workers = 0 is invalid: ...").
  /// std::system_error if the system refuses a thread; the workers already
  /// started are then shut down, so nothing is left running.
  ThreadPool(int workers, const Clock& clock);

  /// Shuts the pool down (see shutdown()): every task it accepted runs
  /// before the pool is gone.
  ~ThreadPool() { shutdown(); }

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Queues `task` to run on a free worker (Go's newproc, for a pool).
  /// Returns true if the task was accepted: it will run exactly once, even
  /// if shutdown() begins meanwhile. Returns false, without running the
  /// task, once shutdown() has begun: the caller learns that the task was
  /// refused (nothing is dropped silently). Any thread, tasks included.
  /// A task that throws counts as failed (see failed()); so does an empty
  /// std::function, which throws std::bad_function_call when called.
  bool submit(std::function<void()> task);

  /// Graceful shutdown: from the moment it begins, submit() refuses new
  /// tasks; every task accepted before still runs (the queue drains, tasks
  /// running now finish); then the worker threads are joined. Returns
  /// once they are. A second call does nothing. Owner only (not a task).
  void shutdown();

  /// Tasks accepted but not started yet. Any thread; a snapshot.
  std::size_t queued() const;

  /// How many queued (not yet started) tasks have waited longer than
  /// `threshold`: clock.now() - (the time submit() accepted them) >
  /// threshold. A task stops waiting when a worker takes it. Any thread;
  /// a snapshot.
  std::size_t starving(std::chrono::nanoseconds threshold) const;

  /// Tasks that ended by throwing (anything, not only std::exception). A
  /// throwing task does not end its worker: the worker goes on with the
  /// next task. Any thread; a snapshot.
  std::size_t failed() const;

 private:
  /// A queued task and when submit() accepted it.
  struct Task {
    std::function<void()> fn;           ///< what to run
    std::chrono::nanoseconds enqueued;  ///< clock_.now() at acceptance
  };

  /// The loop of one worker thread (Go's schedule loop, minus everything
  /// clever): wait for a task or for shutdown; take the oldest task and
  /// execute it; return once shutdown() has begun and the queue is empty.
  void worker_loop();

  /// Runs `task` on the calling worker, mu_ not held; counts it in failed_
  /// if it throws.
  void execute(Task task);

  const Clock& clock_;  // immutable; thread-safe itself

  // The worker threads: started by the constructor, joined by shutdown().
  // Owner thread only.
  std::vector<std::thread> workers_;

  // Everything below is protected by mu_.
  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // idle workers wait for queue_/shutdown_
  std::deque<Task> queue_;           // accepted, not started; oldest first
  bool shutdown_ = false;            // set once, by shutdown(); never cleared
  std::size_t failed_ = 0;           // tasks that ended by throwing
};

}  // namespace gmp::exercises::pool
