/// \file
/// A Go channel, written once for every stage (Go's runtime/chan.go).
///
/// ```unparsed
/// The algorithm is Go's: one lock per channel, a ring buffer of `cap` slots,
/// and two wait queues of parked goroutines (recvq, sendq). The rules that
/// make it a Go channel:
///   - a send to a channel with a waiting receiver hands the value straight
///     to that receiver (no trip through the buffer), then readies it;
///   - a receive from a channel with a waiting sender takes the sender's
///     value (unbuffered) or the oldest buffered value, moving the sender's
///     value into the freed slot (full buffer), then readies the sender;
///   - otherwise the buffer is used while it has room (or values);
///   - otherwise the goroutine parks on recvq or sendq (scheduler.h);
///   - close wakes every receiver (they receive "closed": std::nullopt) and
///     every sender (they panic: "send on closed channel"); receivers drain
///     the buffered values before they see "closed".
/// Each operation is a part that needs no wait (send_now, recv_now) and a
/// park; the non-blocking forms (try_send, try_recv) and select (select.h)
/// use the same parts. Only the parking differs per stage: that is the `S`
/// parameter.
/// ```
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "common/runtime_lock.h"
#include "common/scheduler.h"

namespace gmp {

namespace detail {
template <class T, class S>
struct ChanAccess;  // select.h's and time.h's way in (below)
}  // namespace detail

/// What a channel may ask before every receive from it (recv, try_recv,
/// and a select's receive case, before any lock is taken): a Timer's
/// channel refuses a goroutine of another runtime (time.h); a context's
/// done() keeps the context's deadline alive (context.h). A channel has
/// at most one, set before it is shared; one compare for those with none.
template <class S>
class ReceiveGuard {
 public:
  /// Called with the receiving goroutine `g`; may throw (gmp::UsageError
  /// naming `op`), and the receive then does not happen.
  virtual void before_receive(typename S::G g, const char* op) const = 0;

 protected:
  ~ReceiveGuard() = default;
};

/// A Go channel of T with `cap` buffered slots (0: unbuffered, every send
/// meets a receive). Each stage exports it as `Chan<T>`.
///
/// Every operation but len() and cap() must be called from a goroutine of a
/// running runtime (gmp::UsageError otherwise). A channel must outlive every
/// goroutine that blocks on it (a fatal error otherwise), and belongs to
/// one runtime at a time: an operation that would wake a goroutine of
/// another runtime throws gmp::UsageError, changing nothing. A Timer's
/// channel (time.h) belongs to the Timer's runtime for good: a receive
/// from it by a goroutine of another runtime is such an error too.
template <class T, Scheduler S>
class BasicChan {
  static_assert(std::is_nothrow_move_constructible_v<T> &&
                    std::is_nothrow_move_assignable_v<T>,
                "Chan<T>: T must be nothrow-movable, because values are moved "
                "between goroutines while the channel's lock is held");

 public:
  /// A channel with `capacity` buffered slots; 0 makes it unbuffered.
  /// Throws gmp::Panic("makechan: size out of range"), as Go does, for a
  /// capacity no buffer can have (std::bad_alloc if memory runs out).
  explicit BasicChan(std::size_t capacity = 0)
      : cap_(capacity), buf_(checked_capacity(capacity)) {}
  BasicChan(const BasicChan&) = delete;
  BasicChan& operator=(const BasicChan&) = delete;

  /// Fatal error if goroutines are still blocked on the channel.
  ~BasicChan() {
    std::lock_guard lk(lock_);
    if (recvq_.empty() && sendq_.empty()) return;  // nobody waits: no message
    std::string waiters;
    recvq_.describe(WaitReason::kChanReceive, waiters);
    sendq_.describe(WaitReason::kChanSend, waiters);
    check_not_waited_on("Chan", waiters);
  }

  /// Sends `value` (Go's `ch <- v`), blocking until a receiver takes it or
  /// a buffer slot is free. Throws gmp::Panic("send on closed channel") if
  /// the channel is closed, or closed while the sender waits.
  void send(T value) {
    G g = S::current_g("Chan::send");
    std::unique_lock lk(lock_);
    check_send(g, lk, "Chan::send");
    Sudog* wake = nullptr;
    if (send_now(value, wake)) {
      lk.unlock();
      if (wake != nullptr) S::ready(*wake);
      return;
    }
    OwnSudog<S> me(g);  // block until a receiver takes `value`
    me->elem = &value;
    park_on<S>(sendq_, *me, lk, WaitReason::kChanSend);
    if (!me->success) throw Panic("send on closed channel");  // woken by close
  }

