/// \file
/// One event of an execution trace: what the scheduler did, where, when.
///
/// ```unparsed
/// The events are Go's runtime/trace events, cut down to what the course's
/// scheduler does (Go's names in brackets):
///
///   kGoCreate   a goroutine is made                       [GoCreate]
///   kGoStart    it starts running on this M (and P)       [GoStart]
///   kGoStop     it stops running: yield, park (with the   [GoSched, GoBlock*,
///               wait reason), preempted, or exit           GoPreempt, GoEnd]
///   kGoSyscall  it enters a blocking call, leaving its P  [GoSysCall]
///   kGoSysExit  it is back from the call (with a P or not)[GoSysExit]
///   kSteal      this M's P took goroutines from another P  (no Go event)
///   kGrqGet     a P took a batch from the global queue     (no Go event)
///   kGrqPut     a full local queue sent half to the GRQ    (no Go event)
///   kHandoff    a P passed from one M to another          [ProcStart/Stop]
///   kSpinStart  this M starts spinning (looking for work)  (no Go event)
///   kSpinStop   it stops spinning
///   kMPark      this M goes idle (stopm)                   [ProcStop]
///   kMUnpark    it is woken                                [ProcStart]
///   kSysmon     sysmon acted: retook a P, preempted a G,   (no Go event)
///               or polled the network
///   kQueues     queue lengths at a scheduling point        [counters]
///
/// An event is recorded by the thread it happens on, into that thread's own
/// Buffer (tracer.h): an M records what its goroutines and its g0 do.
/// ```
#pragma once

#include <cstdint>

namespace gmp::trace {

/// What happened (see the file's table).
enum class EventType : std::uint8_t {
  kGoCreate,
  kGoStart,
  kGoStop,
  kGoSyscall,
  kGoSysExit,
  kSteal,
  kGrqGet,
  kGrqPut,
  kHandoff,
  kSpinStart,
  kSpinStop,
  kMPark,
  kMUnpark,
  kSysmon,
  kQueues,
};

/// Why a goroutine stopped running on its M (kGoStop).
enum class StopReason : std::uint8_t {
  kYield,    ///< yield(): back in a run queue
  kPark,     ///< parked; Event::wait says on what
  kPreempt,  ///< stopped at a safe point on request (a stop of the world
             ///< from stage 3 on, sysmon in stage 5): back in a queue
  kSyscall,  ///< back from a blocking call without a P: queued (stage 4)
  kExit,     ///< its function returned, or it unwound at exit
  /// Dropped at exit before its first turn (stage 2): it never ran, so this
  /// ends it without a kGoStart.
  kNeverStarted,
};

/// What sysmon did (kSysmon).
enum class SysmonAction : std::uint8_t {
  kRetake,   ///< took a P from an M stuck in a blocking call
  kPreempt,  ///< asked the goroutine running on a P to stop
  kNetpoll,  ///< polled the network: Event::count goroutines readied
};

/// No P: stage 2, or an M without one.
inline constexpr std::int32_t kNoP = -1;

/// One event. The meaning of each field depends on `type`:
///
///   type        g           p          arg            count
///   kGoCreate   new G       creator's  parent G       -        label: type
///   kGoStart    G           its P      -              -
///   kGoStop     G           -          -              -        reason, wait
///   kGoSyscall  G           P left     -              -
///   kGoSysExit  G           P or kNoP  -              -
///   kSteal      -           thief      victim P       taken
///   kGrqGet     -           taker      -              taken
///   kGrqPut     -           giver      -              sent
///   kHandoff    -           the P      from M/sysmon  -        to M: arg2
///   kSysmon     -           P or kNoP  -              readied  reason
///   kQueues     -           P or kNoP  GRQ length     P's queue length
struct Event {
  std::int64_t ts = 0;  ///< ticks since the trace started (clock.h)
  std::uint64_t g = 0;      ///< a goroutine id
  std::uint64_t arg = 0;    ///< see the table
  std::uint64_t arg2 = 0;   ///< kHandoff: the M that gets the P
  const void* label = nullptr;  ///< kGoCreate: the function's std::type_info
  std::int32_t p = kNoP;    ///< a P id, or kNoP
  std::uint32_t count = 0;  ///< see the table
  EventType type = EventType::kGoCreate;  ///< what happened
  std::uint8_t reason = 0;  ///< kGoStop: StopReason; kSysmon: SysmonAction
  std::uint8_t wait = 0;    ///< kGoStop with kPark: the gmp::WaitReason
};
#if defined(__x86_64__)
// tracer.h's memory figures (chunk and cap sizes) are for 56-byte events.
static_assert(sizeof(Event) == 56, "an Event's size changed: update tracer.h");
#endif

}  // namespace gmp::trace
