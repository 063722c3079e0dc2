// Exercise 02: a Go channel of int for OS threads (Go's hchan, chan.go).
//
// The interface and the fields are given; write the functions in chan.cc.
// See README.md for the statement.
//
// The design is Go's: one lock per channel, a ring buffer of cap slots,
// and two FIFO queues of blocked threads (recvq, sendq), each represented by
// a Sudog on its own stack. A thread blocks by enqueueing its Sudog and
// waiting on the Sudog's condition variable until another thread (a
// matching send or receive, or close) dequeues it, fills in the result and
// wakes it. So a value goes straight from a sender to a waiting receiver,
// and an unbuffered send is a rendezvous.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <vector>

namespace gmp::exercises::chan {

/// What Go reports with a panic on a misuse of a channel, with Go's
/// message: "send on closed channel" or "close of closed channel".
class ChanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Given: a condition variable whose waits may return without a notify,
/// as POSIX allows ("spurious wake-ups"); this one makes it happen, so
/// that the tests meet it every time rather than once in a blue moon: the
/// first wait() on each Cond returns at once, the lock still held. A
/// waiter must check what it waits for after every wake-up (the wait
/// with a predicate does, in a loop).
class Cond {
 public:
  /// Releases `lk` and waits for a notify; returns with `lk` held. May
  /// return without one (the first call always does).
  void wait(std::unique_lock<std::mutex>& lk) {
    if (!woke_spuriously_) {  // protected by the caller's lock, as `done`
      woke_spuriously_ = true;
      return;
    }
    cv_.wait(lk);
  }
  /// Waits until `ready()` is true, checking it after every wake-up.
  template <class Pred>
  void wait(std::unique_lock<std::mutex>& lk, Pred ready) {
    while (!ready()) wait(lk);
  }
  /// Wakes one waiter, if one waits.
  void notify_one() noexcept { cv_.notify_one(); }
  /// Wakes every waiter.
  void notify_all() noexcept { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
  bool woke_spuriously_ = false;
};

/// One thread blocked on a channel (Go's sudog). It lives on the blocked
/// thread's stack, in recvq_ or sendq_, until a waker dequeues it.
///
/// Every field is protected by the channel's lock_. The waker (a matching
/// send or recv, or close) dequeues the Sudog, sets its fields and notifies
/// `ready`, all with lock_ held; the waiter, woken, reads them with lock_
/// held and returns, ending the Sudog's life.
struct Sudog {
  /// A sender: the value it sends. A receiver: the value it received
  /// (valid if `success`).
  int elem = 0;
  /// Set by the waker: the waiter may go (until then it keeps waiting,
  /// whatever wakes its condition variable).
  bool done = false;
  /// Set by the waker: true if a value went across, false if the waiter
  /// was woken by close().
  bool success = false;
  /// The waiter waits on it, with lock_; the waker notifies it. Its waits
  /// wake spuriously (Cond): check `done`.
  Cond ready;
};

/// A channel of int with `cap` buffered slots (0: unbuffered).
///
/// Thread safety: every function may be called by any thread at any time.
/// A channel must outlive every call on it (destroy it only when no thread
/// is blocked in send or recv).
class Chan {
 public:
  /// Go's makechan: a channel with `capacity` buffered slots; 0 makes it
  /// unbuffered, so that every send meets a receive.
  explicit Chan(std::size_t capacity);

  Chan(const Chan&) = delete;
  Chan& operator=(const Chan&) = delete;

  /// Go's `ch <- v` (chansend). Hands `v` to the oldest blocked receiver if
  /// there is one; else puts it in the buffer if there is room; else blocks
  /// until a receiver takes it. An unbuffered send therefore returns only
  /// after a receiver has taken the value.
  /// Throws ChanError("send on closed channel") if the channel is closed,
  /// also if it is closed while this sender is blocked (the value is then
  /// not sent).
  void send(int v);

  /// Go's `v, ok := <-ch` (chanrecv). Takes the oldest value: a buffered
  /// one, or that of a blocked sender; else blocks until a sender comes.
  /// Once the channel is closed, still returns the buffered values, in
  /// order, then std::nullopt (Go's ok == false) at once, every time.
  std::optional<int> recv();

  /// Go's close(ch) (closechan). No value can be sent afterwards; every
  /// blocked receiver wakes with std::nullopt and every blocked sender
  /// with ChanError("send on closed channel"). Buffered values stay, for
  /// receivers to drain. Throws ChanError("close of closed channel") if the
  /// channel is already closed.
  void close();

  /// Go's len(ch): values in the buffer (not counting blocked senders'). A
  /// snapshot.
  std::size_t len() const;

  /// Go's cap(ch): the buffer's capacity.
  std::size_t cap() const;

 private:
  const std::size_t cap_;  // immutable; Go's dataqsiz

  // Everything below is protected by lock_ (Go's hchan.lock).
  mutable std::mutex lock_;
  std::vector<int> buf_;    // ring of cap_ slots (Go's buf)
  std::size_t qcount_ = 0;  // values in buf_
  std::size_t sendx_ = 0;   // slot the next buffered send fills
  std::size_t recvx_ = 0;   // slot the next buffered receive takes
  bool closed_ = false;
  std::deque<Sudog*> recvq_;  // receivers blocked on an empty channel
  std::deque<Sudog*> sendq_;  // senders blocked on a full channel
};

}  // namespace gmp::exercises::chan
