// Exercise 10: the netpoller's park and wake (Go's netpollblock,
// netpollunblock, netpoll and poll_runtime_pollUnblock; runtime/netpoll.go
// and netpoll_epoll.go).
//
// Threads stand in for goroutines: a reader thread that would block parks
// on its Parker (Go's gopark), and the poller thread wakes it (goready).
// The interface and the provided pieces (Parker, PollDesc, the epoll
// instance and the registration) are given; write the five functions of
// netpoll.cc. See README.md for the statement.
//
// The read semaphore (Go's pollDesc.rg)
// =====================================
// One word per descriptor says what the reader and the poller know:
//
//   pdNil    nothing: no reader waits and no readiness is pending
//   pdReady  an edge arrived that no reader has used yet (a token)
//   pdWait   a reader is about to park (announced, not committed)
//   Parker*  that reader is parked: whoever takes the pointer wakes it
//
// The reader moves it nil -> wait (announce), then wait -> Parker*
// (commit, inside park()); or ready -> nil (consume a token). The poller
// moves anything -> ready, taking the Parker* if one was there; close
// moves a Parker* or wait to nil. Every move is a compare-and-swap, so a
// move made on a stale value fails and is retried: that is how no edge is
// ever lost, even with edge-triggered epoll, which reports an edge once.
#pragma once

#include <sys/epoll.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "exercises/testing/atomic.h"

namespace gmp::exercises::netpoll {

// ---- Provided: test hooks ------------------------------------------------------

/// Test-only: a delay that the provided code runs where Go's runtime may
/// lose the CPU: after each read system call (sysread) and inside park()
/// before the commit. A test thread sets its own (it is thread_local) to
/// a Chaos point, to shake the interleavings; empty by default.
inline thread_local std::function<void()> chaos_hook;

/// Runs this thread's chaos_hook, if any. Provided code only.
inline void chaos_delay() {
  if (chaos_hook) chaos_hook();
}

// ---- Provided: the Parker (Go's gopark / goready) -------------------------------

/// One thread's way to sleep until another wakes it: stands in for a
/// goroutine (Go's g) as far as parking goes. Each reader thread owns one.
/// A binary permit: an unpark() that comes before the owner sleeps is not
/// lost, the owner then does not sleep at all.
class Parker {
 public:
  Parker() = default;
  Parker(const Parker&) = delete;
  Parker& operator=(const Parker&) = delete;

  /// Go's gopark(netpollblockcommit, ...): calls `commit()`, and if it
  /// returns true, blocks until unpark(); if it returns false, returns at
  /// once (a wake-up has already happened, nobody will call unpark()).
  /// `commit` is where the reader publishes itself (Go: the CAS of rg from
  /// pdWait to the g). Before it, chaos_delay(): the window in which Go's
  /// gopark switches to g0. The owner thread only, one park at a time.
  template <class Commit>
  void park(Commit&& commit) {
    chaos_delay();
    {
      std::lock_guard<Mutex> lk(mu_);
      armed_ = true;  // from here an unpark() is expected
    }
    if (!commit()) {
      std::lock_guard<Mutex> lk(mu_);
      armed_ = false;
      return;
    }
    std::unique_lock<Mutex> lk(mu_);
    parks_.fetch_add(1, std::memory_order_relaxed);
    parked_.store(true, std::memory_order_relaxed);
    cv_.wait(lk, [this] { return permit_; });
    parked_.store(false, std::memory_order_relaxed);
    permit_ = false;
    armed_ = false;
  }

  /// Go's goready: wakes the owner from park(), or lets its coming park()
  /// return at once. Any thread; exactly once per committed park: an
  /// unpark() of a Parker that has not committed, or that has a wake-up
  /// pending already, is counted in stray_wakes() (a bug: a waiter handed
  /// out twice, or a stale pointer).
  void unpark() {
    // Notify under the lock: once we let go, the owner may return and
    // destroy *this.
    std::lock_guard<Mutex> lk(mu_);
    if (!armed_ || permit_) stray_wakes_.fetch_add(1, std::memory_order_relaxed);
    permit_ = true;
    cv_.notify_one();
  }

