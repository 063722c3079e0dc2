/// \file
/// Stage 5: sysmon and preemption (Go's sysmon, retake, preemptone; proc.go).
///
/// ```unparsed
/// The monitor that needs no P
/// ===========================
/// Stages 3 and 4 only schedule when a goroutine calls into the runtime. A
/// goroutine that computes for a second keeps its P for a second: the
/// goroutines queued behind it, a sleeper whose time has come, a stop of
/// the world, all wait. Go's answer (1.2 onwards) is sysmon: one more OS
/// thread, which never holds a P and so is never stuck behind a goroutine.
/// It sleeps 20 us, doubled after 50 quiet rounds up to 10 ms (but at most
/// one time slice while goroutines run), and each time it wakes:
///   - it polls the network if nobody has for 10 ms, and queues what it
///     found (an idle P's M runs it, or a busy M at its next look at the
///     GRQ);
///   - it retakes Ps left in system calls (syscall.cc): entering a call
///     only marks the P kPSyscall, a quick return takes it back with one
///     compare-exchange, and a P whose syscalltick has not moved for a
///     whole round is handed off as stage 4 did on every call (Go's lazy
///     entersyscall / exitsyscallfast), and so is a P in a call whose
///     time slice (below) has run out (Go's sysretake);
///   - it compares each running P's schedtick with the snapshot it took
///     last time (Go's sysmontick): a P whose tick has not moved for
///     Config::time_slice (10 ms, Go's forcePreemptNS) has run one
///     goroutine that long, and sysmon asks it to yield (P::preempt; Go's
///     preemptone). Goroutines that ready each other through runnext share
///     one slice: execute() ticks only for a non-inherited run;
///   - optionally, it reports stalls (stall.cc).
/// While sysmon holds a P it retook, or goroutines its poll returned, on
/// their way to an M, it counts as a running M for checkdead (stage 3's
/// outside_work_begin/end, Go's incidlelocked): else the M back from the
/// call, finding its P gone, could go idle as the last M and report a
/// deadlock, or goroutines queued on a P no M holds (StressLazySyscalls
/// under AddressSanitizer did, in about 1 run of 10, before).
///
/// Cooperative preemption (Go before 1.14): the request is honoured at the
/// goroutine's next safe point. Go's compiler put a check in every function
/// prologue, the runtime's included (the stack-bound check, whose bound
/// sysmon poisoned); the course has the same at two places: every call
/// into the runtime (stage 3's safe point, where a stop of the world's
/// request is honoured too), and every function of the user's code, from
/// GCC's -finstrument-functions: each instrumented function starts with a
/// call to __cyg_profile_func_enter, which checks the P's flag
/// (preempt.cc). A preempted goroutine goes to the GRQ, as the notes say
/// (docs/course/notes.md; Go's gopreempt_m), and the P runs another. Exactly as
/// in Go 1.13, a loop without function calls is never preempted: the notes'
/// example (GOMAXPROCS=1, a goroutine spinning on `u -= 2`, main sleeping 5 ms)
/// hangs, which the demo shows with a timeout. So is a loop whose calls all
/// go to uninstrumented code (new and delete, libc).
///
/// Asynchronous preemption (Go 1.14 onwards, the default here on x86-64):
/// with the request, sysmon sends the P's M a signal, SIGURG; the handler
/// stops the goroutine wherever that is safe, through a trampoline that
/// saves every register (async_preempt.h). A signal that finds no safe
/// point (the goroutine is in the allocator, libc, the runtime) is sent
/// again 20 us later, up to 50 times, then every round, until the
/// goroutine stops, by signal or at its next safe point.
///
/// Everything else is stage 4's (and through it stage 3's), reused.
/// ```
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <thread>
#include <vector>

#include "common/note.h"
#include "stage4_syscalls/runtime.h"
#include "stage5_preemption/async_preempt.h"

