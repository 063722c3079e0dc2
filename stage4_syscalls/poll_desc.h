/// \file
/// PollDesc: what the runtime knows of one file descriptor it polls (Go's
/// pollDesc, netpoll.go).
#pragma once

#include <chrono>
#include <cstdint>

#include "common/runtime_lock.h"
#include "common/wait_queue.h"
#include "stage2_global_queue/g.h"

namespace gmp::stage4 {

/// Which direction a goroutine waits for.
enum class PollMode : std::uint8_t { kRead, kWrite };

/// One registered descriptor. Registered once with epoll, edge-triggered,
/// for both directions (as Go registers every fd): the kernel reports each
/// change from "would block" to "ready" once, and the runtime remembers it
/// here until a goroutine uses it.
///
/// Ready tokens (Go's pdReady): an edge that arrives while nobody waits sets
/// `rready`/`wready`; a goroutine about to park consumes the token and
/// retries its call instead. Without them, an edge between a goroutine's
/// EAGAIN and its park would be lost, and with edge triggering it would
/// never come again.
///
/// Lifetime: PollDescs live in the Netpoller's cache and are reused, never
/// freed while it lives, so a late epoll event or deadline for a closed
/// descriptor finds memory it may touch; `rseq`/`wseq` tell a stale
/// deadline from a current one. A PollDesc returns to the cache only when
/// both its fd is closed and its owner (a Conn) has let it go, so that a
/// Conn never sees its PollDesc reused by another descriptor.
struct PollDesc {
  using Clock = std::chrono::steady_clock;  ///< the deadlines' clock

  /// Protects every field below but `link`; `fd` may also be read without
  /// it by a holder of a reference (it changes only once none is left).
  RuntimeLock lock;

  int fd = -1;             ///< the descriptor; -1 once destroyed
  bool closing = false;    ///< close() began: waits fail, new ones too
  int refs = 0;            ///< calls under way; the fd closes at zero
  bool orphan = false;     ///< its Conn is gone: back to the cache once
                           ///< the fd is closed
  bool rready = false;     ///< a read edge nobody has used yet
  bool wready = false;     ///< a write edge nobody has used yet
  WaitQ<stage2::G*> readers;  ///< goroutines parked until readable
  WaitQ<stage2::G*> writers;  ///< goroutines parked until writable

  /// Deadlines (Go's rd, wd): time_point::max() for none.
  Clock::time_point rd = Clock::time_point::max();
  Clock::time_point wd = Clock::time_point::max();  ///< write deadline
  /// Bumped by every change of the direction's deadline, by close and by
  /// reuse: a deadline timer carries the seq it was armed with, and fires
  /// only if it still matches (Go's rseq, wseq).
  std::uint64_t rseq = 0;
  std::uint64_t wseq = 0;  ///< the write side's sequence
  bool rtimer = false;  ///< a read deadline timer for (rd, rseq) is armed
  bool wtimer = false;  ///< a write deadline timer for (wd, wseq) is armed

  /// Next free PollDesc in the cache: under the Netpoller's lock while pd
  /// is in the cache; its taker's own after.
  PollDesc* link = nullptr;

  /// The waiters and token of one direction.
  WaitQ<stage2::G*>& waiters(PollMode m) {
    return m == PollMode::kRead ? readers : writers;
  }
  /// The ready token of side m.
  bool& ready(PollMode m) { return m == PollMode::kRead ? rready : wready; }
  /// The deadline of side m.
  Clock::time_point deadline(PollMode m) const {
    return m == PollMode::kRead ? rd : wd;
  }
  /// Whether side m's deadline is armed.
  bool& timer(PollMode m) { return m == PollMode::kRead ? rtimer : wtimer; }
  /// The sequence of side m.
  std::uint64_t& seq(PollMode m) { return m == PollMode::kRead ? rseq : wseq; }
};

}  // namespace gmp::stage4