  /// The owner is blocked in park() now. A snapshot, for tests.
  bool parked() const { return parked_.load(std::memory_order_relaxed); }

  /// How many times the owner blocked in park() (commits that returned
  /// true). For tests.
  int parks() const { return parks_.load(std::memory_order_relaxed); }

  /// Across all Parkers of the process: the unpark() calls counted as
  /// stray (see unpark()). Tests expect it not to grow.
  static int stray_wakes() {
    return stray_wakes_.load(std::memory_order_relaxed);
  }

 private:
  Mutex mu_;                    // protects permit_ and armed_
  CondVar cv_;                  // the owner waits here for permit_
  bool permit_ = false;         // an unpark() the owner has not consumed
  bool armed_ = false;          // the owner is in park(), past its start
  std::atomic<bool> parked_{false};  // relaxed: a snapshot for tests
  std::atomic<int> parks_{0};        // relaxed: a counter for tests
  inline static std::atomic<int> stray_wakes_{0};  // relaxed: a counter
};

// ---- Provided: the poll descriptor -------------------------------------------

/// The values of PollDesc::rg that are not a waiter: Go's nil (named here,
/// pdNil), pdReady and pdWait. A Parker* never equals one of them
/// (alignment).
inline constexpr std::uintptr_t pdNil = 0;
inline constexpr std::uintptr_t pdReady = 1;
inline constexpr std::uintptr_t pdWait = 2;
static_assert(alignof(Parker) > pdWait, "a Parker* must not look like a state");

/// What the runtime knows of one descriptor it polls (Go's pollDesc, read
/// direction only). One reader thread at a time may wait on it.
struct PollDesc {
  /// The descriptor: non-blocking, registered edge-triggered for reading.
  /// Set by Netpoller::open(), then immutable. Not closed by the poller.
  int fd = -1;

  /// pollunblock() began: reads fail with ClosedError. Written once
  /// (false -> true) by pollunblock; read by readers (see netpollblock for
  /// the memory order).
  Atomic<bool> closing{false};

