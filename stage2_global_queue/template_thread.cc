// The template thread (template_thread.h).
#include "stage2_global_queue/template_thread.h"

#include <string>
#include <system_error>
#include <utility>

#include "common/check.h"

namespace gmp::stage2 {

void TemplateThread::start() {
  std::lock_guard lk(mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  try {
    thread_ = std::thread(&TemplateThread::loop, this);
  } catch (const std::system_error& e) {
    fatal(std::string("LockOSThread: cannot create the template thread: ") +
          e.what() + " (raise ulimit -u or kernel.threads-max)");
  }
}

bool TemplateThread::started() {
  std::lock_guard lk(mu_);
  return thread_.joinable();
}

void TemplateThread::run(std::function<void()> job) {
  std::lock_guard lk(mu_);
  GMP_CHECK(thread_.joinable(), "TemplateThread::run before start");
  jobs_.push_back(std::move(job));
  cv_.notify_one();
}

void TemplateThread::loop() {
  std::unique_lock lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopped, nothing left to do
    std::vector<std::function<void()>> jobs;
    jobs.swap(jobs_);
    lk.unlock();
    for (auto& job : jobs) job();
    lk.lock();
  }
}

void TemplateThread::stop() noexcept {
  {
    std::lock_guard lk(mu_);
    if (!thread_.joinable()) return;
    stop_ = true;
    cv_.notify_one();
  }
  thread_.join();
}

}  // namespace gmp::stage2
