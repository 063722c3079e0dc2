// Stage 2: the life of a run (start, exit when main returns, stop).
#include "stage2_global_queue/runtime.h"

#include <cstdlib>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/errors.h"
#include "common/exit.h"
#include "stage2_global_queue/switch.h"
#include "stage2_global_queue/tls.h"

namespace gmp::stage2 {

Runtime::Runtime(Config config)
    : config_(config.resolve(std::getenv("GMP_TRACE"))),
      stacks_(config_.stack_size) {}

Runtime::~Runtime() {
  std::lock_guard lk(sched_);
  if (running_) fatal("stage2::Runtime destroyed while its run() is running");
  for (auto& g : allgs_) {  // all dead by now
    destroy_fiber(g.get());
    stacks_.free(g->stack);
  }
}

std::string Runtime::dump_goroutines(const G* first) const {
  std::vector<const G*> gs;
  {
    std::lock_guard lk(sched_);
    for (const auto& g : allgs_) gs.push_back(g.get());
  }
  return goroutine_dump(std::move(gs), first);
}

Stats Runtime::stats() const {
  std::lock_guard lk(sched_);
  Stats s = stats_;
  s.goroutines_blocked = nblocked_;
  s.stacks_mapped = stacks_.stacks_mapped();
  s.sched_lock = sched_.counters();
  return s;
}

void Runtime::run(std::function<void()> main) {
  if (getm() != nullptr) {
    throw UsageError(
        "Runtime::run called from inside a goroutine: run() blocks its "
        "caller until main returns; start more goroutines with go() instead");
  }
  if (!main) throw UsageError("Runtime::run called with an empty function");
  {
    std::lock_guard lk(sched_);
    if (running_) {
      throw UsageError("Runtime::run called while this runtime is running");
    }
    running_ = true;
    main_done_ = stopping_ = false;
    exiting_.store(false, std::memory_order_relaxed);
    stats_ = Stats{};
    sched_.reset_counters();
    goidgen_ = 0;
    all_dead_.clear();
    main_returned_.clear();
  }
  SigquitDump sigquit("stage2", [this] { return dump_goroutines(); });
  trace_.start(*config_.trace);
  try {
    start_ms();  // throws, with the Ms it started stopped again, on failure
  } catch (...) {
    end_run();
    throw;
  }
  try {
    const std::type_info* type = function_type(main);
    newproc(std::move(main), /*m=*/nullptr, type);  // goroutine 1, from run()
  } catch (...) {  // no stack for main: nothing ran
    stop_ms();
    end_run();
    throw;
  }
  main_returned_.sleep();  // exit_after_main has told the others to end
  // One still running a grace after the last one ended never calls into
  // the runtime: the program ends, as Go's does (common/exit.h).
  await_the_rest([this](auto grace) { return all_dead_.tsleep(grace); },
                 [this] {
                   std::lock_guard lk(sched_);
                   return live_;
                 });
  stop_ms();
  end_run();
}

// The last step of a run, on run()'s thread, once every M is joined. The
// trace is written before running_ is cleared: a run() that another thread
// starts as soon as it is clear must not find this run's session open.
void Runtime::end_run() noexcept {
  trace_.finish({.stage = "stage2", .procs = config_.procs});
  std::lock_guard lk(sched_);
  timers_.clear();  // set by goroutines as they unwound: never to fire
  running_ = false;
}

void Runtime::start_ms() {
  {
    std::lock_guard lk(sched_);
    mcount_ = config_.procs;
    nmidlelocked_ = 0;
  }
  ms_.reserve(static_cast<std::size_t>(config_.procs));
  for (int i = 0; i < config_.procs; ++i) {
    ms_.push_back(std::make_unique<M>(this, i));
  }
  for (int i = 0; i < config_.procs; ++i) {
    try {
      ms_[i]->thread = std::thread(&Runtime::mstart, this, ms_[i].get());
    } catch (const std::system_error& e) {
      stop_ms();
      throw std::system_error(
          e.code(), "stage2: could not start M " + std::to_string(i + 1) +
                        " of " + std::to_string(config_.procs) +
                        "; nothing was run. Lower Config.procs or raise the "
                        "thread limits (ulimit -u, kernel.threads-max)");
    } catch (...) {
      stop_ms();
      throw;
    }
    std::lock_guard lk(sched_);
    ++stats_.threads_created;
  }
}

// Every goroutine is dead (or none started): the Ms leave their loops.
void Runtime::stop_ms() noexcept {
  {
    std::lock_guard lk(sched_);
    stopping_ = true;
    while (M* m = mget()) m->park.wakeup();
  }
  // No M is made from now on (newm checks stopping_); the template
  // thread makes what it was asked before it ends.
  template_thread_.stop();
  for (auto& m : ms_) {
    if (m->thread.joinable()) m->thread.join();
  }
  ms_.clear();
}

// Protocol 4, on goroutine 1 right after main returned: no goroutine may
// start or keep waiting. Unstarted goroutines are dropped; parked ones are
// cancelled, unlinked from their queues (all before any is woken: see
// common/sudog.h), and readied to unwind.
void Runtime::exit_after_main() {
  std::vector<G*> never_started;
  std::vector<Sudog<G*>*> cancelled;
  {
    std::lock_guard lk(sched_);
    main_done_ = true;
    exiting_.store(true, std::memory_order_relaxed);
    G* runnable = grq_head_;  // keep started ones: they must unwind
    grq_head_ = grq_tail_ = nullptr;
    grq_size_ = 0;
    while (G* gp = runnable) {
      runnable = gp->schedlink;
      if (gp->started) {
        globrunqput(gp);
      } else {
        never_started.push_back(gp);
      }
    }
    stats_.goroutines_never_started = never_started.size();
    cancelled = cancel_parked(allgs_);
    timers_.clear();  // sleepers cancelled; no timer fires after main
  }
  for (Sudog<G*>* s : cancelled) unlink_cancelled(*s);
  for (G* gp : never_started) gp->fn = nullptr;  // destroyed, never run
  std::lock_guard lk(sched_);
  for (G* gp : never_started) {
    if (trace::Buffer* t = getm()->trace) [[unlikely]] {
      t->go_stop(gp->goid, trace::StopReason::kNeverStarted, WaitReason::kNone);
    }
    casgstatus(gp, GStatus::kRunnable, GStatus::kDead);
    gfput(gp);
    --live_;
  }
  for (Sudog<G*>* s : cancelled) ready(s->g);  // they throw Goexit
  main_returned_.wakeup();
}

}  // namespace gmp::stage2
