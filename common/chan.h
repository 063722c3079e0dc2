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
/// Only the parking differs per stage: that is the `S` parameter.
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

/// A Go channel of T with `cap` buffered slots (0: unbuffered, every send
/// meets a receive). Each stage exports it as `Chan<T>`.
///
/// Every operation but len() and cap() must be called from a goroutine of a
/// running runtime (gmp::UsageError otherwise). A channel must outlive every
/// goroutine that blocks on it (a fatal error otherwise), and belongs to
/// one runtime at a time: an operation that would wake a goroutine of
/// another runtime throws gmp::UsageError, changing nothing.
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
    std::string waiters;
    std::lock_guard lk(lock_);
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
    if (closed_) {
      lk.unlock();
      throw Panic("send on closed channel");
    }
    check_same_runtime<S>(recvq_, g, "Chan::send", /*all=*/false);
    if (Sudog* r = recvq_.dequeue()) {  // a receiver waits: hand it over
      static_cast<std::optional<T>*>(r->elem)->emplace(std::move(value));
      r->success = true;
      lk.unlock();
      S::ready(*r);
      return;
    }
    if (qcount_ < cap_) {  // room in the buffer
      buf_[sendx_].emplace(std::move(value));
      sendx_ = next(sendx_);
      ++qcount_;
      return;
    }
    Sudog me(g, S::goid(g));  // block until a receiver takes `value`
    me.elem = &value;
    park_on<S>(sendq_, me, lk, WaitReason::kChanSend);
    if (!me.success) throw Panic("send on closed channel");  // woken by close
  }

  /// Receives a value (Go's `v, ok := <-ch`), blocking until one is there.
  /// Returns std::nullopt (Go's ok == false) once the channel is closed and
  /// its buffer drained.
  std::optional<T> recv() {
    G g = S::current_g("Chan::recv");
    std::unique_lock lk(lock_);
    check_same_runtime<S>(sendq_, g, "Chan::recv", /*all=*/false);
    if (Sudog* s = sendq_.dequeue()) return recv_from_sender(*s, lk);
    if (qcount_ > 0) {  // a buffered value
      T v = std::move(*buf_[recvx_]);
      buf_[recvx_].reset();
      recvx_ = next(recvx_);
      --qcount_;
      return v;
    }
    if (closed_) return std::nullopt;
    std::optional<T> slot;  // block until a sender fills `slot`
    Sudog me(g, S::goid(g));
    me.elem = &slot;
    park_on<S>(recvq_, me, lk, WaitReason::kChanReceive);
    return slot;  // still empty when woken by close
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
    check_same_runtime<S>(recvq_, g, "Chan::close", /*all=*/true);
    check_same_runtime<S>(sendq_, g, "Chan::close", /*all=*/true);
    closed_ = true;
    Sudog* receivers = recvq_.dequeue_all();  // success stays false
    Sudog* senders = sendq_.dequeue_all();
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

  // Go's recv(): sender `s` was claimed from sendq_ with lock_ held.
  // Unbuffered: take the sender's value. Buffer full: take its head, and
  // the sender's value goes to the tail (the slot just freed).
  T recv_from_sender(Sudog& s, std::unique_lock<RuntimeLock>& lk) {
    T& sent = *static_cast<T*>(s.elem);
    T v = std::move(cap_ == 0 ? sent : *buf_[recvx_]);
    if (cap_ != 0) {
      *buf_[recvx_] = std::move(sent);
      recvx_ = next(recvx_);
      sendx_ = recvx_;
    }
    s.success = true;
    lk.unlock();
    S::ready(s);
    return v;
  }

  const std::size_t cap_;  // immutable

  mutable RuntimeLock lock_;  // Go's hchan.lock; guards everything below
  std::vector<std::optional<T>> buf_;  // ring of cap_ slots
  std::size_t qcount_ = 0;  // values in buf_
  std::size_t sendx_ = 0;   // next slot to fill
  std::size_t recvx_ = 0;   // next slot to drain
  bool closed_ = false;
  WaitQ<G> recvq_;  // receivers parked on an empty channel
  WaitQ<G> sendq_;  // senders parked on a full channel
};

}  // namespace gmp
