// Exercise 10, reference solution: Go's netpollblock (with its commit,
// netpollblockcommit), netpollunblock, poll_runtime_pollUnblock,
// poll_runtime_pollWait inside fd.Read, and netpoll (netpoll.go,
// netpoll_epoll.go, internal/poll/fd_unix.go).
//
// Who moves rg, and why nothing is lost:
//   reader   nil -> wait (announce) ... wait -> &self (commit, in park)
//            ready -> nil (consume); after a wake: anything -> nil
//   poller   nil / wait / &waiter -> ready (takes the waiter)
//   closer   wait / &waiter -> nil (takes the waiter)
// A poller that comes between the announce and the commit turns wait into
// ready: the commit's compare-and-swap then fails, the reader does not
// sleep, and finds the token. A plain store for the commit would overwrite
// the token, and the reader would sleep with nobody left to wake it.
#include "exercises/10_netpoll_park/netpoll.h"

#include <stdexcept>

namespace gmp::exercises::netpoll {

namespace {

std::uintptr_t as_rg(Parker* p) { return reinterpret_cast<std::uintptr_t>(p); }
Parker* as_waiter(std::uintptr_t v) { return reinterpret_cast<Parker*>(v); }

}  // namespace

bool netpollblock(PollDesc* pd, Parker& self) {
  // 1. Consume a token, or announce that we are about to park. A failed
  // compare-and-swap reloads `old`: decide again on the new value.
  std::uintptr_t old = pd->rg.load(std::memory_order_relaxed);  // a first guess
  for (;;) {
    if (old == pdReady) {
      // acquire: pairs with the poller's release of the token.
      if (pd->rg.compare_exchange_weak(old, pdNil, std::memory_order_acquire,
                                       std::memory_order_relaxed)) {
        return true;
      }
    } else if (old == pdNil) {
      // seq_cst: the store half of the Dekker pair with pollunblock (it
      // stores closing, then reads rg; we write rg, then read closing), so
      // that one of the two sees the other.
      if (pd->rg.compare_exchange_weak(old, pdWait, std::memory_order_seq_cst,
                                       std::memory_order_relaxed)) {
        break;
      }
    } else {
      throw std::logic_error("netpollblock: double wait (two readers on one PollDesc)");
    }
  }
  // 2. Park, unless the descriptor is closing (a closer that read rg before
  // our announce saw nobody to wake). seq_cst: the load half of the pair.
  if (!pd->closing.load(std::memory_order_seq_cst)) {
    self.park([pd, &self] {
      // Go's netpollblockcommit: wait -> &self, only if nobody changed rg
      // since the announce. release: the poller that takes the pointer
      // (acquire) may use *self.
      std::uintptr_t expected = pdWait;
      return pd->rg.compare_exchange_strong(expected, as_rg(&self),
                                            std::memory_order_release,
                                            std::memory_order_relaxed);
    });
  }
  // 3. Woken, or never asleep: what rg holds now is ours to take. pdReady
  // means readiness (retry the read), pdNil or pdWait a close. acquire:
  // pairs with the poller's or the closer's release, so a close is seen.
  std::uintptr_t now = pd->rg.exchange(pdNil, std::memory_order_acquire);
  if (now > pdWait) {
    throw std::logic_error("netpollblock: corrupted PollDesc (a waiter in rg after the wake)");
  }
  return now == pdReady;
}

std::size_t fd_read(PollDesc* pd, void* buf, std::size_t n, Parker& self) {
  for (;;) {
    // relaxed: a close racing with this check is caught by netpollblock's
    // Dekker pair; a close seen through a wake is ordered by its acquire.
    if (pd->closing.load(std::memory_order_relaxed)) throw ClosedError();
    ssize_t r = sysread(pd, buf, n);
    if (r >= 0) return static_cast<std::size_t>(r);
    if (errno != EAGAIN) {
      throw std::system_error(errno, std::generic_category(), "read");
    }
    // Go's poll_runtime_pollWait: a wake that brings no readiness means
    // the descriptor is closing (this exercise has no deadlines).
    while (!netpollblock(pd, self)) {
      if (pd->closing.load(std::memory_order_relaxed)) throw ClosedError();
    }
  }
}

Parker* netpollunblock(PollDesc* pd, bool ioready) {
  // seq_cst: in pollunblock, the load half of the Dekker pair with
  // netpollblock's announce (see there).
  std::uintptr_t old = pd->rg.load(std::memory_order_seq_cst);
  for (;;) {
    if (old == pdReady) return nullptr;  // a token is pending already
    // Nobody waits, and a close leaves no token: the next reader sees
    // closing before it parks.
    if (old == pdNil && !ioready) return nullptr;
    std::uintptr_t next = ioready ? pdReady : pdNil;
    // seq_cst: a failure reloads `old`, which is the Dekker load again (and
    // acq_rel would do on success: acquire the parked reader's Parker,
    // release the token or the close to the reader's exchange).
    if (pd->rg.compare_exchange_weak(old, next, std::memory_order_seq_cst)) {
      // pdNil or pdWait: nobody asleep (an announced reader's commit fails).
      return old > pdWait ? as_waiter(old) : nullptr;
    }
  }
}

void pollunblock(PollDesc* pd) {
  // seq_cst: the store half of the Dekker pair with netpollblock (which
  // writes rg, then reads closing); netpollunblock does the load half.
  pd->closing.store(true, std::memory_order_seq_cst);
  if (Parker* waiter = netpollunblock(pd, /*ioready=*/false)) waiter->unpark();
}

int Netpoller::netpoll(int timeout_ms) {
  epoll_event events[kMaxEvents];
  int n = epoll_wait(epfd_, events, kMaxEvents, timeout_ms);
  if (n < 0) {
    if (errno == EINTR) return 0;  // a signal: the caller polls again
    throw std::system_error(errno, std::generic_category(), "epoll_wait");
  }
  int woken = 0;
  for (int i = 0; i < n; ++i) {
    // Readable: data, the peer's end of file or hang-up, or an error (the
    // read will report it). Edge-triggered: this edge comes only once.
    constexpr std::uint32_t kReadable = EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR;
    if ((events[i].events & kReadable) == 0) continue;
    auto* pd = static_cast<PollDesc*>(events[i].data.ptr);
    if (Parker* waiter = netpollunblock(pd, /*ioready=*/true)) {
      waiter->unpark();  // Go's netpoll returns it; its caller readies it
      ++woken;
    }
  }
  return woken;
}

}  // namespace gmp::exercises::netpoll
