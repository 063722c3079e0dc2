// Exercise 01, reference solution: stage 1's pool (newproc, the worker
// loop, execute) with a graceful shutdown and a starvation detector.
#include "exercises/01_pool_shutdown/pool.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace gmp::exercises::pool {

ThreadPool::ThreadPool(int workers, const Clock& clock) : clock_(clock) {
  if (workers < 1) {
    throw std::invalid_argument(
        "ThreadPool: workers = " + std::to_string(workers) +
        " is invalid: a pool needs at least 1 worker thread");
  }
  workers_.reserve(static_cast<std::size_t>(workers));
  try {
    for (int i = 0; i < workers; ++i) {
      workers_.emplace_back(&ThreadPool::worker_loop, this);
    }
  } catch (...) {  // std::system_error: the system refused a thread
    // No destructor runs for a constructor that throws: stop and join the
    // workers that did start here, or their threads would outlive *this.
    shutdown();
    throw;
  }
}

// Go's newproc, for a pool: queue the task, wake one idle worker.
bool ThreadPool::submit(std::function<void()> task) {
  {
    std::lock_guard lk(mu_);
    // Checked under mu_, the lock shutdown() sets the flag under: a task
    // is either queued before the flag (and the drain runs it) or refused.
    if (shutdown_) return false;  // `task` dies on return, mu_ released
    // Stamped under mu_: the queue stays in order of its stamps, which
    // starving() relies on (the clock never goes back).
    queue_.push_back(Task{std::move(task), clock_.now()});
  }
  work_cv_.notify_one();  // the owner cannot destroy *this during our call
  return true;
}

void ThreadPool::shutdown() {
  {
    std::lock_guard lk(mu_);
    shutdown_ = true;
  }
  // Every idle worker must see the flag, or it would sleep forever.
  work_cv_.notify_all();
  // Joined threads are no longer joinable: a second call joins nothing.
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
}

std::size_t ThreadPool::queued() const {
  std::lock_guard lk(mu_);
  return queue_.size();
}

std::size_t ThreadPool::starving(std::chrono::nanoseconds threshold) const {
  std::lock_guard lk(mu_);
  const std::chrono::nanoseconds now = clock_.now();
  std::size_t n = 0;
  // Oldest first: once one task has not waited longer than threshold,
  // none behind it has either.
  for (const Task& t : queue_) {
    if (now - t.enqueued <= threshold) break;
    ++n;
  }
  return n;
}

std::size_t ThreadPool::failed() const {
  std::lock_guard lk(mu_);
  return failed_;
}

void ThreadPool::worker_loop() {
  std::unique_lock lk(mu_);
  for (;;) {
    work_cv_.wait(lk, [this] { return !queue_.empty() || shutdown_; });
    // Shut down and drained: no task can be accepted any more, so none
    // can arrive after we leave.
    if (queue_.empty()) return;
    Task task = std::move(queue_.front());
    queue_.pop_front();
    lk.unlock();  // a task may block, and may call submit() itself
    execute(std::move(task));
    lk.lock();
  }
}

void ThreadPool::execute(Task task) {
  bool ok = false;
  try {
    task.fn();
    ok = true;
  } catch (...) {
    // Anything a task throws ends that task, never its worker.
  }
  task.fn = nullptr;  // the closure's destructors run without mu_ held
  if (!ok) {
    std::lock_guard lk(mu_);
    ++failed_;
  }
}

}  // namespace gmp::exercises::pool