/// Stage 5: sysmon, the lazy syscall hand-off, and cooperative then
/// signal-based preemption (stage5_preemption/).
namespace gmp::stage5 {

using stage4::blocking;
using stage4::block;
using stage4::Chan;
using stage4::Context;
using stage2::GStatus;
using stage4::G;
using stage4::kGSyscall;
using stage4::go;
using stage4::gomaxprocs;
using stage4::M;
using stage4::Mutex;
using stage4::P;
using stage4::PStatus;
using stage4::sleep_for;
using stage4::Ticker;
using stage4::Timer;
using stage4::WaitGroup;
using stage4::yield;
using stage4::num_goroutine;
using stage4::lock_os_thread;
using stage4::unlock_os_thread;
using stage4::lock_os_count;

/// Stage 5's P state, Go's `_Psyscall` (stage 3 leaves Go's number 2 free
/// for it: p.h): the P's M is in a blocking call and kept the P, to take it
/// back on return unless sysmon or a stop of the world took it first.
/// Stored without the sched lock by entersyscall (seq_cst: a Dekker pair
/// with the stop of the world's world_stopping), and left only by a
/// compare-exchange whose winner owns the P and its queue (acq_rel for
/// exitsyscall and retake; seq_cst, under the lock, in a stop).
inline constexpr PStatus kPSyscall = static_cast<PStatus>(2);

/// How long-running goroutines are stopped.
enum class Preempt : std::uint8_t {
  /// never asked to yield, as in stage 4 (sysmon still polls, and still
  /// retakes Ps from calls: from a call that lasts, and from any call once
  /// the goroutine's time slice has run out, Go's sysretake)
  kNone,
  kCooperative,  ///< at the next function entry of instrumented code
  kAsync,        ///< also by a signal, anywhere safe (async_preempt.h)
};

/// The default: Go 1.14's asynchronous preemption where this build has it
/// (x86-64, not under ThreadSanitizer), else cooperative.
inline constexpr Preempt kDefaultPreempt =
    kAsyncPreemptSupported ? Preempt::kAsync : Preempt::kCooperative;

/// Stage 4's configuration, plus sysmon's.
struct Config : stage4::Config {
  /// gmp::ConfigError for kAsync where this build or CPU cannot do it.
  Preempt preempt = kDefaultPreempt;
  /// How long a goroutine (or a runnext chain) may run before sysmon asks
  /// it to yield (Go's forcePreemptNS, 10 ms), or, if it is in a blocking
  /// call, takes its P (Go's sysretake; with Preempt::kNone too). In
  /// [100 us, 10 s].
  std::chrono::nanoseconds time_slice = std::chrono::milliseconds(10);
  /// Stall reports (off when zero): sysmon reports, once each, a goroutine
  /// that has run without a scheduling point, or stayed in one blocking
  /// call, for longer than this. At least 1 ms.
  std::chrono::nanoseconds stall_threshold{0};
  /// Where stall reports go (one line each, no newline); stderr if empty.
  std::function<void(const std::string&)> stall_sink;
};

/// Stage 4's counters, plus sysmon's.
struct Stats : stage4::Stats {
  std::uint64_t sysmon_wakes = 0;      ///< times sysmon woke up
  std::uint64_t sysmon_netpolls = 0;   ///< polls sysmon made (10 ms rule)
  /// Ms sysmon started on an idle P for timers overdue by 1 ms with no M
  /// on duty (Go 1.14's sysmon; a backstop, see sysmon_timers)
  std::uint64_t sysmon_timer_starts = 0;
  std::uint64_t preempt_requests = 0;  ///< goroutines asked to yield
  std::uint64_t async_preemptions = 0;  ///< of which stopped by the signal
  std::uint64_t preempt_signals = 0;   ///< SIGURGs sysmon sent
  std::uint64_t async_declined = 0;    ///< signals that found no safe point
  std::uint64_t stalls_reported = 0;   ///< stall reports sysmon made
  std::uint64_t syscalls_fast = 0;     ///< calls that kept their P
  std::uint64_t syscall_retakes = 0;   ///< Ps sysmon took from calls
};

/// A stage 5 runtime: stage 4's, watched by sysmon.
class Runtime : public stage4::Runtime {
 public:
  /// As stage 4's; gmp::ConfigError also for a time_slice out of range
  /// (100 us to 10 s), a stall_threshold below 1 ms (0 is off), or kAsync
  /// where this build or CPU cannot preempt asynchronously.
  explicit Runtime(Config config = {});
  /// Fatal error if the runtime is still running.
  ~Runtime() override;

