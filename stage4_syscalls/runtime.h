/// \file
/// Stage 4: the network poller and blocking system calls (Go 1.1's netpoller,
/// and entersyscall / exitsyscall; proc.go, netpoll.go, netpoll_epoll.go).
///
/// ```unparsed
/// What a goroutine waits for outside the runtime
/// ================================================
/// Stage 3's goroutines block only on each other (channels, mutexes, wait
/// groups) and on timers; all of that parks the goroutine and frees its M.
/// A goroutine that calls read() on a socket instead blocks its M in the
/// kernel, and with the M its P: with GOMAXPROCS = 2, two goroutines waiting
/// for their clients stop the whole program. Stage 4 gives the two answers
/// of the notes (docs/course/notes.md) and of Go.
///
/// 1. The network poller (netpoll.h): sockets and pipes are non-blocking,
///    and registered once with epoll, edge-triggered. A goroutine whose
///    read() or write() would block (EAGAIN) parks on the descriptor's
///    PollDesc; when epoll reports the descriptor, the poller hands the
///    goroutine back to the scheduler. The M never blocks: it runs others.
///    Who asks epoll:
///      - findRunnable, step 4 of note 000's order (after the local queue
///        and the GRQ, before stealing): a non-blocking poll. The first
///        goroutine it returns runs now, the rest are injected: one per
///        idle P on the GRQ with an M started for each, the others on this
///        P's queue (Go's injectglist);
///      - the idle M on duty (stage 3's timer M): instead of sleeping until
///        the next timer, it blocks in epoll_wait until the next timer or
///        I/O deadline. Only that one M blocks in epoll; anyone who needs it
///        back (a new, earlier timer, work for it) interrupts the wait
///        through an eventfd (Go's netpollBreak).
///    Deadlines (Conn::set_deadline) are timers of the poller: when one
///    passes, the goroutines waiting in that direction wake and fail with
///    "i/o timeout".
///
/// 2. Blocking system calls (blocking(f), syscall.cc): for what has no
///    poller (files, sleep-like calls, DNS), the goroutine tells the runtime
///    before it enters the kernel. In this stage the P is handed off at
///    once (Go's entersyscallblock and handoffp): the M keeps only the
///    goroutine; its P goes to another M if it has work (an idle M, or a
///    new one: the M pool grows), else to the idle list. On return
///    (exitsyscall), the three steps of the notes:
///      a. take the old P back if it is idle (it still has this goroutine's
///         cache lines and its queue);
///      b. else any idle P;
///      c. else put the goroutine on the GRQ and park the M (exitsyscall0).
///    Ms blocked in calls count as threads: Config::max_threads bounds them
///    (Go's SetMaxThreads, 10000), and going past it is fatal, as in Go.
///    Stage 5 makes the hand-off lazy: sysmon takes the P only from calls
///    that last, and a quick call keeps its P.
///
/// Everything else is stage 3's scheduler, reused through its extension
/// points (stage3_gmp/runtime.h: poll_network, idle_duty_wanted, idle_wait,
/// wake_m, other_mcall, stop_reason).
/// ```
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "stage3_gmp/runtime.h"
#include "stage4_syscalls/netpoll.h"

/// Stage 4: the epoll network poller and the syscall hand-off
/// (stage4_syscalls/).
namespace gmp::stage4 {

using stage2::G;
using stage2::GStatus;
using stage3::M;
using stage3::PStatus;
using stage3::getm;
using stage3::P;
using stage3::block;
using stage3::Chan;
using stage3::Context;
using stage3::gomaxprocs;
using stage3::go;
using stage3::kMaxProcs;
using stage3::Mutex;
using stage3::sleep_for;
using stage3::Ticker;
using stage3::Timer;
using stage3::WaitGroup;

/// Stage 4's goroutine state, Go's `_Gsyscall` (stage 2 leaves Go's
/// number 3 free for it: g.h): in a blocking call, on its M, without a P.
/// Entered from kRunning by entersyscall; left for kRunning (a P found) or
/// kRunnable (none: the GRQ).
inline constexpr GStatus kGSyscall = static_cast<GStatus>(3);

/// Stage 4's own request to g0 (stage2::MCall): exitsyscall0, for a
/// goroutine back from a blocking call that found no P.
inline constexpr stage2::MCall kExitsyscallCall = stage3::kFirstLaterCall;
using stage3::yield;
using stage3::num_goroutine;
using stage3::lock_os_thread;
using stage3::unlock_os_thread;
using stage3::lock_os_count;

/// The most Ms a Config may allow.
inline constexpr int kMaxThreadsLimit = 1'000'000;

/// Stage 3's configuration, plus the thread limit.
struct Config : stage3::Config {
  /// Go's debug.SetMaxThreads: the most Ms (OS threads running goroutines,
  /// including those blocked in system calls). In [2, kMaxThreadsLimit];
  /// exceeding it at run time is fatal ("thread exhaustion").
  int max_threads = 10000;
};

/// Stage 3's counters, plus the poller's and the system calls'.
struct Stats : stage3::Stats {
  std::uint64_t syscalls = 0;         ///< blocking() calls
  std::uint64_t handoffs = 0;         ///< Ps handed to another M for work
  std::uint64_t exitsyscall_oldp = 0;   ///< returns that took the old P back
  std::uint64_t exitsyscall_otherp = 0;  ///< ... that took another idle P
  std::uint64_t exitsyscall_grq = 0;   ///< ... that went to the GRQ and parked
  std::uint64_t netpolls = 0;          ///< epoll_wait calls
  std::uint64_t netpoll_blocking = 0;  ///< of which waited (the idle M on duty)
  std::uint64_t netpoll_events = 0;    ///< descriptor events seen
  std::uint64_t netpoll_ready = 0;     ///< goroutines readied by the poller
  std::uint64_t netpoll_timeouts = 0;  ///< waits ended by a deadline
};

/// A stage 4 runtime: stage 3's scheduler, a network poller, and blocking
/// calls that hand their P off. Thread safety as in stage 3.
class Runtime : public stage3::Runtime, private Netpoller::Host {
 public:
  /// As stage 3's; gmp::ConfigError also for max_threads out of range or
  /// below GOMAXPROCS; std::system_error if epoll cannot be set up.
  explicit Runtime(Config config = {});
  /// Fatal error if the runtime is still running.
  ~Runtime() override;

