// Stage 4: the network poller over epoll (Go's netpoll.go, netpoll_epoll.go).
#include "stage4_syscalls/netpoll.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <mutex>
#include <system_error>

#include "common/check.h"
#include "common/errors.h"
#include "common/scheduler.h"
#include "common/sudog.h"
#include "stage3_gmp/sched.h"

namespace gmp::stage4 {

namespace {

constexpr int kMaxEvents = 128;  // Go's netpoll reads up to 128 at a time

std::int64_t to_ns(Netpoller::Clock::time_point t) {
  if (t == Netpoller::Clock::time_point::max()) return INT64_MAX;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             t.time_since_epoch())
      .count();
}

// The deadline heap's order: a min-heap by time.
constexpr auto kLater = [](const auto& a, const auto& b) {
  return a.when > b.when;
};

// epoll_wait until `until`: epoll_pwait2 takes a timespec (Linux 5.11);
// older kernels get epoll_wait's milliseconds, rounded up.
int epoll_wait_until(int epfd, epoll_event* ev, Netpoller::Clock::time_point until) {
  auto now = Netpoller::Clock::now();
  if (until == Netpoller::Clock::time_point::max()) {
    return epoll_wait(epfd, ev, kMaxEvents, -1);
  }
  auto ns = until <= now ? 0 : std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   until - now).count();
  static std::atomic<bool> no_pwait2{false};
  if (!no_pwait2.load(std::memory_order_relaxed)) {
    timespec ts{static_cast<time_t>(ns / 1000000000),
                static_cast<long>(ns % 1000000000)};
    int n = epoll_pwait2(epfd, ev, kMaxEvents, &ts, nullptr);
    if (n >= 0 || errno != ENOSYS) return n;
    no_pwait2.store(true, std::memory_order_relaxed);  // kernel before 5.11
  }
  return epoll_wait(epfd, ev, kMaxEvents,
                    static_cast<int>((ns + 999999) / 1000000));
}

}  // namespace

Netpoller::Netpoller() {
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epfd_ < 0) {
    throw std::system_error(errno, std::generic_category(),
                            "netpoll: epoll_create1");
  }
  evfd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;  // level-triggered: stays reported until drained
  ev.data.ptr = nullptr;
  if (evfd_ < 0 || epoll_ctl(epfd_, EPOLL_CTL_ADD, evfd_, &ev) < 0) {
    int err = errno;
    if (evfd_ >= 0) ::close(evfd_);
    ::close(epfd_);
    throw std::system_error(err, std::generic_category(), "netpoll: eventfd");
  }
}

Netpoller::~Netpoller() {
  for (auto& pd : all_) {
    if (pd->fd >= 0) ::close(pd->fd);  // Conns keep the poller alive: none left
  }
  ::close(evfd_);
  ::close(epfd_);
}

// ---- The goroutine side ---------------------------------------------------------

PollDesc* Netpoller::open(int fd) {
  PollDesc* pd = nullptr;
  {
    std::lock_guard lk(mu_);
    if (free_ == nullptr) {
      all_.push_back(std::make_unique<PollDesc>());
      pd = all_.back().get();
    } else {
      pd = free_;
      free_ = pd->link;
    }
  }
  {
    std::lock_guard lk(pd->lock);
    pd->fd = fd;
    pd->closing = false;
    pd->orphan = false;
    pd->refs = 0;
    pd->rready = pd->wready = false;
    pd->rd = pd->wd = Clock::time_point::max();
    ++pd->rseq;  // deadline timers of the previous user are stale
    ++pd->wseq;
    pd->rtimer = pd->wtimer = false;
    pd->link = nullptr;
  }
  opened_.fetch_add(1, std::memory_order_release);  // see netpoll.h
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
  ev.data.ptr = pd;
  if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) < 0) {
    int err = errno;
    std::lock_guard lk(mu_);
    pd->fd = -1;
    pd->closing = true;
    pd->link = free_;
    free_ = pd;
    throw std::system_error(err, std::generic_category(), "netpoll: epoll_ctl");
  }
  return pd;
}

Netpoller::Wake Netpoller::acquire(PollDesc* pd, PollMode mode) {
  std::lock_guard lk(pd->lock);
  if (pd->closing) return Wake::kClosed;
  if (pd->deadline(mode) != Clock::time_point::max() &&
      Clock::now() >= pd->deadline(mode)) {
    return Wake::kTimeout;
  }
  ++pd->refs;
  return Wake::kRetry;
}

