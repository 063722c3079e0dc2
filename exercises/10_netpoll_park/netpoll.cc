// Exercise 10: write these functions (see README.md). Each memory order you
// choose should come with a one-line reason.
#include "exercises/10_netpoll_park/netpoll.h"

#include "exercises/testing/skeleton.h"

namespace gmp::exercises::netpoll {

bool netpollblock(PollDesc* pd, Parker& self) {
  (void)pd;
  (void)self;
  not_written("netpollblock (exercises/10_netpoll_park/netpoll.cc)");
}

std::size_t fd_read(PollDesc* pd, void* buf, std::size_t n, Parker& self) {
  (void)pd;
  (void)buf;
  (void)n;
  (void)self;
  not_written("fd_read (exercises/10_netpoll_park/netpoll.cc)");
}

Parker* netpollunblock(PollDesc* pd, bool ioready) {
  (void)pd;
  (void)ioready;
  not_written("netpollunblock (exercises/10_netpoll_park/netpoll.cc)");
}

void pollunblock(PollDesc* pd) {
  (void)pd;
  not_written("pollunblock (exercises/10_netpoll_park/netpoll.cc)");
}

int Netpoller::netpoll(int timeout_ms) {
  (void)timeout_ms;
  not_written("Netpoller::netpoll (exercises/10_netpoll_park/netpoll.cc)");
}

}  // namespace gmp::exercises::netpoll