  /// Counters of the current or last run(): stage 4's, plus sysmon's.
  /// (Through a stage 3 or 4 reference, stats() gives the earlier stage's
  /// part of these.) run() is stage 3's, unchanged: sysmon runs beside it
  /// as its watcher (start_watchers).
  Stats stats() const;

  /// stage3::Runtime::preempt_now, from the signal's trampoline (Go's
  /// asyncPreempt2): also counted as an asynchronous preemption. Internal.
  void async_preempt_now(M* m);

  /// Go's doSigPreempt: the preemption signal's work on the running M, on
  /// its signal stack (async_preempt.cc). Never schedules: if preemption is
  /// asynchronous and the interrupted point is safe (check_safe_point), it
  /// makes the goroutine call the trampoline when the handler returns; else
  /// it declines, and sysmon asks again on its next round. Internal;
  /// async-signal-safe.
  void async_preempt_signal(M* m, void* ucontext) noexcept;

  /// Go's entersyscall (reentersyscall): gp, on m, is about to block in the
  /// kernel. Its P stays as it is (queue, cache, runnext) but marked
  /// kPSyscall: from now on anyone may take it (syscall.cc). If a stop of
  /// the world is under way, the P is stopped at once (Go's
  /// entersyscall_gcwait). Returns the P. On gp.
  P* entersyscall(M* m, G* gp) override;
  /// Go's exitsyscall: the P back at the cost of one compare-exchange
  /// (exitsyscallfast) if nobody took it, else stage 4's three steps.
  /// Returns running with a P. On gp.
  void exitsyscall(M* m, G* gp, P* oldp) noexcept override;

 protected:
  /// "stage5", in trace files.
  const char* stage_name() const override { return "stage5"; }
  /// Stage 4's, then sysmon's counters from zero, and no M's thread id
  /// (tids_; Stage5Test.ASecondRunPreemptsItsNewMsAsynchronously). sysmon's
  /// per-P ticks start over in start_watchers.
  void reset_run_state() override;
  /// Stage 3's, then the thread's kernel id in tids_ (Go's minit sets
  /// m.procid): how sysmon addresses the preemption signal to the M.
  void minit(M* m) override;
  /// Takes every P left kPSyscall by an M in a blocking call, as it is
  /// (Go's CAS from `_Psyscall` to `_Pgcstop`): the call's return finds it
  /// gone. The compare-exchange races with that return and with sysmon's
  /// retake; one wins.
  void stop_unattended_ps() override;
  /// Starts sysmon, for the whole run (Go starts it before main too).
  void start_watchers() override;
  /// Wakes sysmon and joins it.
  void stop_watchers() noexcept override;

 private:
  /// `c` validated (stage 4's rules, then the time slice, the stall
  /// threshold, and whether kAsync can be had here), or gmp::ConfigError.
  static Config checked(Config c);
  /// Go's sysmon: the watcher thread's loop, from start_watchers until
  /// stop_watchers; each round polls, starts an M for overdue timers,
  /// retakes and reports stalls, then sleeps 20 us to 10 ms (runtime.cc).
  void sysmon();
  struct Tick;
  /// Go's retake: Ps left in blocking calls go to other Ms
  /// (retake_syscall), and a P that has run one goroutine (or one runnext
  /// chain) for a time slice is asked to yield (preempt_long_run), the
  /// signal sent to its M with kAsync (signal_ms). `*running`: whether a P
  /// runs or is in a call. Whether it acted. sysmon's thread.
  bool retake(Clock::time_point now, bool* running);
  /// The syscall half of retake (syscall.cc): pp, kPSyscall, has been in
  /// one call for a whole round, or its time slice has run out
  /// (`slice_over`, Go's sysretake). Handed off (syscall_handoffp), unless
  /// it has nothing queued and others look for work, then only after
  /// 10 ms. Whether it took pp.
  bool retake_syscall(P* pp, Tick& t, Clock::time_point now, bool slice_over);
  /// Whether pp's schedtick has not moved for a time slice since sysmon
  /// first saw it; a new tick restarts the count (t.since).
  bool slice_ran_out(P* pp, Tick& t, Clock::time_point now);
  /// The preemption half of retake (Go's preemptone after a time slice):
  /// asks pp's goroutine `goid` to yield (0: pp's M was in the scheduler,
  /// and nothing is asked), and queues its M for the signal with kAsync.
  /// Whether it asked anew.
  bool preempt_long_run(P* pp, Tick& t, std::uint64_t goid,
                        Clock::time_point now);
  /// Sends SIGURG to the Ms retake queued this round (Go's preemptM),
  /// their thread ids read under the sched lock.
  void signal_ms();
  /// Reports, once each, a goroutine that has run, or stayed in one
  /// blocking call, past stall_threshold (stall.cc). After retake.
  void report_stalls(Clock::time_point now);
  /// One stall report, counted: to stall_sink, or a line on stderr.
  void stall(const std::string& what);
  /// sysmon's poll: goroutines wait on descriptors and nobody has polled
  /// for 10 ms (stage 4's netpoll_overdue): it polls and injects what is
  /// ready (injectglist), counted as outside work meanwhile. Whether it
  /// found any.
  bool sysmon_netpoll(Clock::time_point now);
  /// Go 1.14's sysmon backstop: timers overdue by 1 ms while no idle M is
  /// on duty and a P is idle: an M is started on it. Whether it did.
  bool sysmon_timers(Clock::time_point now);