  /// Sends `value` only if that needs no wait (Go's `select { case ch <- v:
  /// default: }`): a receiver waits, or the buffer has room. Returns
  /// whether it was sent; `value` is moved from only then. Throws
  /// gmp::Panic("send on closed channel") if the channel is closed.
  bool try_send(T& value) {
    G g = S::current_g("Chan::try_send");
    std::unique_lock lk(lock_);
    check_send(g, lk, "Chan::try_send");
    Sudog* wake = nullptr;
    if (!send_now(value, wake)) return false;
    lk.unlock();
    if (wake != nullptr) S::ready(*wake);
    return true;
  }
  /// try_send of a temporary (dropped if not sent).
  bool try_send(T&& value) { return try_send(value); }

  /// Receives a value (Go's `v, ok := <-ch`), blocking until one is there.
  /// Returns std::nullopt (Go's ok == false) once the channel is closed and
  /// its buffer drained.
  std::optional<T> recv() {
    G g = S::current_g("Chan::recv");
    check_receiver(g, "Chan::recv");
    std::unique_lock lk(lock_);
    check_same_runtime<S>(sendq_, g, "Chan::recv", /*all=*/false);
    std::optional<T> slot;
    Sudog* wake = nullptr;
    if (recv_now(slot, wake)) {
      lk.unlock();
      if (wake != nullptr) S::ready(*wake);
      return slot;
    }
    OwnSudog<S> me(g);  // block until a sender fills `slot`
    me->elem = &slot;
    park_on<S>(recvq_, *me, lk, WaitReason::kChanReceive);
    return slot;  // still empty when woken by close
  }

  /// Receives only if that needs no wait (Go's `select { case v, ok :=
  /// <-ch: default: }`): returns false if nothing is there and the channel
  /// is open; else true, with `out` the value, or std::nullopt if the
  /// channel is closed and drained (Go's ok == false).
  bool try_recv(std::optional<T>& out) {
    G g = S::current_g("Chan::try_recv");
    check_receiver(g, "Chan::try_recv");
    std::unique_lock lk(lock_);
    check_same_runtime<S>(sendq_, g, "Chan::try_recv", /*all=*/false);
    std::optional<T> slot;
    Sudog* wake = nullptr;
    if (!recv_now(slot, wake)) return false;
    lk.unlock();
    if (wake != nullptr) S::ready(*wake);
    out = std::move(slot);
    return true;
  }

  /// Closes the channel (Go's `close(ch)`): wakes all blocked receivers
  /// (they get std::nullopt) and senders (they panic). Throws
  /// gmp::Panic("close of closed channel") if it is already closed.
  void close() {
    G g = S::current_g("Chan::close");
    std::unique_lock lk(lock_);
    if (closed_) {
      lk.unlock();
      throw Panic("close of closed channel");
    }
    detail::ChanAccess<T, S>::check_close(this, g, "Chan::close");
    Sudog* receivers = nullptr;  // their success stays false
    Sudog* senders = nullptr;
    detail::ChanAccess<T, S>::close_now(this, receivers, senders);
    lk.unlock();
    ready_all<S>(receivers);
    ready_all<S>(senders);
  }

  /// Number of buffered values (Go's len(ch)). Any thread; a snapshot.
  std::size_t len() const {
    std::lock_guard lk(lock_);
    return qcount_;
  }

  /// Buffer capacity (Go's cap(ch)). Any thread.
  std::size_t cap() const noexcept { return cap_; }

 private:
  friend struct detail::ChanAccess<T, S>;
  using G = typename S::G;
  using Sudog = gmp::Sudog<G>;

  static std::size_t checked_capacity(std::size_t capacity) {
    if (capacity > std::vector<std::optional<T>>().max_size()) {
      throw Panic("makechan: size out of range");
    }
    return capacity;
  }

  std::size_t next(std::size_t i) const noexcept {
    return i + 1 == cap_ ? 0 : i + 1;
  }

  // The channel's ReceiveGuard, if it has one, before `g` receives.
  void check_receiver(G g, const char* op) const {
    if (guard_ != nullptr) [[unlikely]] guard_->before_receive(g, op);
  }

  // Go's chansend's checks, lock_ held: a send on a closed channel panics
  // (the lock released first), and a receiver it would wake must be of the
  // sender's runtime.
  void check_send(G g, std::unique_lock<RuntimeLock>& lk, const char* op) {
    if (closed_) {
      lk.unlock();
      throw Panic("send on closed channel");
    }
    check_same_runtime<S>(recvq_, g, op, /*all=*/false);
  }

