// Stage 1: the pool, its queue, the life of a run and its timers
// (protocols 1, 2, 4 and 6).
#include "stage1_threadpool/runtime.h"

#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/errors.h"
#include "common/exit.h"
#include "stage1_threadpool/faults.h"
#include "stage1_threadpool/tls.h"
#include "stage1_threadpool/worker.h"

namespace gmp::stage1 {

thread_local Worker* tls_worker = nullptr;

namespace {
// The runtime whose timer thread is the calling thread (go_from_timer).
thread_local Runtime* tls_timer_rt = nullptr;
}  // namespace

Runtime::Runtime(Config config) : config_((config.validate(), config)) {}

Runtime::~Runtime() {
  std::lock_guard lk(mu_);
  if (state_ != State::kStopped) {
    fatal("stage1::Runtime destroyed while its run() is running");
  }
}

Stats Runtime::stats() const {
  std::lock_guard lk(mu_);
  Stats s = stats_;
  s.goroutines_blocked = nblocked_;
  return s;
}

void Runtime::run(std::function<void()> main) {
  if (tls_worker != nullptr) {
    throw UsageError(
        "Runtime::run called from inside a goroutine: run() blocks its "
        "caller until main returns; start more goroutines with go() instead");
  }
  if (!main) throw UsageError("Runtime::run called with an empty function");
  {
    std::lock_guard lk(mu_);
    if (state_ != State::kStopped) {
      throw UsageError("Runtime::run called while this runtime is running");
    }
    state_ = State::kStarting;
    stats_ = Stats{};
    next_goid_ = 1;
    main_done_ = false;
    exiting_.store(false, std::memory_order_relaxed);
  }
  start_workers();  // throws, with the runtime stopped again, on failure
  {
    std::unique_lock lk(mu_);
    queue_.push_back(Task{next_goid_++, std::move(main)});
    stats_.goroutines_created = 1;
    stats_.max_queue_len = 1;
    state_ = State::kRunning;
    work_cv_.notify_one();
    // exit_after_main() ends the other goroutines; then every worker idles.
    // One still running a grace after the last one ended never calls into
    // the runtime: the program ends, as Go's does (common/exit.h).
    done_cv_.wait(lk, [this] { return main_done_; });
    await_the_rest(
        [&](std::chrono::milliseconds grace) {
          return done_cv_.wait_for(lk, grace,
                                   [this] { return nidle_ == config_.procs; });
        },
        [this] { return config_.procs - nidle_; });  // mu_ held
    GMP_CHECK(nblocked_ == 0 && queue_.empty(), "goroutines left at exit");
  }
  stop_workers();
}

// Protocol 4, on the worker that ran main, right after main returned (still
// as goroutine 1, with mu_ held): no goroutine may start or keep waiting.
void Runtime::exit_after_main(std::unique_lock<std::mutex>& lk) {
  state_ = State::kExiting;  // from now on go() drops, park() cancels
  exiting_.store(true, std::memory_order_relaxed);  // and yield() ends
  main_done_ = true;
  timers_.clear();  // no timer fires after main (protocol 6)
  std::deque<Task> never_started;
  never_started.swap(queue_);
  stats_.goroutines_never_started = never_started.size();
  std::vector<std::pair<Worker*, Sudog<Worker*>*>> cancelled;
  for (auto& w : workers_) {
    if (w->parked != nullptr && w->parked->try_cancel()) {
      cancelled.emplace_back(w.get(), w->parked);
    }
  }
  lk.unlock();
  // Unlink every cancelled sudog before waking any (see common/sudog.h):
  // an unwinding goroutine may destroy what another one was waiting on.
  for (auto& [w, s] : cancelled) unlink_cancelled(*s);
  never_started.clear();  // their closures die on a goroutine, unrun
  lk.lock();
  for (auto& [w, s] : cancelled) {
    if (w->wait_reason != WaitReason::kSleep) --nblocked_;
    w->note.wakeup();  // it throws Goexit and unwinds
  }
  done_cv_.notify_all();
}

void Runtime::start_workers() {
  workers_.reserve(static_cast<size_t>(config_.procs));
  for (int i = 0; i < config_.procs; ++i) {
    workers_.push_back(std::make_unique<Worker>(this, i));
  }
  for (int i = 0; i < config_.procs; ++i) {
    try {
      workers_[i]->thread = std::thread(&Runtime::worker_loop, this,
                                        workers_[i].get());
    } catch (const std::system_error& e) {  // the system refused a thread
      stop_workers();
      throw std::system_error(
          e.code(),
          "stage1: could not start worker thread " + std::to_string(i + 1) +
              " of " + std::to_string(config_.procs) +
              "; nothing was run. Every proc is an OS thread: lower "
              "Config.procs or raise the limits (ulimit -u, "
              "/proc/sys/kernel/threads-max, /proc/sys/vm/max_map_count, "
              "ulimit -v)");
    } catch (...) {  // std::bad_alloc
      stop_workers();
      throw;
    }
    std::lock_guard lk(mu_);
    ++stats_.threads_created;
  }
}

// Ends the worker loops (the queue is empty), joins the threads that were
// started, and leaves the runtime stopped. run()'s thread only.
void Runtime::stop_workers() noexcept {
  std::thread timer_thread;
  {
    std::lock_guard lk(mu_);
    state_ = State::kStopping;
    work_cv_.notify_all();
    timer_cv_.notify_all();
    timer_thread = std::move(timer_thread_);
    timers_.clear();  // set by goroutines as they unwound: never to fire
  }
  join_workers();
  if (timer_thread.joinable()) timer_thread.join();
  std::lock_guard lk(mu_);
  state_ = State::kStopped;
}

void Runtime::join_workers() noexcept {
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
  workers_.clear();
}

//! [worker_loop]
// Protocol 2: the whole scheduler of stage 1.
void Runtime::worker_loop(Worker* w) {
  tls_worker = w;
  WorkerFaultReports faults(w);  // a goroutine's fault reads as in Go
  std::unique_lock lk(mu_);
  for (;;) {
    while (queue_.empty() && state_ != State::kStopping) {
      ++nidle_;
      checkdead();
      if (state_ == State::kExiting) done_cv_.notify_all();
      work_cv_.wait(lk);
      --nidle_;
    }
    if (queue_.empty()) break;  // kStopping
    Task task = std::move(queue_.front());
    queue_.pop_front();
    w->goid = task.goid;
    lk.unlock();
    execute(std::move(task));
    lk.lock();
    if (w->goid == 1) exit_after_main(lk);
    w->goid = 0;
  }
  tls_worker = nullptr;
}
//! [worker_loop]

// Runs one goroutine to its end on the calling worker; mu_ is not held.
void Runtime::execute(Task task) {
  bool finished = false;
  try {
    task.fn();
    finished = true;
  } catch (const Goexit&) {
    // ended by the runtime at exit (or by a goroutine's own Goexit)
  } catch (...) {
    die_of_panic(task.goid, std::current_exception());
  }
  task.fn = nullptr;  // its destructors run while it is still a goroutine
  std::lock_guard lk(mu_);
  ++(finished ? stats_.goroutines_finished : stats_.goroutines_exited);
}

//! [newproc]
// Protocol 1 (Go's newproc).
void Runtime::newproc(GoFunc fn) {
  std::unique_lock lk(mu_);
  if (state_ == State::kExiting) {
    lk.unlock();  // main has returned: never run; destroy fn without mu_
    return;
  }
  queue_.push_back(Task{next_goid_++, std::move(fn)});
  ++stats_.goroutines_created;
  if (queue_.size() > stats_.max_queue_len) {
    stats_.max_queue_len = queue_.size();
  }
  if (nidle_ > 0) work_cv_.notify_one();
}
//! [newproc]

void go(GoFunc fn) {
  Worker* w = Sched::current_g("go");
  if (!fn) throw UsageError("go called with an empty function");
  w->rt->newproc(std::move(fn));
}

int num_goroutine() {
  Runtime* rt = Sched::current_g("num_goroutine")->rt;
  std::lock_guard lk(rt->mu_);
  int n = static_cast<int>(rt->queue_.size());
  for (const auto& w : rt->workers_) n += w->goid != 0 ? 1 : 0;
  return n;
}

void yield() {
  Worker* w = Sched::current_g("yield");
  if (w->rt->exiting()) throw Goexit{};  // main has returned
  std::this_thread::yield();  // the goroutine cannot leave its thread
}

bool Runtime::exiting() const {
  // relaxed: a stale false only delays the Goexit to a later call.
  return exiting_.load(std::memory_order_relaxed);
}

// ---- Protocol 6: timers ----------------------------------------------------

void Runtime::add_timer(RuntimeTimer* t) {
  std::lock_guard lk(mu_);
  if (!timer_thread_.joinable()) {  // the run's first timer
    try {
      timer_thread_ = std::thread(&Runtime::timerproc, this);
    } catch (const std::system_error& e) {
      throw std::system_error(e.code(),
                              "stage1: could not start the timer thread");
    }
  }
  if (timers_.push(t)) timer_cv_.notify_one();  // an earlier wake-up
}

bool Runtime::del_timer(RuntimeTimer* t) {
  std::lock_guard lk(mu_);
  return timers_.remove(t);
}

//! [timerproc]
// Go 1.0's timerproc: sleep until the earliest timer, fire what is due.
void Runtime::timerproc() {
  tls_timer_rt = this;
  std::vector<TimerFiring> fire;
  std::unique_lock lk(mu_);
  while (state_ != State::kStopping) {
    auto now = std::chrono::steady_clock::now();
    timers_.take_all_due(now, fire, [](RuntimeTimer*) {
      fatal("timerproc: a sleeper's timer in stage 1");  // sleeps block
    });
    if (!fire.empty()) {
      timers_firing_ = true;  // checkdead: what they do may wake someone
      lk.unlock();
      for (const TimerFiring& f : fire) f();  // without mu_: they lock
      fire.clear();
      lk.lock();
      timers_firing_ = false;
      checkdead();  // the last timer is gone: was it the last hope?
      continue;
    }
    if (timers_.empty()) {
      timer_cv_.wait(lk);
    } else {
      timer_cv_.wait_until(lk, timers_.earliest());
    }
  }
  tls_timer_rt = nullptr;
}
//! [timerproc]

void Sched::add_timer(RuntimeTimer& t) {
  current_g("time")->rt->add_timer(&t);  // a UsageError on a plain thread
}

bool Sched::del_timer(RuntimeTimer& t) {
  // acquire: see RuntimeTimer::owner. Null: in no heap (fired, stopped,
  // or its run has ended).
  void* owner = t.owner.load(std::memory_order_acquire);
  return owner != nullptr && static_cast<Runtime*>(owner)->del_timer(&t);
}

void Sched::go_from_timer(std::function<void()> fn) {
  tls_timer_rt->newproc(std::move(fn));
}

void sleep_for(std::chrono::nanoseconds d) {
  Worker* w = Sched::current_g("sleep_for");
  if (d <= std::chrono::nanoseconds::zero()) return;  // as Go's time.Sleep
  Sudog<Worker*> s(w, w->goid);
  if (!w->rt->park(w, s, ParkUnlock{}, WaitReason::kSleep, d)) throw Goexit{};
}

}  // namespace gmp::stage1
