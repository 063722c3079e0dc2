// Exercise 02, reference solution: Go's makechan, chansend, chanrecv and
// closechan (runtime/chan.go), with a thread's condition variable where Go
// parks a goroutine.
#include "exercises/02_channel/chan.h"

namespace gmp::exercises::chan {
namespace {

// Go's gopark, for a thread: waits, releasing `lk` (the channel's lock),
// until a waker has dequeued `me` and marked it done. Spurious wake-ups
// and wake-ups meant for nobody are absorbed by the `done` check.
void gopark(Sudog& me, std::unique_lock<std::mutex>& lk) {
  me.ready.wait(lk, [&me] { return me.done; });
}

// Go's goready: wakes the waiter of `sg`, which the caller has just
// dequeued. The caller holds the channel's lock, and must: once `done` is
// visible the waiter may return and its Sudog (on its stack) be gone, so
// the notify must come before the waiter can reacquire the lock.
void goready(Sudog& sg, bool success) {
  sg.success = success;
  sg.done = true;
  sg.ready.notify_one();
}

Sudog* dequeue(std::deque<Sudog*>& q) {
  Sudog* sg = q.front();
  q.pop_front();
  return sg;
}

}  // namespace

Chan::Chan(std::size_t capacity) : cap_(capacity), buf_(capacity) {}

void Chan::send(int v) {
  std::unique_lock lk(lock_);
  if (closed_) throw ChanError("send on closed channel");
  if (!recvq_.empty()) {
    // A receiver waits, so the buffer is empty: hand v straight to it
    // (Go's send), no trip through the buffer.
    Sudog* r = dequeue(recvq_);
    r->elem = v;
    goready(*r, true);
    return;
  }
  if (qcount_ < cap_) {  // room in the buffer
    buf_[sendx_] = v;
    sendx_ = (sendx_ + 1) % cap_;
    ++qcount_;
    return;
  }
  // Full (or unbuffered with nobody there): wait for a receiver to take v.
  Sudog me;
  me.elem = v;
  sendq_.push_back(&me);
  gopark(me, lk);
  if (!me.success) throw ChanError("send on closed channel");  // closed
}

std::optional<int> Chan::recv() {
  std::unique_lock lk(lock_);
  if (!sendq_.empty()) {
    // A sender waits (Go's recv), so the buffer is empty or full.
    Sudog* s = dequeue(sendq_);
    int v = s->elem;  // unbuffered: straight from the sender
    if (cap_ > 0) {
      // Full: take the oldest value, and the sender's value goes in the
      // slot just freed, at the tail, so FIFO order holds.
      v = buf_[recvx_];
      buf_[recvx_] = s->elem;
      recvx_ = (recvx_ + 1) % cap_;
      sendx_ = recvx_;
    }
    goready(*s, true);
    return v;
  }
  if (qcount_ > 0) {  // a buffered value
    int v = buf_[recvx_];
    recvx_ = (recvx_ + 1) % cap_;
    --qcount_;
    return v;
  }
  if (closed_) return std::nullopt;  // closed and drained
  Sudog me;  // empty: wait for a sender, or for close
  recvq_.push_back(&me);
  gopark(me, lk);
  if (!me.success) return std::nullopt;  // woken by close
  return me.elem;
}

void Chan::close() {
  std::lock_guard lk(lock_);
  if (closed_) throw ChanError("close of closed channel");
  closed_ = true;
  // Wake every waiter, with lock_ held (see goready). Receivers get
  // "closed"; senders panic. No new waiter can queue: closed_ is set.
  while (!recvq_.empty()) goready(*dequeue(recvq_), false);
  while (!sendq_.empty()) goready(*dequeue(sendq_), false);
}

std::size_t Chan::len() const {
  std::lock_guard lk(lock_);
  return qcount_;
}

std::size_t Chan::cap() const { return cap_; }  // immutable: no lock

}  // namespace gmp::exercises::chan
