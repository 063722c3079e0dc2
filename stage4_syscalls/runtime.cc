// Stage 4: the runtime around stage 3's scheduler, and where the network
// poller joins it (findRunnable's step 4, the idle M on duty, injectglist).
#include "stage4_syscalls/runtime.h"

#include <signal.h>

#include <algorithm>
#include <mutex>
#include <span>
#include <string>
#include <utility>

#include "common/errors.h"

namespace gmp::stage4 {

Config Runtime::checked(Config c) {
  if (c.max_threads < 2 || c.max_threads > kMaxThreadsLimit) {
    throw ConfigError("stage4::Config.max_threads = " +
                      std::to_string(c.max_threads) +
                      " is invalid: it must be between 2 and " +
                      std::to_string(kMaxThreadsLimit));
  }
  return c;
}

Runtime::Runtime(Config config)
    : stage3::Runtime(checked(config)),
      poller_(std::make_shared<Netpoller>()) {
  int procs = *this->config().procs;
  if (config.max_threads < procs) {
    throw ConfigError("stage4::Config.max_threads = " +
                      std::to_string(config.max_threads) +
                      " is invalid: it must be at least GOMAXPROCS (" +
                      std::to_string(procs) + "), one M per P");
  }
  set_max_threads(config.max_threads);
  // Writes to a pipe whose reader is gone must fail with EPIPE, not kill
  // the process: SIGPIPE is ignored unless the program handles it (Go
  // does the same for descriptors other than stdout and stderr).
  struct sigaction old {};
  if (sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, nullptr);
  }
  poller_->attach(this, static_cast<const stage3::Runtime*>(this));
}

void Runtime::first_waiter() {
  if (poll_blocked_.load(std::memory_order_relaxed)) return;  // one polls
  M* self = getm();
  if (self->p->runq.stealer().empty() && grq_empty()) {
    return;  // we go idle after this park, and poll
  }
  // The M on duty, asleep for timers only, wakes to poll as well; with
  // nobody on duty (idle_duty_wanted now counts our waiter), an idle M
  // takes it.
  std::lock_guard lk(sched_);
  wake_duty_m();
}

Runtime::~Runtime() {
  fatal_if_running("stage4::Runtime");
  poller_->attach(nullptr, nullptr);  // Conns may outlive us
}

void Runtime::reset_run_state() {
  for (auto* c : {&syscalls_, &handoffs_, &exit_oldp_, &exit_otherp_,
                  &exit_grq_, &netpoll_blocking_, &netpoll_ready_}) {
    c->store(0, std::memory_order_relaxed);
  }
  polls_at_start_.store(poller_->polls(), std::memory_order_relaxed);
  events_at_start_.store(poller_->events(), std::memory_order_relaxed);
  timeouts_at_start_.store(poller_->timeouts(), std::memory_order_relaxed);
}

Stats Runtime::stats() const {
  Stats s;
  static_cast<stage3::Stats&>(s) = stage3::Runtime::stats();
  auto get = [](const std::atomic<std::uint64_t>& c) {
    return c.load(std::memory_order_relaxed);
  };
  s.syscalls = get(syscalls_);
  s.handoffs = get(handoffs_);
  s.exitsyscall_oldp = get(exit_oldp_);
  s.exitsyscall_otherp = get(exit_otherp_);
  s.exitsyscall_grq = get(exit_grq_);
  s.netpolls = poller_->polls() - polls_at_start_.load(std::memory_order_relaxed);
  s.netpoll_blocking = get(netpoll_blocking_);
  s.netpoll_events =
      poller_->events() - events_at_start_.load(std::memory_order_relaxed);
  s.netpoll_ready = get(netpoll_ready_);
  s.netpoll_timeouts =
      poller_->timeouts() - timeouts_at_start_.load(std::memory_order_relaxed);
  return s;
}

Runtime* Runtime::current() noexcept {
  M* m = getm();
  return m == nullptr ? nullptr : dynamic_cast<Runtime*>(m->rt);
}

// ---- The poller in the scheduler ----------------------------------------------

//! [poll_network]
G* Runtime::poll_network(M* m) {
  if (poller_->waiters() == 0 || poll_blocked_.load(std::memory_order_relaxed)) {
    return nullptr;
  }
  thread_local std::vector<G*> gs;  // this M's (g0 runs on the M's thread)
  netpoll_now(gs);
  if (gs.empty()) return nullptr;
  G* first = gs.front();  // runs now, on this M; the rest are injected
  make_runnable(first);
  injectglist(m, std::span(gs).subspan(1));  // stage 3's (Go's)
  gs.clear();
  return first;
}
//! [poll_network]

void Runtime::netpoll_now(std::vector<G*>& gs) {
  poller_->poll(Clock::time_point::min(), gs);
  netpoll_ready_.fetch_add(gs.size(), std::memory_order_relaxed);
}

bool Runtime::netpoll_overdue(Clock::time_point now,
                              Clock::duration age) const {
  return poller_->waiters() > 0 &&
         !poll_blocked_.load(std::memory_order_relaxed) &&
         now - poller_->last_poll() >= age;
}

void Runtime::ready_list(std::vector<G*>& gs) {
  M* m = getm();
  bool ours = m != nullptr && m->rt == this && m->curg != nullptr;
  // From a goroutine of ours: beside it on its P; from anywhere else (a
  // plain thread closing a Conn, another runtime's goroutine): the GRQ.
  injectglist(ours ? m : nullptr, gs);
  gs.clear();
}

bool Runtime::idle_duty_wanted() const {
  return stage3::Runtime::idle_duty_wanted() || poller_->waiters() > 0;
}

void Runtime::idle_wait(M* m, Clock::time_point until,
                        std::vector<G*>& ready) {
  if (poller_->waiters() == 0) {  // only timers: stage 3's sleep
    stage3::Runtime::idle_wait(m, until, ready);
    return;
  }
  poll_blocked_.store(true, std::memory_order_relaxed);
  netpoll_blocking_.fetch_add(1, std::memory_order_relaxed);
  poller_->poll(until, ready);  // stage 3's stopm queues what it readied
  poll_blocked_.store(false, std::memory_order_relaxed);
  netpoll_ready_.fetch_add(ready.size(), std::memory_order_relaxed);
}

void Runtime::wake_m(M* m) {
  stage3::Runtime::wake_m(m);
  if (m == duty_m()) poller_->interrupt();
}

}  // namespace gmp::stage4