  /// The read semaphore (Go's pd.rg): pdNil, pdReady, pdWait, or the
  /// parked reader's Parker* (reinterpret_cast to and from uintptr_t). See
  /// the top of this file. Changed only by compare-and-swap or exchange:
  /// by the reader (netpollblock) and by the poller and the closer
  /// (netpollunblock).
  Atomic<std::uintptr_t> rg{pdNil};
};

/// What a read of a descriptor that is being closed throws (Go's
/// poll.ErrNetClosing).
class ClosedError : public std::runtime_error {
 public:
  ClosedError() : std::runtime_error("use of closed network connection") {}
};

/// The non-blocking read(2) of pd's descriptor, EINTR retried: the bytes
/// read, 0 at end of file, or -1 with errno set (EAGAIN: nothing to read
/// now). Provided (Go's syscall.Read under ignoringEINTRIO); runs
/// chaos_delay() after the call. Any thread.
inline ssize_t sysread(PollDesc* pd, void* buf, std::size_t n) {
  ssize_t r;
  do {
    r = ::read(pd->fd, buf, n);
  } while (r < 0 && errno == EINTR);
  int err = errno;
  chaos_delay();
  errno = err;
  return r;
}

// ---- The exercise: the reader's side ------------------------------------------

/// Go's netpollblock (with its commit, netpollblockcommit): the calling
/// reader, whose read just failed with EAGAIN, waits for pd to be ready.
///   - A pending token (pdReady): consumes it, returns true, no park.
///   - Else announces pdWait; then, unless pd is closing, parks through
///     self.park(commit), where commit moves rg from pdWait to &self and
///     fails if the poller or the closer changed rg meanwhile.
///   - Woken, or not parked: takes what rg holds (back to pdNil) and
///     returns true if it was pdReady (retry the read), false if not (pd is
///     closing: the caller checks).
/// A second reader waiting on the same pd is a bug: std::logic_error. The
/// reader thread that owns `self` only.
bool netpollblock(PollDesc* pd, Parker& self);

/// Go's fd.Read with poll_runtime_pollWait: reads up to n > 0 bytes from
/// pd into buf. Returns at once what is there (at least 1 byte), 0 at end
/// of file; if nothing is there (sysread's EAGAIN), waits in netpollblock
/// and tries again. Throws ClosedError if pd is closing when the call
/// starts or while it waits, std::system_error for other read errors. The
/// reader thread that owns `self` only.
std::size_t fd_read(PollDesc* pd, void* buf, std::size_t n, Parker& self);

// ---- The exercise: the poller's and the closer's side ---------------------------

/// Go's netpollunblock: tells pd's read direction that it is ready
/// (`ioready`, from the poller) or that its waiter must look at `closing`
/// (!ioready, from pollunblock). Returns the parked reader to wake (the
/// caller calls unpark() on it), or null:
///   - pdReady: stays; null.
///   - pdNil: becomes pdReady if ioready (a token for the next reader),
///     else stays; null.
///   - pdWait: becomes pdReady (ioready) or pdNil; null (the reader's
///     commit will fail, and it looks again).
///   - a Parker*: becomes pdReady (ioready) or pdNil; that Parker.
/// Any thread.
Parker* netpollunblock(PollDesc* pd, bool ioready);

/// Go's poll_runtime_pollUnblock (what closing a descriptor starts): marks
/// pd closing and wakes its parked reader, which fails with ClosedError;
/// later reads fail too. The descriptor stays open (its owner closes it).
/// Any thread; calling it twice is harmless.
void pollunblock(PollDesc* pd);

// ---- The epoll instance ----------------------------------------------------------

/// One epoll instance and the descriptors registered with it (Go's netpoll
/// on Linux). open() is provided; write netpoll(). Thread-safe.
class Netpoller {
 public:
  /// Events read by one netpoll() at most (Go reads 128).
  static constexpr int kMaxEvents = 128;

  /// Makes the epoll instance (provided). std::system_error on failure.
  Netpoller() : epfd_(epoll_create1(EPOLL_CLOEXEC)) {
    if (epfd_ < 0) {
      throw std::system_error(errno, std::generic_category(), "epoll_create1");
    }
  }
  /// Closes the epoll instance (not the registered descriptors).
  ~Netpoller() { ::close(epfd_); }
  Netpoller(const Netpoller&) = delete;
  Netpoller& operator=(const Netpoller&) = delete;

  /// Registers non-blocking `fd` for reading, edge-triggered (EPOLLIN |
  /// EPOLLRDHUP | EPOLLET), with its new PollDesc as the event's data.ptr
  /// (Go's poll_runtime_pollOpen). The PollDesc lives as long as the
  /// Netpoller. Provided. std::system_error on failure. Any thread.
  PollDesc* open(int fd) {
    PollDesc* pd;
    {
      std::lock_guard lk(mu_);
      pds_.push_back(std::make_unique<PollDesc>());
      pd = pds_.back().get();
    }
    pd->fd = fd;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
    ev.data.ptr = pd;
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) < 0) {
      throw std::system_error(errno, std::generic_category(), "epoll_ctl");
    }
    return pd;
  }

  /// Go's netpoll(delay): waits up to `timeout_ms` (0: not at all, -1:
  /// until an event) for registered descriptors to become readable, then
  /// for each descriptor reported readable (data, end of file, hang-up or
  /// error) calls netpollunblock(pd, true) and wakes the reader it
  /// returns (Go returns them to its caller, which makes them runnable).
  /// Returns how many readers it woke. The poller thread: one at a time.
  int netpoll(int timeout_ms);

 private:
  int epfd_;  // the epoll instance; immutable
  std::mutex mu_;  // protects pds_
  std::vector<std::unique_ptr<PollDesc>> pds_;  // every PollDesc opened
};

}  // namespace gmp::exercises::netpoll