void Netpoller::release(PollDesc* pd) {
  std::lock_guard lk(pd->lock);
  GMP_CHECK(pd->refs > 0, "netpoll: release without acquire");
  if (--pd->refs == 0 && pd->closing) destroy(pd);
}

Netpoller::Wake Netpoller::wait(PollDesc* pd, PollMode mode) {
  G* gp = stage3::Sched::current_g("netpoll wait");
  Sudog<G*> s(gp, gp->goid);
  std::unique_lock lk(pd->lock);
  if (pd->closing) return Wake::kClosed;
  if (Clock::now() >= pd->deadline(mode)) return Wake::kTimeout;
  if (std::exchange(pd->ready(mode), false)) return Wake::kRetry;  // token
  if (pd->deadline(mode) != Clock::time_point::max() && !pd->timer(mode)) {
    arm_deadline(pd, mode);
  }
  s.queue = &pd->waiters(mode);
  s.lock = &pd->lock;
  pd->waiters(mode).enqueue(&s);
  if (waiters_.fetch_add(1, std::memory_order_relaxed) == 0) {
    if (Host* h = host_.load(std::memory_order_acquire)) h->first_waiter();
  }
  bool woken = stage3::Sched::park(s, ParkUnlock::of(lk.release()),
                                   WaitReason::kIOWait);
  waiters_.fetch_sub(1, std::memory_order_relaxed);
  if (!woken) throw Goexit{};  // main returned; the runtime unlinked s
  return Wake::kRetry;  // the caller re-checks closing and the deadline
}

void Netpoller::set_deadline(PollDesc* pd, PollMode mode, Clock::time_point t) {
  std::vector<G*> woken;
  {
    std::lock_guard lk(pd->lock);
    (mode == PollMode::kRead ? pd->rd : pd->wd) = t;
    ++pd->seq(mode);  // the armed timer, if any, is stale now
    pd->timer(mode) = false;
    take_waiters(pd, mode, woken);  // they re-check, and re-arm
  }
  wake(woken);
}

bool Netpoller::close(PollDesc* pd) {
  std::vector<G*> woken;
  {
    std::lock_guard lk(pd->lock);
    if (pd->closing) return false;
    pd->closing = true;
    take_waiters(pd, PollMode::kRead, woken);
    take_waiters(pd, PollMode::kWrite, woken);
    if (pd->refs == 0) destroy(pd);
  }
  wake(woken);
  return true;
}

// Waiters exist only while the host's run is under way: it is attached.
void Netpoller::wake(std::vector<G*>& gs) {
  if (gs.empty()) return;
  Host* h = host_.load(std::memory_order_acquire);
  GMP_CHECK(h != nullptr, "netpoll: goroutines wait on a detached poller");
  h->ready_list(gs);
}

// Go's netpollunblock for every waiter of one direction. pd->lock held.
void Netpoller::take_waiters(PollDesc* pd, PollMode mode, std::vector<G*>& out) {
  for (Sudog<G*>* s = pd->waiters(mode).dequeue_all(); s != nullptr;) {
    Sudog<G*>* next = s->next;  // s vanishes once its goroutine runs
    out.push_back(s->g);
    s = next;
  }
}

void Netpoller::destroy(PollDesc* pd) {
  epoll_ctl(epfd_, EPOLL_CTL_DEL, pd->fd, nullptr);  // before close: no reuse race
  ::close(pd->fd);
  pd->fd = -1;
  ++pd->rseq;
  ++pd->wseq;
  if (!pd->orphan) return;
  std::lock_guard lk(mu_);
  pd->link = free_;
  free_ = pd;
}

void Netpoller::free(PollDesc* pd) {
  std::lock_guard lk(pd->lock);
  GMP_CHECK(pd->closing, "netpoll: free of a PollDesc still open");
  pd->orphan = true;
  if (pd->fd >= 0) return;  // a call still holds it: destroy() frees it
  std::lock_guard ck(mu_);
  pd->link = free_;
  free_ = pd;
}

void Netpoller::check_unused(PollDesc* pd, std::string_view object) {
  std::string users;
  {
    std::lock_guard lk(pd->lock);
    if (pd->refs == 0) return;
    pd->readers.describe(WaitReason::kIOWait, users);
    pd->writers.describe(WaitReason::kIOWait, users);
    if (users.empty()) {  // not parked: in a system call on another M
      users = std::to_string(pd->refs) + " call(s) under way";
    }
  }
  check_not_waited_on(object, users);
}

