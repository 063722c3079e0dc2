// Stage 3: the life of a run (start, exit when main returns, stop), stats.
#include "stage3_gmp/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"
#include "common/errors.h"
#include "common/exit.h"
#include "stage2_global_queue/switch.h"
#include "stage2_global_queue/tls.h"

namespace gmp::stage3 {

using Clock = std::chrono::steady_clock;

Runtime::Runtime(Config config)
    : config_(config.resolve(std::getenv("GOMAXPROCS"),
                             std::getenv("GMP_DEBUG"),
                             std::getenv("GMP_TRACE"))),
      debug_(parse_debug(*config_.debug, "GMP_DEBUG")),
      stacks_(config_.stack_size) {
  // Never reallocated: an M without a P (not stopped by stop-the-world)
  // may read allp_ while procresize adds Ps.
  allp_.reserve(kMaxProcs);
}

Runtime::~Runtime() {
  fatal_if_running("stage3::Runtime");
  std::lock_guard lk(sched_);
  std::lock_guard gl(allglock_);
  for (auto& g : allgs_) {  // all dead by now, and stackless
    stage2::destroy_fiber(g.get());
  }
  for (auto& pp : allp_) pp->stackcache.flush(stacks_);
}

void Runtime::fatal_if_running(const char* name) const {
  std::lock_guard lk(sched_);
  if (running_) fatal(std::string(name) + " destroyed while its run() is running");
}

std::string Runtime::dump_goroutines(const G* first) const {
  if (first != nullptr && first->runtime != this) first = nullptr;
  std::vector<const G*> gs;
  {
    std::lock_guard gl(allglock_);
    for (const auto& g : allgs_) gs.push_back(g.get());
  }
  return stage2::goroutine_dump(std::move(gs), first, &read_last_p);
}

Stats Runtime::stats() const {
  std::lock_guard lk(sched_);
  Stats s = stats_;
  s.goroutines_created = created_.load(std::memory_order_relaxed);
  s.goroutines_finished = finished_.load(std::memory_order_relaxed);
  s.goroutines_exited = exited_.load(std::memory_order_relaxed);
  s.goroutines_never_started = never_started_.load(std::memory_order_relaxed);
  s.preemptions = preemptions_.load(std::memory_order_relaxed);
  s.goroutines_blocked = nblocked_.load(std::memory_order_relaxed);
  s.stacks_mapped = stacks_.stacks_mapped();
  s.max_live = max_live_.load(std::memory_order_relaxed);
  s.sched_lock = sched_.counters();
  for (const auto& pp : allp_) {
    const PCounters& c = pp->counters;
    auto get = [](const std::atomic<std::uint64_t>& v) {
      return v.load(std::memory_order_relaxed);
    };
    s.steal_attempts += get(c.steal_attempts);
    s.steals += get(c.steals);
    s.stolen += get(c.stolen);
    s.grq_takes += get(c.grq_takes);
    s.grq_goroutines += get(c.grq_goroutines);
    s.runnext_hits += get(c.runnext_hits);
    s.context_switches += get(c.context_switches);
    s.timers_run += get(c.timers_run);
    s.timers_stolen += get(c.timers_stolen);
    s.gs_reused += get(c.gs_reused);
    s.stack_refills += get(c.stack_refills);
    std::lock_guard tl(pp->timers_lock);  // lock order: sched_, then it
    const LockCounters& lc = pp->timers_lock.counters();
    s.timers_lock.acquisitions += lc.acquisitions;
    s.timers_lock.contended += lc.contended;
    s.timers_lock.wait_ns += lc.wait_ns;
  }
  for (const auto& m : allm_) {  // Ms of a run still going
    s.spinning_ns += m->spinning_ns.load(std::memory_order_relaxed);
    s.parks += m->parks.load(std::memory_order_relaxed);
  }
  return s;
}

void Runtime::run(std::function<void()> main) {
  if (stage2::getm_core() != nullptr) {
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
    main_done_ = false;
    stats_ = Stats{};
    sched_.reset_counters();
    mcount_ = 0;
    for (auto& pp : allp_) {
      pp->counters.reset();
      std::lock_guard tl(pp->timers_lock);
      pp->timers_lock.reset_counters();
      pp->goidcache = pp->goidcacheend = 0;  // ids restart from 1
    }
    pidle_ = nullptr;  // rebuilt below, with every P of this run
    npidle_.store(0);
    exiting_.store(false);
    stopping_.store(false);
    live_.store(0);
    max_live_.store(0);
    nblocked_.store(0);
    created_ = finished_ = exited_ = never_started_ = 0;
    preemptions_ = 0;
    goidgen_.store(0);
    all_dead_.clear();
    main_returned_.clear();
    procresize(nullptr, *config_.procs);  // every P starts idle
    for (int i = *config_.procs - 1; i >= 0; --i) pidleput(allp_[i].get());
    started_at_ = Clock::now();
    reset_run_state();
  }
  stage2::SigquitDump sigquit(stage_name(), [this] { return dump_goroutines(); });
  trace_.start(*config_.trace);
  try {
    start_watchers();
    const std::type_info* type = function_type(main);
    newproc(std::move(main), /*m=*/nullptr, type);  // goroutine 1, on the GRQ
  } catch (...) {  // no watcher thread, or no stack for main: nothing ran
    stop_watchers();
    end_run();
    throw;
  }
  if (debug_.schedtrace_ms > 0) {
    schedtrace_stop_.clear();
    schedtrace_thread_ = std::thread(&Runtime::schedtrace_loop, this);
  }
  startm(nullptr, /*spinning=*/false);  // the first M takes main
  main_returned_.sleep();  // goroutine 1 is telling the others to end
  // One still running a grace after the last one ended never calls into
  // the runtime (it also holds up exit_after_main's stop of the world): the
  // program ends, as Go's does (common/exit.h).
  await_the_rest([this](auto grace) { return all_dead_.tsleep(grace); },
                 [this] { return live_.load(std::memory_order_relaxed); });
  stop_ms();
  stop_watchers();
  end_run();
}

void Runtime::end_run() noexcept {
  trace_.finish(trace_info());
  std::lock_guard lk(sched_);
  clear_timers();  // set by goroutines as they unwound: never to fire
  running_ = false;
}

trace::RunInfo Runtime::trace_info() const {
  return {.stage = stage_name(), .procs = *config_.procs};
}

void Runtime::stop_ms() noexcept {
  {
    std::lock_guard lk(sched_);
    stopping_.store(true, std::memory_order_release);
    while (M* m = mget()) wake_m(m);
  }
  // No M can be made any more: startm checks stopping_ under sched_, and
  // newm makes its thread under it too, or asks the template thread, which
  // makes what it was asked before it ends.
  template_thread_.stop();
  for (auto& m : allm_) {
    if (m->thread.joinable()) m->thread.join();
  }
  if (schedtrace_thread_.joinable()) {
    schedtrace_stop_.wakeup();
    schedtrace_thread_.join();
  }
  std::lock_guard lk(sched_);
  for (auto& m : allm_) {  // keep the Ms' counters past their end
    stats_.spinning_ns += m->spinning_ns.load(std::memory_order_relaxed);
    stats_.parks += m->parks.load(std::memory_order_relaxed);
    if (m->p != nullptr) pidleput(releasep(m.get()));
  }
  allm_.clear();
  GMP_CHECK(nmspinning_.load() == 0, "a spinning M outlived its run");
}

void Runtime::exit_after_main() {
  M* m = stop_the_world(/*exiting=*/true);
  std::vector<Sudog<G*>*> cancelled;
  {
    // sched_ too: main_done_ is under it, and clear_timers wants it.
    std::lock_guard lk(sched_);
    std::lock_guard gl(allglock_);
    main_done_ = true;
    cancelled = stage2::cancel_parked(allgs_);  // stage 2's first step
    clear_timers();  // sleepers cancelled; no timer fires after main
  }
  for (Sudog<G*>* s : cancelled) unlink_cancelled(*s);  // before any wakes
  for (Sudog<G*>* s : cancelled) ready(s->g, m->p);     // they throw Goexit
  start_the_world(m, 0);
}

void Runtime::schedtrace_loop() {
  auto period = std::chrono::milliseconds(debug_.schedtrace_ms);
  while (!schedtrace_stop_.tsleep(period)) {
    std::string text = schedtrace(debug_.scheddetail);
    std::fputs(text.c_str(), stderr);
  }
}

}  // namespace gmp::stage3
