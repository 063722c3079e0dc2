// Exercise 12: sysmon's decisions (Go's sysmon and retake, proc.go): how
// long to sleep, whom to retake, whom to preempt.
//
// A pure model, no threads: sysmon's rules as functions of what it reads
// in one round (a snapshot of a P and of the scheduler's counters) and of
// what it remembered from the rounds before (Go's sysmontick). The stage
// around them (stage5_preemption/runtime.cc, syscall.cc) reads the
// snapshots, acts on the answer (P::preempt and SIGURG, or the
// compare-exchange and handoffp) and sleeps. Write sysmon_delay and
// retakep in sysmon.cc. See README.md for the statement.
#pragma once

#include <chrono>
#include <cstdint>

namespace gmp::exercises::sysmon {

/// A reading of a monotonic clock, as Go's nanotime(): nanoseconds since
/// some fixed moment. The tests start at zero.
using Nanos = std::chrono::nanoseconds;

// ---- How long sysmon sleeps --------------------------------------------

/// sysmon's shortest sleep, while it keeps finding work (Go: usleep(20)).
inline constexpr std::chrono::microseconds kSysmonMinDelay{20};
/// Its longest sleep, after a long quiet spell (Go: 10*1000 us).
inline constexpr std::chrono::microseconds kSysmonMaxDelay{10000};
/// Quiet rounds at the shortest sleep before the doubling starts (Go:
/// `idle > 50`, about 1 ms of 20 us sleeps).
inline constexpr int kQuietRounds = 50;

/// How long sysmon sleeps before its next round, given `idle_rounds`: how
/// many rounds in a row found nothing to do (0 right after a round that
/// acted). kSysmonMinDelay while idle_rounds <= kQuietRounds; after that
/// it doubles with every further quiet round (40 us after 51 quiet rounds,
/// 80 us after 52, ...) up to kSysmonMaxDelay, where it stays however
/// large idle_rounds grows. Requires idle_rounds >= 0. Any thread; pure.
std::chrono::microseconds sysmon_delay(int idle_rounds);

// ---- Whom to retake, whom to preempt -----------------------------------

/// How long one goroutine (or one runnext chain, which shares its time
/// slice) may keep a P before sysmon asks it to yield (Go's
/// forcePreemptNS).
inline constexpr Nanos kForcePreemptNS = std::chrono::milliseconds(10);
/// How long a P may stay in one system call, with nothing queued and
/// other Ms or Ps looking for work, before sysmon retakes it anyway (Go's
/// `pd.syscallwhen+10*1000*1000 > now` in retake).
inline constexpr Nanos kRetakeAnyway = std::chrono::milliseconds(10);

/// A P's status, as sysmon reads it (Go's _Pidle, _Prunning, _Psyscall,
/// _Pgcstop).
enum class PStatus : std::uint8_t {
  kIdle,     ///< on the idle list: nothing runs
  kRunning,  ///< an M runs goroutines with it
  kSyscall,  ///< its M is in a system call; anyone may take it
  kStopped,  ///< stopped for a stop of the world
};

/// What sysmon reads of one P in one round. The stage reads each field
/// with a relaxed load: a snapshot, possibly stale by the time it acts.
struct PSnapshot {
  PStatus status = PStatus::kIdle;  ///< pp.status
  /// Go's p.schedtick: +1 each time the P starts running a goroutine in a
  /// new time slice (execute() without inheritTime). Wraps.
  std::uint32_t schedtick = 0;
  /// Go's p.syscalltick: +1 each time an M enters a system call with this
  /// P. Wraps.
  std::uint32_t syscalltick = 0;
  bool runq_empty = true;  ///< Go's runqempty(pp): no goroutine queued
};

/// What sysmon reads of the scheduler in one round.
struct SchedSnapshot {
  int nmspinning = 0;  ///< Go's sched.nmspinning: Ms looking for work
  int npidle = 0;      ///< Go's sched.npidle: Ps on the idle list
};

/// sysmon's memory of one P between rounds (Go's p.sysmontick). Only the
/// sysmon thread reads or writes it (in the stage: sysmon's own vector of
/// Ticks, one per P). Starts value-initialized: nothing seen yet.
struct SysmonTick {
  /// schedtick/schedwhen describe the slice now running: sysmon has seen
  /// this P running since it last saw it idle or stopped.
  bool sched_seen = false;
  std::uint32_t schedtick = 0;  ///< the schedtick sysmon saw last
  Nanos schedwhen{0};           ///< when it first saw that schedtick
  /// syscalltick/syscallwhen describe a call under way: sysmon has seen
  /// this P in kSyscall and has not retaken it since.
  bool syscall_seen = false;
  std::uint32_t syscalltick = 0;  ///< the syscalltick sysmon saw last
  Nanos syscallwhen{0};           ///< when it first saw that syscalltick
};

/// What sysmon is to do with one P this round.
enum class Action : std::uint8_t {
  kNone,     ///< leave it alone
  kPreempt,  ///< ask its goroutine to yield (Go's preemptone)
  kRetake,   ///< take it from its system call and hand it off (handoffp)
};

/// The body of Go's retake loop for one P, in round `now`: decides what
/// to do with the P read as `pp` and updates sysmon's memory `pd` of it.
///   - kRunning: a schedtick not seen before (or a first look at this
///     slice) is only remembered, with `now`; a schedtick unchanged for
///     kForcePreemptNS or more since sysmon first saw it means one slice
///     has run that long: kPreempt, on every round until the tick moves
///     (the request, or its signal, may have found no safe point).
///   - kSyscall: a syscalltick not seen before is only remembered, with
///     `now`. One unchanged since sysmon's last look is retaken (kRetake)
///     if the P has work queued, or if no M spins and no P is idle, or if
///     sysmon first saw that call kRetakeAnyway or more ago; otherwise
///     left alone. After kRetake the call is forgotten (Go bumps
///     p.syscalltick for the same effect): the P is handed off, so a later
///     look finds a new call or no call. The slice's memory (schedtick) is
///     kept across calls: a quick call does not start a new time slice.
///   - kIdle or kStopped: no slice runs and no call is under way; both
///     are forgotten.
/// Requires `now` not to go backwards between rounds for one `pd`.
/// sysmon only (or a test); pure apart from `pd`.
Action retakep(const PSnapshot& pp, const SchedSnapshot& sched, Nanos now,
               SysmonTick& pd);

}  // namespace gmp::exercises::sysmon
