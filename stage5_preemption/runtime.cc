// Stage 5: the runtime around stage 4's, and sysmon (Go's sysmon, retake).
#include "stage5_preemption/runtime.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <utility>

#include "common/errors.h"
#include "stage2_global_queue/switch.h"
#include "stage2_global_queue/tls.h"
#include "stage5_preemption/user_code.h"

namespace gmp::stage5 {

namespace {
using std::chrono::microseconds;
using std::chrono::milliseconds;
constexpr microseconds kSysmonMinDelay{20};     // Go's sysmon: 20 us ...
constexpr microseconds kSysmonMaxDelay{10000};  // ... doubling to 10 ms
constexpr int kQuietRounds = 50;                // before the doubling starts
constexpr milliseconds kForcePoll{10};          // poll if nobody has for this
constexpr milliseconds kTimerLate{1};  // a timer this late: start an M for it
constexpr int kQuickRetries = 50;  // declined signals retried every 20 us

// A goroutine has kept its P for two slices, asked to yield after the
// first. If no code of the program can be preempted (none built with stage
// 5's rules, preemptible.bzl; or a stripped program), say so, once per process:
// else a program built as a plain cc_binary never preempts a loop and
// never says why. Go preempts any code; the course preempts only code it
// can tell apart from the runtime's and the libraries' (user_code.h).
void warn_if_nothing_preemptible(std::uint64_t goid,
                                 std::chrono::nanoseconds ran) {
  static std::atomic<bool> decided{false};
  if (decided.load(std::memory_order_relaxed)) return;
  user_code::build();  // once per process; at once after the first call
  if (decided.exchange(true, std::memory_order_relaxed) ||
      user_code::function_count() != 0) {
    return;  // said already, or there is preemptible code
  }
  std::fprintf(
      stderr,
      "stage5: goroutine %llu has kept its P for %lld ms although asked to "
      "yield, and no code of this program can be preempted: none of it was "
      "built with stage 5's rules (tools/build/preemptible.bzl: "
      "preemptible_cc_binary, preemptible_cc_library, preemptible_cc_test), "
      "or the program is stripped. Only its calls into the runtime are safe "
      "points; build the code whose loops must yield with those rules.\n",
      static_cast<unsigned long long>(goid),
      static_cast<long long>(
          std::chrono::duration_cast<milliseconds>(ran).count()));
}
}  // namespace

Config Runtime::checked(Config c) {
  if (c.time_slice < microseconds(100) || c.time_slice > std::chrono::seconds(10)) {
    throw ConfigError(
        "stage5::Config.time_slice = " + std::to_string(c.time_slice.count()) +
        " ns is invalid: it must be between 100 us and 10 s");
  }
  if (c.stall_threshold != std::chrono::nanoseconds::zero() &&
      c.stall_threshold < milliseconds(1)) {
    throw ConfigError("stage5::Config.stall_threshold = " +
                      std::to_string(c.stall_threshold.count()) +
                      " ns is invalid: it must be 0 (off) or at least 1 ms");
  }
  if (c.preempt == Preempt::kAsync) {
    if (const char* error = init_async_preempt()) {
      throw ConfigError(std::string("stage5::Config.preempt = kAsync: ") +
                        error);
    }
  }
  return c;
}

Runtime::Runtime(Config config)
    : stage4::Runtime(checked(config)),
      preempt_(config.preempt),
      time_slice_(config.time_slice),
      syscalltick_(new std::atomic<std::uint32_t>[stage3::kMaxProcs]()),
      stall_threshold_(config.stall_threshold),
      stall_sink_(config.stall_sink) {}

// sysmon runs only while a run is under way (start_watchers and stop_watchers
// are within the run), so stage 3's check covers it, and comes before
// sysmon_'s destructor would end the program with std::terminate.
Runtime::~Runtime() { fatal_if_running("stage5::Runtime"); }

void Runtime::reset_run_state() {
  stage4::Runtime::reset_run_state();
  for (auto* c : {&sysmon_wakes_, &sysmon_netpolls_, &sysmon_timer_starts_,
                  &preempt_requests_, &syscalls_fast_, &syscall_retakes_,
                  &async_preemptions_, &preempt_signals_, &async_declined_,
                  &stalls_reported_}) {
    c->store(0, std::memory_order_relaxed);
  }
  tids_.clear();  // under sched_ (reset_run_state's contract)
}

void Runtime::minit(M* m) {
  stage4::Runtime::minit(m);
  int tid = static_cast<int>(::gettid());
  std::lock_guard lk(sched_);
  if (tids_.size() <= static_cast<std::size_t>(m->id)) tids_.resize(m->id + 1, 0);
  tids_[m->id] = tid;
}

void Runtime::start_watchers() {
  ticks_.assign(stage3::kMaxProcs, Tick{});  // no snapshot from a past run
  sysmon_stop_.clear();
  sysmon_ = std::thread(&Runtime::sysmon, this);
}

void Runtime::stop_watchers() noexcept {
  if (!sysmon_.joinable()) return;  // its thread could not be made
  sysmon_stop_.wakeup();
  sysmon_.join();
}

Stats Runtime::stats() const {
  Stats s;
  static_cast<stage4::Stats&>(s) = stage4::Runtime::stats();
  s.sysmon_wakes = sysmon_wakes_.load(std::memory_order_relaxed);
  s.sysmon_netpolls = sysmon_netpolls_.load(std::memory_order_relaxed);
  s.sysmon_timer_starts =
      sysmon_timer_starts_.load(std::memory_order_relaxed);
  s.preempt_requests = preempt_requests_.load(std::memory_order_relaxed);
  s.syscalls_fast = syscalls_fast_.load(std::memory_order_relaxed);
  s.syscall_retakes = syscall_retakes_.load(std::memory_order_relaxed);
  s.async_preemptions = async_preemptions_.load(std::memory_order_relaxed);
  s.preempt_signals = preempt_signals_.load(std::memory_order_relaxed);
  s.async_declined = async_declined_.load(std::memory_order_relaxed);
  s.stalls_reported = stalls_reported_.load(std::memory_order_relaxed);
  return s;
}

// ---- sysmon -----------------------------------------------------------------------

//! [sysmon]
// Go's sysmon: a thread without a P. It sleeps 20 us while it finds
// things to do, and doubles its sleep after 50 quiet rounds, up to 10 ms.
// Three departures from Go: a thing done is a P retaken from a call (Go's
// only one), and also a new preemption request, a poll that found
// goroutines or an M started for timers (the signal of a request often
// lands in the C++ allocator or libc, no safe point, where Go's lands in
// Go code: with Go's rule alone, too few tries reach a loop that
// allocates, and Stage5Test.GcFairness2EveryAllocatingLoopRuns fails
// under AddressSanitizer's allocator); while goroutines run (and
// preemption is on), it sleeps at most one time slice
// (Config::time_slice; the default 10 ms is Go's longest sleep), so that a
// slice shorter than 10 ms is still looked at once per slice; and
// while a preemption signal is due again (the last one found no safe
// point), it sleeps 20 us (50 times, then that slice), so that a goroutine
// that spends most of its time outside safe points (in the allocator, say)
// is still stopped within a few tries. A goroutine is asked to yield after
// its slice and at most two sleeps more: one before sysmon first sees the
// slice, one after the slice has run out.
void Runtime::sysmon() {
  sysmon_trace_ = watcher_trace(trace::kSysmonThread);
  const auto watch = std::max<microseconds>(
      kSysmonMinDelay, std::chrono::duration_cast<microseconds>(time_slice_));
  microseconds delay = kSysmonMinDelay;
  int idle = 0;
  int retries = 0;  // rounds in a row that sent a preemption signal
  bool running = false;
  for (;;) {
    if (idle == 0) {
      delay = kSysmonMinDelay;
    } else if (idle > kQuietRounds) {
      delay = std::min(delay * 2, kSysmonMaxDelay);
    }
    if (running && preempt_ != Preempt::kNone) delay = std::min(delay, watch);
    // The last signals found no safe point (the goroutine was in the C++
    // library, libc, or the runtime): try again in 20 us, for a
    // millisecond's worth of tries, then once a slice. (It also stops at
    // its next safe point unasked.)
    if (signal_ms_.empty()) {
      retries = 0;
    } else if (retries++ < kQuickRetries) {
      delay = kSysmonMinDelay;
    }
    if (sysmon_stop_.tsleep(delay)) return;  // the run is over
    sysmon_wakes_.fetch_add(1, std::memory_order_relaxed);
    Clock::time_point now = Clock::now();
    bool acted = sysmon_netpoll(now);
    acted |= sysmon_timers(now);
    acted |= retake(now, &running);
    if (stall_threshold_.count() > 0) report_stalls(now);
    idle = acted ? 0 : idle + 1;
  }
}
//! [sysmon]

// Poll the network if goroutines wait on it and nobody has polled for
// 10 ms (every M busy): what is ready waits in the GRQ for a P.
bool Runtime::sysmon_netpoll(Clock::time_point now) {
  if (!netpoll_overdue(now, kForcePoll)) return false;  // stage 4's
  std::vector<G*>& gs = sysmon_ready_;
  // The goroutines the poll returns are on no queue until injectglist
  // queues them: meanwhile an M going idle must not call it a deadlock
  // (Go's incidlelocked(-1) around sysmon's injectglist).
  outside_work_begin();
  netpoll_now(gs);  // stage 4's
  sysmon_netpolls_.fetch_add(1, std::memory_order_relaxed);
  const bool found = !gs.empty();
  if (found) {
    if (trace::Buffer* t = sysmon_trace_) [[unlikely]] {
      t->sysmon(trace::SysmonAction::kNetpoll, trace::kNoP,
                static_cast<std::uint32_t>(gs.size()));
    }
    injectglist(nullptr, gs);  // stage 3's: the GRQ, an M per idle P
    gs.clear();
  }
  outside_work_end();
  return found;
}

// Go 1.14's sysmon: timers that should have run (here: 1 ms ago) while no
// idle M is on duty to wake for them, and a P is idle: an M is started on
// it, and runs them in findRunnable (its own P's, or others' in
// steal_work). A backstop: stage 3 already wakes an M for every timer that
// becomes a P's earliest (add_timer's wakep), and the M on duty wakes when
// a P goes idle (pidleput). What it cannot do, preemption does: a due
// timer on a P whose goroutine never reaches a scheduling point fires
// when retake stops that goroutine (ATightLoopIsPreemptedAsynchronously).
bool Runtime::sysmon_timers(Clock::time_point now) {
  {
    std::lock_guard lk(sched_);
    if (duty_m() != nullptr || npidle(std::memory_order_relaxed) == 0 ||
        earliest_timer() > now - kTimerLate) {
      return false;
    }
  }
  if (startm(nullptr, /*spinning=*/false) == nullptr) return false;
  sysmon_timer_starts_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

//! [retake]
// Go's retake: Ps left in system calls go to other Ms (syscall.cc), and a
// P whose schedtick has not moved for a time slice has run one goroutine
// (or one runnext chain) that long: it is asked to yield, or, if that
// goroutine is in a call, its P is taken in that call, seen before or not
// (Go's sysretake: a goroutine making short calls one after another, each
// returning to its P by the fast path, would otherwise keep the goroutines
// queued on that P waiting for as long as no look falls between two of
// its calls; the rule for a P with nothing queued still applies).
bool Runtime::retake(Clock::time_point now, bool* running) {
  std::vector<PView>& ps = sysmon_ps_;  // the Ps of this moment
  {
    std::lock_guard lk(sched_);  // keeps the Ms alive (m_by_id)
    ps.clear();  // keeps its capacity: no allocation per wake
    for (int i = 0; i < nprocs(); ++i) {
      P* pp = allp(i);
      M* m = m_by_id(pp->m_id.load(std::memory_order_relaxed));
      ps.push_back({pp, m != nullptr
                            ? m->curg_goid.load(std::memory_order_relaxed)
                            : 0});
    }
  }
  bool acted = false;
  *running = false;
  signal_ms_.clear();
  for (const auto& [pp, goid] : ps) {
    Tick& t = ticks_[static_cast<std::size_t>(pp->id)];
    // (An if, not a switch: kPSyscall is not one of PStatus's names.)
    PStatus s = pp->status.load(std::memory_order_relaxed);
    if (s == kPSyscall) {
      *running = true;
      acted |= retake_syscall(pp, t, now, slice_ran_out(pp, t, now));
    } else if (s == PStatus::kRunning) {
      *running = true;
      acted |= preempt_long_run(pp, t, goid, now);
    } else {
      t.since = Clock::time_point{};  // idle or stopped: no slice runs
    }
  }
  if (!signal_ms_.empty()) signal_ms();
  return acted;
}
//! [retake]

// Whether pp's schedtick has stayed the same for a time slice since sysmon
// first saw it (Go's pd.schedwhen + forcePreemptNS <= now); a tick not seen
// before starts the count.
bool Runtime::slice_ran_out(P* pp, Tick& t, Clock::time_point now) {
  std::uint32_t tick = pp->schedtick.load(std::memory_order_relaxed);
  if (tick != t.schedtick || t.since == Clock::time_point{}) {
    t.schedtick = tick;  // a new slice began since we last looked
    t.since = now;
    t.stall_reported = false;
    return false;
  }
  return now - t.since >= time_slice_;
}

// The preemption half of retake (Go's preemptone after a 10 ms slice).
// goid: the goroutine pp's M ran at the snapshot, 0 if it was in the
// scheduler (Go's preemptone declines when mp.curg is nil or g0): an M
// firing a long batch of timers in findRunnable keeps pp's slice open
// without running anything a signal could stop (it was signalled every
// round, each signal declined: AnMInItsSchedulerIsNeverAskedToYield).
bool Runtime::preempt_long_run(P* pp, Tick& t, std::uint64_t goid,
                               Clock::time_point now) {
  if (!slice_ran_out(pp, t, now) || preempt_ == Preempt::kNone || goid == 0) {
    return false;
  }
  if (now - t.since >= 2 * time_slice_) [[unlikely]] {
    warn_if_nothing_preemptible(goid, now - t.since);
  }
  bool asked_before = pp->preempt.exchange(true, std::memory_order_relaxed);
  if (preempt_ == Preempt::kAsync) {
    // Go's preemptM: the signal, again on every round while the same slice
    // runs (the last one may have found no safe point).
    signal_ms_.push_back(pp->m_id.load(std::memory_order_relaxed));
  }
  if (asked_before) return false;
  preempt_requests_.fetch_add(1, std::memory_order_relaxed);
  if (trace::Buffer* tb = sysmon_trace_) [[unlikely]] {
    tb->sysmon(trace::SysmonAction::kPreempt, pp->id);
  }
  return true;
}

// Sends the preemption signal to the Ms collected by this round. Their
// thread ids are read under the sched lock (tids_); a thread that has
// exited meanwhile gets nothing (tgkill fails), and a signal that arrives
// late finds no request and is ignored.
void Runtime::signal_ms() {
  std::vector<int>& ids = signal_ms_;
  {
    std::lock_guard lk(sched_);
    for (int& id : ids) {
      id = id >= 0 && static_cast<std::size_t>(id) < tids_.size() ? tids_[id] : 0;
    }
  }
  for (int tid : ids) {
    if (tid != 0 && signal_thread(tid)) {
      preempt_signals_.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

// ---- Preemption -------------------------------------------------------------------

void Runtime::async_preempt_now(M* m) {
  async_preemptions_.fetch_add(1, std::memory_order_relaxed);
  preempt_now(m);
}

}  // namespace gmp::stage5
