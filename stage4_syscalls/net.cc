// Stage 4's net API: every call tries the system call first and parks on
// the descriptor's PollDesc only when the kernel says EAGAIN (Go's
// internal/poll.FD: Read, Write, Accept; net.Dial, net.Listen).
#include "stage4_syscalls/net.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <string>
#include <system_error>

#include "common/errors.h"
#include "stage4_syscalls/address.h"
#include "stage4_syscalls/runtime.h"

namespace gmp::stage4 {

namespace {

// The Runtime of the calling goroutine, for calls that make descriptors.
Runtime& need_runtime(const char* op) {
  Runtime* rt = Runtime::current();
  M* m = getm();
  if (rt == nullptr || m->curg == nullptr || m->p == nullptr) {
    throw UsageError(std::string(op) +
                     " called outside a goroutine of a running "
                     "stage4::Runtime (or inside a blocking call): network "
                     "calls park the calling goroutine");
  }
  return *rt;
}

// A call on a descriptor of `poller`: the caller must be a goroutine of
// the runtime that owns it.
void need_owner(const char* op, const Netpoller& poller) {
  M* m = getm();
  if (m == nullptr || m->curg == nullptr || m->p == nullptr ||
      static_cast<const void*>(m->rt) != poller.owner()) {
    throw UsageError(std::string(op) +
                     " called outside a goroutine of the stage4::Runtime "
                     "that made this connection (or inside a blocking "
                     "call): network calls park the calling goroutine");
  }
}

// The reason part of a message, in Go's words ("connection reset by peer").
std::string reason(int err) {
  if (err == EBADF) return "use of closed network connection";
  if (err == ETIMEDOUT) return "i/o timeout";
  std::string s = std::strerror(err);  // "Connection reset by peer"
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

// A reference on a PollDesc for one call (Go's fd.incref/decref).
class Ref {
 public:
  Ref(Netpoller& p, PollDesc* pd) : p_(p), pd_(pd) {}
  ~Ref() { p_.release(pd_); }
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;

 private:
  Netpoller& p_;
  PollDesc* pd_;
};

// Throws what a wait or an acquire ended with (closed, or timed out).
[[noreturn]] void throw_wake(Netpoller::Wake w, const std::string& prefix) {
  int err = w == Netpoller::Wake::kClosed ? EBADF : ETIMEDOUT;
  throw NetError(err, prefix + ": " + reason(err));
}

std::string netname(int family) { return family == AF_INET6 ? "tcp6" : "tcp"; }

// What a Conn's or Listener's destructor does (`object` names it): close
// the descriptor if it is still open, and give the PollDesc back. A call
// still under way on it is a fatal error: it would go on inside the
// destroyed object.
void release_descriptor(Netpoller* poller, PollDesc*& pd, const char* object) {
  if (pd == nullptr) return;
  poller->check_unused(pd, object);
  poller->close(pd);  // false if closed already: fine here
  poller->free(pd);
  pd = nullptr;
}

}  // namespace

Conn dial_one(Runtime& rt, const SockAddr& a, std::string_view address);

// ---- Conn ---------------------------------------------------------------------------

Conn& Conn::operator=(Conn&& other) noexcept {
  if (this != &other) {
    // What ~Conn() does; the members stay alive (calling the destructor
    // here would end them).
    release_descriptor(poller_.get(), pd_, "Conn");
    poller_ = std::move(other.poller_);
    pd_ = std::exchange(other.pd_, nullptr);
    net_ = std::move(other.net_);
    laddr_ = std::move(other.laddr_);
    raddr_ = std::move(other.raddr_);
  }
  return *this;
}

Conn::~Conn() { release_descriptor(poller_.get(), pd_, "Conn"); }

[[noreturn]] void Conn::fail(const char* op, int err) const {
  std::string where = std::string(op) + " " + net_;
  if (net_ != "pipe") where += " " + laddr_ + "->" + raddr_;
  throw NetError(err, where + ": " + reason(err));
}

void Conn::wait(const char* op, PollMode mode) {
  switch (poller_->wait(pd_, mode)) {
    case Netpoller::Wake::kRetry: return;
    case Netpoller::Wake::kClosed: fail(op, EBADF);
    case Netpoller::Wake::kTimeout: fail(op, ETIMEDOUT);
  }
}

// The start of a call: a goroutine of the owner, a descriptor open and
// within its deadline; a reference taken (released by the caller's Ref).
void Conn::enter(const char* op, const char* api, PollMode mode) {
  if (pd_ == nullptr) fail(op, EBADF);
  if (api != nullptr) need_owner(api, *poller_);
  if (auto w = poller_->acquire(pd_, mode); w != Netpoller::Wake::kRetry) {
    fail(op, w == Netpoller::Wake::kClosed ? EBADF : ETIMEDOUT);
  }
}

std::size_t Conn::read(void* buf, std::size_t n) {
  enter("read", "Conn::read", PollMode::kRead);
  Ref ref(*poller_, pd_);
  for (;;) {
    ssize_t r = ::read(pd_->fd, buf, n);
    if (r >= 0) return static_cast<std::size_t>(r);
    if (errno == EINTR) continue;
    if (errno != EAGAIN) fail("read", errno);
    wait("read", PollMode::kRead);
  }
}

void Conn::write(const void* buf, std::size_t n) {
  enter("write", "Conn::write", PollMode::kWrite);
  Ref ref(*poller_, pd_);
  const char* p = static_cast<const char*>(buf);
  bool socket = net_ != "pipe";
  std::size_t done = 0;
  while (done < n) {
    // send(MSG_NOSIGNAL) on sockets: a closed peer is EPIPE, not SIGPIPE.
    ssize_t r = socket ? ::send(pd_->fd, p + done, n - done, MSG_NOSIGNAL)
                       : ::write(pd_->fd, p + done, n - done);
    if (r >= 0) {
      done += static_cast<std::size_t>(r);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN) fail("write", errno);
    wait("write", PollMode::kWrite);
  }
}

void Conn::close() {
  if (pd_ == nullptr || !poller_->close(pd_)) fail("close", EBADF);
}

void Conn::close_write() {
  if (net_ == "pipe") throw UsageError("close_write called on a pipe: close the write end instead");
  enter("close_write", nullptr, PollMode::kWrite);  // (a timeout took no
  Ref ref(*poller_, pd_);                            // reference: now it fails)
  if (::shutdown(pd_->fd, SHUT_WR) != 0) fail("close_write", errno);
}

void Conn::set_deadline(Clock::time_point t) {
  set_read_deadline(t);
  set_write_deadline(t);
}

void Conn::set_read_deadline(Clock::time_point t) {
  if (pd_ == nullptr) fail("set_read_deadline", EBADF);
  poller_->set_deadline(pd_, PollMode::kRead, t);
}

void Conn::set_write_deadline(Clock::time_point t) {
  if (pd_ == nullptr) fail("set_write_deadline", EBADF);
  poller_->set_deadline(pd_, PollMode::kWrite, t);
}

// ---- Listener ----------------------------------------------------------------------

Listener& Listener::operator=(Listener&& other) noexcept {
  if (this != &other) {
    // What ~Listener() does; the members stay alive (calling the
    // destructor here would end them).
    release_descriptor(poller_.get(), pd_, "Listener");
    poller_ = std::move(other.poller_);
    pd_ = std::exchange(other.pd_, nullptr);
    net_ = std::move(other.net_);
    addr_ = std::move(other.addr_);
    port_ = other.port_;
  }
  return *this;
}

Listener::~Listener() { release_descriptor(poller_.get(), pd_, "Listener"); }

void Listener::close() {
  if (pd_ == nullptr || !poller_->close(pd_)) {
    throw NetError(EBADF, "close " + net_ + " " + addr_ + ": " + reason(EBADF));
  }
}

Conn Listener::accept() {
  std::string where = "accept " + net_ + " " + addr_;
  if (pd_ == nullptr) throw_wake(Netpoller::Wake::kClosed, where);
  need_owner("Listener::accept", *poller_);
  if (auto w = poller_->acquire(pd_, PollMode::kRead); w != Netpoller::Wake::kRetry) {
    throw_wake(w, where);
  }
  Ref ref(*poller_, pd_);
  for (;;) {
    int fd = ::accept4(pd_->fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      int one = 1;  // as Go: no Nagle delay on TCP connections
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      PollDesc* pd = nullptr;
      try {
        pd = poller_->open(fd);
      } catch (const std::system_error& e) {
        ::close(fd);
        throw NetError(e.code().value(), where + ": " + reason(e.code().value()));
      }
      return Conn(poller_, pd, net_, local_address_of(fd), peer_address_of(fd));
    }
    int err = errno;
    if (err == EINTR || err == ECONNABORTED) continue;
    if (err != EAGAIN) throw NetError(err, where + ": " + reason(err));
    Netpoller::Wake w = poller_->wait(pd_, PollMode::kRead);
    if (w != Netpoller::Wake::kRetry) throw_wake(w, where);
  }
}

Listener listen(std::string_view address, int backlog) {
  Runtime& rt = need_runtime("listen");
  std::vector<SockAddr> addrs = resolve(address, /*passive=*/true);
  const SockAddr& a = addrs.front();
  std::string where = "listen " + netname(a.family()) + " " + std::string(address);
  int fd = ::socket(a.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw NetError(errno, where + ": " + reason(errno));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, a.get(), a.len) != 0 || ::listen(fd, backlog) != 0) {
    int err = errno;
    ::close(fd);
    throw NetError(err, where + ": " + reason(err));
  }
  Listener l;
  l.poller_ = rt.netpoller();
  try {
    l.pd_ = l.poller_->open(fd);
  } catch (const std::system_error& e) {
    ::close(fd);
    throw NetError(e.code().value(), where + ": " + reason(e.code().value()));
  }
  l.net_ = netname(a.family());
  l.addr_ = local_address_of(fd);
  l.port_ = std::stoi(l.addr_.substr(l.addr_.rfind(':') + 1));
  return l;
}

Conn dial(std::string_view address) {
  Runtime& rt = need_runtime("dial");
  std::vector<SockAddr> addrs = resolve(address, /*passive=*/false);
  for (std::size_t i = 0;; ++i) {
    try {
      return dial_one(rt, addrs[i], address);
    } catch (const NetError&) {
      if (i + 1 == addrs.size()) throw;  // the last address's error
    }
  }
}

// One address: a non-blocking connect, then a park until the socket is
// writable, then SO_ERROR says how the connection went.
Conn dial_one(Runtime& rt, const SockAddr& a, std::string_view address) {
  std::string where = "dial " + netname(a.family()) + " " + std::string(address);
  int fd = ::socket(a.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw NetError(errno, where + ": " + reason(errno));
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int rc = ::connect(fd, a.get(), a.len);
  if (rc != 0 && errno != EINPROGRESS) {
    int err = errno;
    ::close(fd);
    throw NetError(err, where + ": " + reason(err));
  }
  PollDesc* pd = nullptr;
  try {
    pd = rt.netpoller()->open(fd);
  } catch (const std::system_error& e) {
    ::close(fd);
    throw NetError(e.code().value(), where + ": " + reason(e.code().value()));
  }
  Conn c(rt.netpoller(), pd, netname(a.family()), "", "");
  while (rc != 0) {  // in progress: wait for writability, then ask
    Netpoller::Wake w = c.poller_->wait(pd, PollMode::kWrite);
    if (w != Netpoller::Wake::kRetry) throw_wake(w, where);
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) throw NetError(err, where + ": " + reason(err));
    if (peer_address_of(fd).empty()) continue;  // a stale edge: not yet
    rc = 0;
  }
  c.laddr_ = local_address_of(fd);
  c.raddr_ = peer_address_of(fd);
  return c;
}

std::pair<Conn, Conn> pipe() {
  Runtime& rt = need_runtime("pipe");
  int fds[2];
  if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) {
    throw NetError(errno, std::string("pipe: ") + reason(errno));
  }
  PollDesc* r = nullptr;
  try {
    r = rt.netpoller()->open(fds[0]);
    PollDesc* w = rt.netpoller()->open(fds[1]);
    return {Conn(rt.netpoller(), r, "pipe", "pipe", "pipe"),
            Conn(rt.netpoller(), w, "pipe", "pipe", "pipe")};
  } catch (const std::system_error& e) {
    if (r != nullptr) {  // the write end failed: give the read end back
      rt.netpoller()->close(r);
      rt.netpoller()->free(r);
    } else {
      ::close(fds[0]);
    }
    ::close(fds[1]);
    throw NetError(e.code().value(), std::string("pipe: ") + reason(e.code().value()));
  }
}

}  // namespace gmp::stage4
