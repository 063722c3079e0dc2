/// \file
/// TemplateThread: a clean thread that makes the runtime's threads on
/// behalf of locked ones (Go's templateThread and newmHandoff, proc.go).
///
/// ```unparsed
/// A goroutine locked to its thread (lock_os_thread) may change what the
/// kernel keeps per thread: its working directory after unshare(CLONE_FS),
/// its namespaces, its signal mask. A thread made by that thread would
/// inherit all of it, so a runtime never makes an M from a locked M's
/// thread: it asks the template thread, started by the run's first
/// lock_os_thread from a thread nothing has changed yet, to make it.
/// Shared by stages 2-5 (each stage says what a job is: a new M's thread).
/// ```
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gmp::stage2 {

/// One template thread, started at most once per run. Thread-safe.
class TemplateThread {
 public:
  TemplateThread() = default;
  TemplateThread(const TemplateThread&) = delete;
  TemplateThread& operator=(const TemplateThread&) = delete;
  /// Stops it (stop()).
  ~TemplateThread() { stop(); }

  /// Starts the thread unless it runs already (Go's startTemplateThread).
  /// Call it from a thread whose state may be cloned: before a goroutine
  /// locks its thread. Fatal if no thread can be made, as Go's newm.
  void start();

  /// Whether start() was called since the last stop().
  bool started();

  /// `job` runs on the template thread, after the jobs asked before it.
  /// Only after start().
  void run(std::function<void()> job);

  /// Runs every job asked so far, then ends and joins the thread. The
  /// caller's (run()'s) thread; a no-op if not started.
  void stop() noexcept;

 private:
  void loop();  // the thread's: jobs in order, until stop_ with none left

  std::mutex mu_;  // protects the three below; taken after any runtime lock
  std::condition_variable cv_;  // a job, or the stop
  std::vector<std::function<void()>> jobs_;
  bool stop_ = false;
  std::thread thread_;  // joinable while started
};

}  // namespace gmp::stage2