// ---- Deadlines --------------------------------------------------------------------

void Netpoller::arm_deadline(PollDesc* pd, PollMode mode) {
  pd->timer(mode) = true;
  Clock::time_point when = pd->deadline(mode);
  {
    std::lock_guard lk(mu_);
    deadlines_.push_back(Deadline{when, pd, pd->seq(mode), mode});
    std::push_heap(deadlines_.begin(), deadlines_.end(),
                   kLater);
  }
  // A poll() already waiting would wait past it: make it look again.
  if (to_ns(when) < poll_until_.load(std::memory_order_acquire)) interrupt();
}

Netpoller::Clock::time_point Netpoller::earliest_deadline() {
  std::lock_guard lk(mu_);
  return deadlines_.empty() ? Clock::time_point::max()
                            : deadlines_.front().when;
}

void Netpoller::expire_deadlines(Clock::time_point now, std::vector<G*>& out) {
  std::vector<Deadline> due;
  {
    std::lock_guard lk(mu_);
    while (!deadlines_.empty() && deadlines_.front().when <= now) {
      std::pop_heap(deadlines_.begin(), deadlines_.end(),
                    kLater);
      due.push_back(deadlines_.back());
      deadlines_.pop_back();
    }
  }
  for (const Deadline& d : due) {  // PollDescs are never freed: safe
    std::lock_guard lk(d.pd->lock);
    if (d.pd->seq(d.mode) != d.seq) continue;  // changed or closed since
    d.pd->timer(d.mode) = false;
    std::size_t before = out.size();
    take_waiters(d.pd, d.mode, out);
    timeouts_.fetch_add(out.size() - before, std::memory_order_relaxed);
  }
}

// ---- The scheduler side -------------------------------------------------------------

//! [netpoll]
void Netpoller::poll(Clock::time_point until, std::vector<G*>& out) {
  epoll_event ev[kMaxEvents];
  Clock::time_point now = Clock::now();
  bool block = until > now;
  if (block) {
    until = std::min(until, earliest_deadline());
    poll_until_.store(to_ns(until), std::memory_order_release);
  }
  int n = epoll_wait_until(epfd_, ev, block ? until : now);
  if (block) poll_until_.store(INT64_MAX, std::memory_order_release);
  polls_.fetch_add(1, std::memory_order_relaxed);
  last_poll_ns_.store(to_ns(Clock::now()), std::memory_order_relaxed);
  if (n > 0) opened_.load(std::memory_order_acquire);  // see netpoll.h
  if (n < 0 && errno != EINTR) {
    fatal(std::string("netpoll: epoll_wait failed: ") + std::strerror(errno));
  }
  for (int i = 0; i < n; ++i) {
    auto* pd = static_cast<PollDesc*>(ev[i].data.ptr);
    if (pd == nullptr) {  // interrupt()
      // Drained by a blocking poll only (as Go's netpoll does): the
      // interrupt is meant for the M waiting in epoll, and a non-blocking
      // poll on another M that took it would leave that M asleep (the
      // kernel woke it, found the event gone, and slept on).
      if (block) {
        std::uint64_t v;
        while (::read(evfd_, &v, sizeof v) > 0) {
        }
        interrupted_.store(false, std::memory_order_release);
      }
      continue;
    }
    std::uint32_t e = ev[i].events;
    std::lock_guard lk(pd->lock);
    if (pd->fd < 0) continue;  // closed after the kernel reported it
    events_.fetch_add(1, std::memory_order_relaxed);
    for (PollMode mode : {PollMode::kRead, PollMode::kWrite}) {
      std::uint32_t mask = mode == PollMode::kRead
                               ? EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR
                               : EPOLLOUT | EPOLLHUP | EPOLLERR;
      if ((e & mask) == 0) continue;
      if (pd->waiters(mode).empty()) {
        pd->ready(mode) = true;  // for the next goroutine that would park
      } else {
        take_waiters(pd, mode, out);
      }
    }
  }
  expire_deadlines(Clock::now(), out);
}
//! [netpoll]

void Netpoller::interrupt() {
  if (interrupted_.exchange(true, std::memory_order_acq_rel)) return;
  std::uint64_t one = 1;
  while (::write(evfd_, &one, sizeof one) < 0 && errno == EINTR) {
  }
}

}  // namespace gmp::stage4
