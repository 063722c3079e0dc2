/// \file
/// The network poller over epoll (Go's netpoll.go and netpoll_epoll.go).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "common/runtime_lock.h"
#include "stage2_global_queue/g.h"
#include "stage4_syscalls/poll_desc.h"

namespace gmp::stage4 {

/// One epoll instance and the descriptors registered with it.
///
/// The goroutine side (wait, set_deadline, close) parks and wakes
/// goroutines; the scheduler side (poll) is called by an M looking for work,
/// and returns the goroutines that may continue. The poller never schedules
/// anything itself: it hands lists of goroutines to its caller, which makes
/// them runnable (stage4::Runtime). Thread-safe.
///
/// Lock order: a PollDesc's lock, then the poller's lock (mu_), then the
/// scheduler's.
class Netpoller {
 public:
  using Clock = std::chrono::steady_clock;  ///< the deadlines' clock
  using G = stage2::G;  ///< the goroutines it parks and readies

  /// What a goroutine's wait ended with.
  enum class Wake : std::uint8_t {
    kRetry,    ///< an edge arrived (or may have): try the call again
    kClosed,   ///< the descriptor is being closed
    kTimeout,  ///< the direction's deadline has passed
  };

  /// Makes the epoll instance and its wake-up eventfd; std::system_error
  /// if the kernel refuses (EMFILE, ENOMEM).
  Netpoller();
  /// Closes the epoll instance. Descriptors still registered are closed too.
  ~Netpoller();
  Netpoller(const Netpoller&) = delete;
  Netpoller& operator=(const Netpoller&) = delete;

  // ---- The goroutine side -----------------------------------------------------

  /// Registers non-blocking `fd` for both directions, edge-triggered (Go's
  /// poll_runtime_pollOpen). std::system_error on failure; fd unchanged.
  PollDesc* open(int fd);

  /// Takes a reference for a call in `mode` on pd, unless pd is closing or
  /// the mode's deadline has passed (Go's fdMutex rwlock + prepareRead):
  /// kRetry means taken; the caller must release() it.
  Wake acquire(PollDesc* pd, PollMode mode);
  /// Drops it; the last reference of a closing pd closes the descriptor.
  void release(PollDesc* pd);
  /// The owner lets pd go (after close()): it returns to the cache once
  /// its descriptor is closed.
  void free(PollDesc* pd);
  /// For the destructor of pd's owner (`object`: "Conn", "Listener"): a
  /// fatal error, listing them, if calls are under way on pd (goroutines
  /// parked in read, write or accept, or running one on another M). They
  /// would go on inside the destroyed object, as goroutines woken inside a
  /// destroyed Chan would (common/scheduler.h). Any thread.
  void check_unused(PollDesc* pd, std::string_view object);

  /// Parks the calling goroutine until pd's `mode` is ready, pd closes or
  /// the deadline passes (Go's netpollblock). Consumes a ready token
  /// without parking. The host makes woken goroutines runnable. Goroutine
  /// only (the caller checked); throws gmp::Goexit if main returned.
  Wake wait(PollDesc* pd, PollMode mode);

  /// Sets pd's deadline for `mode` (max: none). Goroutines waiting in that
  /// direction wake to re-check it (through the host).
  void set_deadline(PollDesc* pd, PollMode mode, Clock::time_point t);

  /// Starts closing pd (Go's poll_runtime_pollUnblock then pollClose): new
  /// waits fail, waiters wake with kClosed; the descriptor itself is closed
  /// when the last call under way releases it. False if pd was already
  /// closing.
  bool close(PollDesc* pd);

  // ---- The scheduler side -----------------------------------------------------

  /// Go's netpoll: collects into `out` the goroutines whose descriptors
  /// became ready or whose deadlines passed. Waits for events until `until`
  /// (now or earlier: not at all; max: until woken). Only one M waits at a
  /// time; the runtime sees to that.
  void poll(Clock::time_point until, std::vector<G*>& out);

  /// Go's netpollBreak: ends a poll() under way, or the next one.
  void interrupt();