  /// Counters of the current or last run().
  Stats stats() const;

  /// The poller of this runtime (shared with the Conns it made). Internal,
  /// for net.cc.
  const std::shared_ptr<Netpoller>& netpoller() const { return poller_; }

  /// Makes runnable the goroutines a poller call returned (`gs` emptied).
  /// From a goroutine of this runtime: onto its P; from anywhere else (a
  /// plain thread closing a Conn): onto the GRQ. Internal, for net.cc.
  void ready_list(std::vector<G*>& gs) override;

  /// The runtime of the calling goroutine, if it is a stage 4 one, else
  /// null.
  static Runtime* current() noexcept;

  /// Go's entersyscallblock, for blocking(): gp, running on m, is about to
  /// block in the kernel. Its P leaves at once (handoffp); m keeps only gp.
  /// Returns the P, which exitsyscall tries to take back. On gp; internal.
  /// Virtual: stage 5 makes the hand-off lazy (Go's entersyscall).
  virtual P* entersyscall(M* m, G* gp);
  /// Go's exitsyscall: gp, back from the kernel on m, needs a P to go on. The
  /// notes' three steps: its old P if idle; any idle P; else the GRQ, and m
  /// parks (exitsyscall0, on g0). Returns running with a P. On gp.
  virtual void exitsyscall(M* m, G* gp, P* oldp) noexcept;

 protected:
  /// findRunnable's step 4: a non-blocking poll, unless nobody waits on a
  /// descriptor or an M is blocked in epoll already (it will get the events).
  G* poll_network(M* m) override;
  /// Stage 3's idle M on duty watched the timers; stage 4's also watches the
  /// descriptors goroutines wait on.
  bool idle_duty_wanted() const override;
  /// The idle M on duty blocks in epoll_wait until the next timer or I/O
  /// deadline (Go's findRunnable, "poll network until next timer"). What it
  /// collects goes to the GRQ; stage 3's stopm then takes an idle P for it.
  /// With no descriptor waited on, it sleeps on its Note as in stage 3.
  void idle_wait(M* m, Clock::time_point until,
                 std::vector<G*>& ready) override;
  /// Taking an idle M off the list wakes it: from its Note, and, if it is the M
  /// on duty, from epoll_wait. sched_ held.
  void wake_m(M* m) override;
  /// g0's part of exitsyscall0: the mcall stage 3 does not know.
  void other_mcall(M* m, G* gp) override;
  /// kSyscall for kExitsyscallCall; stage 3's reasons otherwise.
  trace::StopReason stop_reason(stage2::MCall call) const override;
  /// "stage4", in trace files.
  const char* stage_name() const override { return "stage4"; }
  /// Stage 4's counters start from zero with each run. Called by stage 3's
  /// run() under sched_ once the run is ours, not before: a second run()
  /// racing this one would otherwise zero the counters of the one under way.
  void reset_run_state() override;

 protected:
  // ==== How a later stage plugs in ==========================================
  // Stage 3's four parts (stage3_gmp/runtime.h), and two more of stage 4's:
  // nothing else of stage 4 is visible to a stage built on it.