  // The part of a send that needs no wait (Go's chansend before its park),
  // lock_ held and the channel open: `value` goes to a waiting receiver
  // (claimed and returned in `wake`, to be readied once lock_ is released)
  // or into the buffer. Whether it went; `value` is moved from only then.
  bool send_now(T& value, Sudog*& wake) {
    if (Sudog* r = recvq_.dequeue()) {  // a receiver waits: hand it over
      static_cast<std::optional<T>*>(r->elem)->emplace(std::move(value));
      r->success = true;
      wake = r;
      return true;
    }
    if (qcount_ < cap_) {  // room in the buffer
      buf_[sendx_].emplace(std::move(value));
      sendx_ = next(sendx_);
      ++qcount_;
      return true;
    }
    return false;
  }

  // The part of a receive that needs no wait (Go's chanrecv before its
  // park), lock_ held: a waiting sender's value (the sender claimed and
  // returned in `wake`), a buffered value, or, closed and drained, nothing
  // (`slot` stays empty). Whether the receive completed.
  bool recv_now(std::optional<T>& slot, Sudog*& wake) {
    if (Sudog* s = sendq_.dequeue()) {
      slot.emplace(take_from_sender(*s));
      wake = s;
      return true;
    }
    if (qcount_ > 0) {  // a buffered value
      slot.emplace(std::move(*buf_[recvx_]));
      buf_[recvx_].reset();
      recvx_ = next(recvx_);
      --qcount_;
      return true;
    }
    return closed_;
  }

  // Go's recv(): sender `s` was claimed from sendq_ with lock_ held.
  // Unbuffered: take the sender's value. Buffer full: take its head, and
  // the sender's value goes to the tail (the slot just freed).
  T take_from_sender(Sudog& s) {
    T& sent = *static_cast<T*>(s.elem);
    T v = std::move(cap_ == 0 ? sent : *buf_[recvx_]);
    if (cap_ != 0) {
      *buf_[recvx_] = std::move(sent);
      recvx_ = next(recvx_);
      sendx_ = recvx_;
    }
    s.success = true;
    return v;
  }

  const std::size_t cap_;  // immutable
  // Asked before every receive, or null. Set by time.h or context.h
  // before the channel is shared (ChanAccess::bind); immutable after.
  const ReceiveGuard<S>* guard_ = nullptr;

  mutable RuntimeLock lock_;  // Go's hchan.lock; guards everything below
  std::vector<std::optional<T>> buf_;  // ring of cap_ slots
  std::size_t qcount_ = 0;  // values in buf_
  std::size_t sendx_ = 0;   // next slot to fill
  std::size_t recvx_ = 0;   // next slot to drain
  bool closed_ = false;
  WaitQ<G> recvq_;  // receivers parked on an empty channel
  WaitQ<G> sendq_;  // senders parked on a full channel
};

namespace detail {

// What select (select.h) and the timers (time.h) need of a channel beyond
// its public operations: its lock, queues, and the parts of send and
// receive that need no wait. The callers hold the lock where Chan would.
template <class T, class S>
struct ChanAccess {
  using Chan = BasicChan<T, S>;
  using Sudog = gmp::Sudog<typename S::G>;
  static RuntimeLock* lock(Chan* c) { return &c->lock_; }
  static WaitQ<typename S::G>& recvq(Chan* c) { return c->recvq_; }
  static WaitQ<typename S::G>& sendq(Chan* c) { return c->sendq_; }
  static bool closed(Chan* c) { return c->closed_; }
  static bool send_now(Chan* c, T& v, Sudog*& wake) {
    return c->send_now(v, wake);
  }
  static bool recv_now(Chan* c, std::optional<T>& slot, Sudog*& wake) {
    return c->recv_now(slot, wake);
  }
  static void bind(Chan* c, const ReceiveGuard<S>* guard) {
    c->guard_ = guard;  // before the channel is shared
  }
  static void check_receiver(Chan* c, typename S::G g, const char* op) {
    c->check_receiver(g, op);
  }
  // close()'s parts, for context.h's cancel, which closes many channels
  // at once: the check that every waiter may be woken by goroutine `g`
  // (gmp::UsageError naming `op`), then the close itself, which hands out
  // the chains to ready_all once unlocked; false if already closed.
  static void check_close(Chan* c, typename S::G g, const char* op) {
    check_same_runtime<S>(c->recvq_, g, op, /*all=*/true);
    check_same_runtime<S>(c->sendq_, g, op, /*all=*/true);
  }
  static bool close_now(Chan* c, Sudog*& receivers, Sudog*& senders) {
    if (c->closed_) return false;
    c->closed_ = true;
    receivers = c->recvq_.dequeue_all();
    senders = c->sendq_.dequeue_all();
    return true;
  }
  static bool drop_buffered(Chan* c) {  // a value in the buffer, dropped
    if (c->qcount_ == 0) return false;
    c->buf_[c->recvx_].reset();
    c->recvx_ = c->next(c->recvx_);
    --c->qcount_;
    return true;
  }
};

}  // namespace detail

}  // namespace gmp