  const Preempt preempt_;
  const std::chrono::nanoseconds time_slice_;

  // sysmon's own (its thread only): Go's sysmontick, per P.
  struct Tick {
    std::uint32_t schedtick = 0;
    Clock::time_point since;  // when schedtick was first seen
    std::uint32_t syscalltick = 0;
    Clock::time_point syscallwhen;  // when syscalltick was first seen
    bool stall_reported = false;    // this slice's stall was reported
  };
  std::vector<Tick> ticks_;
  /// Go's p.syscalltick, per P id: +1 by the M entering a call with the
  /// P; read by sysmon (relaxed: compared with a snapshot, no data).
  std::unique_ptr<std::atomic<std::uint32_t>[]> syscalltick_;
  // One P as retake saw it, under the sched lock.
  struct PView {
    P* pp;
    std::uint64_t goid;  // what its M ran, or 0: no M, or the M on g0
  };
  std::vector<PView> sysmon_ps_;  // retake's snapshot of the Ps, reused
  std::vector<int> signal_ms_;  // ids of Ms to signal this round, reused
  // The kernel thread id of M i (Go's m.procid), or 0: that M's thread has
  // not started. Under sched_: written by each M as it starts (minit),
  // read by sysmon (signal_ms), cleared by reset_run_state.
  std::vector<int> tids_;
  std::vector<G*> sysmon_ready_;  // what sysmon's poll readied, reused
  // sysmon's trace buffer, or null. The sysmon thread only: set when it
  // starts, its buffer written by it alone (trace/tracer.h).
  trace::Buffer* sysmon_trace_ = nullptr;

  // Stall reports (only when stall_threshold_ > 0): the goroutines in
  // blocking calls, by M, with when the call began.
  const std::chrono::nanoseconds stall_threshold_;
  const std::function<void(const std::string&)> stall_sink_;
  struct InCall {
    std::uint64_t goid;
    Clock::time_point since;
    bool reported;
  };
  std::mutex in_calls_mu_;  // guards in_calls_
  std::unordered_map<const M*, InCall> in_calls_;
  std::thread sysmon_;  // running while run() is; run()'s thread owns it
  Note sysmon_stop_;    // woken by stop_watchers when the run is over

  // Counters of this run, one per Stats field of the same name (which
  // documents it): relaxed atomics, zeroed by reset_run_state, written by
  // sysmon and the Ms, read by stats().
  std::atomic<std::uint64_t> sysmon_wakes_{0}, sysmon_netpolls_{0},
      sysmon_timer_starts_{0},
      preempt_requests_{0}, syscalls_fast_{0},
      syscall_retakes_{0}, async_preemptions_{0}, preempt_signals_{0},
      async_declined_{0}, stalls_reported_{0};
};

}  // namespace gmp::stage5