  // ---- Part 5. The poller, for a watcher: a thread outside the Ms (it
  // holds no P) may poll too, when no M has for a while, and inject what
  // it finds (stage 3's injectglist).
  /// Whether goroutines wait on descriptors, no M is blocked in epoll_wait,
  /// and nobody has polled for `age` (Go's sysmon's test of sched.lastpoll).
  /// Any thread.
  bool netpoll_overdue(Clock::time_point now, Clock::duration age) const;
  /// Go's netpoll(0): a poll that does not wait. The goroutines it readied
  /// (still waiting, claimed: for injectglist) are appended to `gs`, and
  /// counted. Any thread.
  void netpoll_now(std::vector<G*>& gs);

  // ---- Part 6. Blocking calls: what entersyscall and exitsyscall do in
  // every hand-off policy (stage 4 hands the P off at once, in
  // entersyscall; a policy may hand it off later, from another thread).
  /// gp, running on m, enters a blocking call: its status (kGSyscall), its
  /// trace event, the call counted; m releases its P, which is returned.
  /// On gp.
  P* syscall_releasep(M* m, G* gp);
  /// Go's handoffp for pp, whose M is in a blocking call: stage 3's
  /// handoffp, counted as a hand-off and traced as one from thread `from`
  /// (an M's id, or trace::kSysmonThread) in `t`, the caller's trace
  /// buffer (null: not traced). Returns the M that got pp, or null.
  M* syscall_handoffp(P* pp, trace::Buffer* t, int from);
  /// gp, back from its call on m, runs on with pp, which m has acquired:
  /// its status (kRunning), its last P and its trace event. On gp.
  void syscall_resume(M* m, G* gp, P* pp);

 private:
  /// `c` validated (stage 3's rules and max_threads), or gmp::ConfigError.
  static Config checked(Config c);
  /// The first goroutine to wait on a descriptor, about to park: if its M has
  /// nothing else to run, that M goes idle next and takes the duty of polling
  /// itself. Otherwise an idle M must watch the network, or the wait could last
  /// until the busy M runs out of work (Go leaves that to sysmon's poll every
  /// 10 ms; stage 5). If the M on duty sleeps on its Note (only timers so far),
  /// it is woken to poll instead.
  void first_waiter() override;
  /// Go's exitsyscall0, on g0: no P was free for gp. One more look under the
  /// lock; else gp waits in the GRQ and m goes idle.
  void exitsyscall0(M* m, G* gp);

  std::shared_ptr<Netpoller> poller_;  ///< immutable after construction
  /// An M is blocked in epoll_wait (Go's sched.lastpoll == 0): others skip
  /// their non-blocking polls. Relaxed: a hint that saves a system call.
  std::atomic<bool> poll_blocked_{false};

  // Counters of this run: relaxed atomics, written by any M.
  std::atomic<std::uint64_t> syscalls_{0};  ///< blocking() calls entered
  std::atomic<std::uint64_t> handoffs_{0};  ///< Ps handed to another M
  std::atomic<std::uint64_t> exit_oldp_{0};    ///< exits that got the old P
  std::atomic<std::uint64_t> exit_otherp_{0};  ///< ... another idle P
  std::atomic<std::uint64_t> exit_grq_{0};     ///< ... no P: the GRQ
  std::atomic<std::uint64_t> netpoll_blocking_{0};  ///< blocking polls
  std::atomic<std::uint64_t> netpoll_ready_{0};  ///< goroutines it readied
  // The poller's counters when run() began: written by reset_run_state
  // (under sched_), read by stats() from any thread (relaxed: figures).
  std::atomic<std::uint64_t> polls_at_start_{0};  ///< Netpoller::polls() then
  std::atomic<std::uint64_t> events_at_start_{0};  ///< Netpoller::events() then
  std::atomic<std::uint64_t> timeouts_at_start_{0};  ///< ...timeouts() then
};

/// Marks the calling goroutine as in a blocking system call for its
/// lifetime (Go's entersyscallblock ... exitsyscall); used by blocking().
/// Goroutine only.
class SyscallScope {
 public:
  /// gmp::UsageError outside a goroutine of a stage 4 runtime, or inside
  /// another blocking call.
  SyscallScope();
  ~SyscallScope();
  SyscallScope(const SyscallScope&) = delete;
  SyscallScope& operator=(const SyscallScope&) = delete;

 private:
  Runtime* rt_;
  stage3::M* m_;
  stage2::G* gp_;
  stage3::P* oldp_;
};

/// Runs `f()` as a blocking system call and returns what it returns: for
/// the whole call the goroutine holds its M but no P, which runs other
/// goroutines meanwhile (on another M). `f` must not call the runtime (go,
/// channels, yield...): those throw gmp::UsageError there. Exceptions from
/// `f` pass through after the goroutine has a P again.
template <class F>
decltype(auto) blocking(F&& f) {
  SyscallScope scope;
  return std::invoke(std::forward<F>(f));
}

}  // namespace gmp::stage4