  /// The scheduler the poller serves (stage4::Runtime).
  struct Host {
    /// A goroutine is about to park and nobody else waits on any
    /// descriptor: make sure that an M watches. PollDesc lock held.
    virtual void first_waiter() = 0;
    /// Make runnable the goroutines a close or deadline change woke.
    virtual void ready_list(std::vector<G*>& gs) = 0;

   protected:
    ~Host() = default;
  };

  /// Attaches the host (null: detaches), and names its runtime (`owner`),
  /// whose goroutines alone may wait here. Not while goroutines wait.
  void attach(Host* host, const void* owner) {
    owner_ = owner;
    host_.store(host, std::memory_order_release);
  }
  /// The runtime of the attached host (compared with the caller's).
  const void* owner() const noexcept { return owner_; }

  /// Goroutines parked on descriptors (Go's netpollWaiters). Relaxed: a
  /// hint for the scheduler, rechecked under locks where it matters.
  int waiters() const noexcept {
    return waiters_.load(std::memory_order_relaxed);
  }

  /// When the last poll() returned (stage 5's sysmon polls when nobody has
  /// for 10 ms). Relaxed: a hint.
  Clock::time_point last_poll() const noexcept {
    return Clock::time_point(std::chrono::nanoseconds(
        last_poll_ns_.load(std::memory_order_relaxed)));
  }

  /// The earliest armed deadline, or max.
  Clock::time_point earliest_deadline();

  /// Counters, for the runtime's stats.
  std::uint64_t polls() const noexcept { return polls_.load(); }
  /// Descriptor events epoll reported, for the runtime's stats.
  std::uint64_t events() const noexcept { return events_.load(); }
  /// Waits ended by a deadline, for the runtime's stats.
  std::uint64_t timeouts() const noexcept { return timeouts_.load(); }

 private:
  struct Deadline {
    Clock::time_point when;
    PollDesc* pd;
    std::uint64_t seq;
    PollMode mode;
  };
  /// A timer for pd's current deadline in `mode`. pd->lock held.
  void arm_deadline(PollDesc* pd, PollMode mode);
  void expire_deadlines(Clock::time_point now, std::vector<G*>& out);
  static void take_waiters(PollDesc* pd, PollMode mode, std::vector<G*>& out);
  void wake(std::vector<G*>& gs);  // through the host
  /// The last reference of a closing pd is gone: unregisters and closes
  /// the descriptor; back to the cache if its owner has let it go. pd->lock
  /// held (refs zero, closing); the cache's lock nests inside it.
  void destroy(PollDesc* pd);

  int epfd_ = -1;  // immutable after construction
  int evfd_ = -1;  // eventfd that interrupt() writes; immutable

  RuntimeLock mu_;  // protects the cache and the deadline heap
  std::vector<std::unique_ptr<PollDesc>> all_;  // every PollDesc made
  PollDesc* free_ = nullptr;                    // the cache's free list
  std::vector<Deadline> deadlines_;             // min-heap by `when`

  std::atomic<int> waiters_{0};
  /// Attached while its runtime lives (acquire: the host is fully built).
  std::atomic<Host*> host_{nullptr};
  const void* owner_ = nullptr;  // written with host_, before any wait
  /// interrupt() wrote the eventfd and no blocking poll() has drained it
  /// yet (a non-blocking one leaves it for the M in epoll_wait): later
  /// interrupts need not write again (acq_rel: the drain publishes).
  std::atomic<bool> interrupted_{false};
  /// The end of the poll() now waiting (as nanoseconds since the clock's
  /// epoch; max when none): a deadline armed earlier must interrupt it.
  std::atomic<std::int64_t> poll_until_{INT64_MAX};
  std::atomic<std::uint64_t> polls_{0}, events_{0}, timeouts_{0};
  std::atomic<std::int64_t> last_poll_ns_{0};  // see last_poll()
  /// Bumped (release) by open() before epoll_ctl, read (acquire) by poll()
  /// after epoll_wait: the kernel orders a registration before its events,
  /// and this states that order in C++ terms, so that a new PollDesc's
  /// initialisation happens-before the poller reads it (ThreadSanitizer
  /// cannot see through the kernel).
  std::atomic<std::uint64_t> opened_{0};
};

}  // namespace gmp::stage4
