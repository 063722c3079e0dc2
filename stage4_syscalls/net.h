/// \file
/// The goroutine-facing network API of stage 4 (a small part of Go's net
/// package): TCP over IPv4 and IPv6, and pipes, on non-blocking descriptors
/// that park the calling goroutine instead of blocking its M.
///
/// ```unparsed
/// Errors are gmp::stage4::NetError, a std::system_error whose message reads
/// as Go's: "read tcp 127.0.0.1:40112->127.0.0.1:5000: connection reset by
/// peer". End of file is not an error: read() returns 0.
/// ```
#pragma once

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "stage4_syscalls/netpoll.h"
#include "stage4_syscalls/poll_desc.h"

namespace gmp::stage4 {

/// A failed network call. code() is the errno (ETIMEDOUT for a passed
/// deadline, EBADF for a closed Conn); what() names the call, the network,
/// the addresses and the reason, as Go's *net.OpError does.
class NetError : public std::system_error {
 public:
  /// An error `err` (errno) from the operation described by `what`.
  NetError(int err, std::string what)
      : std::system_error(err, std::generic_category()),
        what_(std::move(what)) {}
  /// The whole message, as Go prints the error.
  const char* what() const noexcept override { return what_.c_str(); }
  /// The deadline passed ("i/o timeout"); Go's os.ErrDeadlineExceeded.
  bool timeout() const noexcept { return code().value() == ETIMEDOUT; }
  /// The Conn or Listener was closed ("use of closed network connection").
  bool closed() const noexcept { return code().value() == EBADF; }

 private:
  std::string what_;
};

/// A connected byte stream: a TCP connection or one end of a pipe. Movable;
/// the destructor closes it. Every call but close() is goroutine-only, on a
/// goroutine of the stage4::Runtime that made it (gmp::UsageError if not).
/// Several goroutines may read and write one Conn at once, as in Go.
class Conn {
 public:
  using Clock = std::chrono::steady_clock;  ///< the deadlines' clock

  Conn() = default;
  /// Takes over other's descriptor; other is left closed.
  Conn(Conn&& other) noexcept { *this = std::move(other); }
  /// Closes this one (as the destructor does, with its check), then takes
  /// over other's descriptor.
  Conn& operator=(Conn&& other) noexcept;
  /// Closes the descriptor. A fatal error if a goroutine is still in a
  /// call on this Conn (parked in read or write, or running one): it would
  /// go on inside the destroyed object. close() wakes them; destroy the
  /// Conn once they have returned.
  ~Conn();

  /// Reads up to `n` bytes into `buf`, parking until some arrive. Returns
  /// how many; 0 at end of file. NetError on failure or timeout.
  std::size_t read(void* buf, std::size_t n);
  /// Writes all `n` bytes, parking while the kernel's buffer is full.
  /// NetError ("broken pipe", "connection reset by peer", timeout) if it
  /// cannot; some bytes may have been written then.
  void write(const void* buf, std::size_t n);
  /// write() of a string.
  void write(std::string_view s) { write(s.data(), s.size()); }

  /// Closes the descriptor; goroutines blocked in read or write on it wake
  /// with NetError closed(). Any thread. A second close throws NetError
  /// closed(), as Go's Close returns an error.
  void close();

  /// Go's SetDeadline / SetReadDeadline / SetWriteDeadline: calls that
  /// would still wait at `t` fail with NetError timeout(); max() clears.
  void set_deadline(Clock::time_point t);
  /// As set_deadline, for reads only.
  void set_read_deadline(Clock::time_point t);
  /// As set_deadline, for writes only.
  void set_write_deadline(Clock::time_point t);

  /// Half-close: no more writes (the peer reads end of file). TCP only:
  /// gmp::UsageError on a pipe (close its write end instead); NetError once
  /// closed, or once the write deadline has passed.
  void close_write();

  /// "127.0.0.1:5000", "[::1]:5000", or "pipe".
  const std::string& local_address() const noexcept { return laddr_; }
  /// The peer's address, in the same form.
  const std::string& remote_address() const noexcept { return raddr_; }
  /// Whether this Conn holds a descriptor that close() has not closed.
  bool valid() const noexcept { return pd_ != nullptr; }

 private:
  friend class Listener;
  friend Conn dial_one(class Runtime& rt, const struct SockAddr& a,
                       std::string_view address);
  friend std::pair<Conn, Conn> pipe();
  Conn(std::shared_ptr<Netpoller> poller, PollDesc* pd, std::string net,
       std::string laddr, std::string raddr)
      : poller_(std::move(poller)), pd_(pd), net_(std::move(net)),
        laddr_(std::move(laddr)), raddr_(std::move(raddr)) {}
  [[noreturn]] void fail(const char* op, int err) const;
  void enter(const char* op, const char* api, PollMode mode);
  void wait(const char* op, PollMode mode);

  std::shared_ptr<Netpoller> poller_;  // keeps the PollDesc's memory alive
  PollDesc* pd_ = nullptr;
  std::string net_;  // "tcp", "tcp6" or "pipe"
  std::string laddr_, raddr_;
};

/// A listening TCP socket. Movable; the destructor closes it.
class Listener {
 public:
  Listener() = default;
  /// Takes over other's socket; other is left closed.
  Listener(Listener&& other) noexcept { *this = std::move(other); }
  /// Closes this one (as the destructor does, with its check), then takes
  /// over other's socket.
  Listener& operator=(Listener&& other) noexcept;
  /// Closes the socket. A fatal error if a goroutine is still in accept()
  /// on this Listener, as for a Conn.
  ~Listener();

  /// Waits for and returns the next connection. NetError on failure
  /// ("too many open files" when out of descriptors: the connection stays
  /// queued, a later accept gets it) or closed() once closed. Goroutine
  /// only.
  Conn accept();
  /// Closes the socket; a goroutine blocked in accept wakes with NetError
  /// closed(). Any thread.
  void close();
  /// The address it listens on, with the port the kernel chose for ":0".
  const std::string& address() const noexcept { return addr_; }
  /// Its port.
  int port() const noexcept { return port_; }

 private:
  friend Listener listen(std::string_view address, int backlog);
  std::shared_ptr<Netpoller> poller_;
  PollDesc* pd_ = nullptr;
  std::string net_, addr_;
  int port_ = 0;
};

/// Listens on "host:port": "127.0.0.1:0", "[::1]:8080", "localhost:0"
/// (names are resolved in a blocking call), port 0 for any free one.
/// Goroutine only; gmp::UsageError for a malformed address, NetError if the
/// kernel refuses ("address already in use").
Listener listen(std::string_view address, int backlog = 4096);

/// Connects to "host:port" (forms as listen), parking until the
/// connection is made; as Go's net.Dial, tries each address the name
/// resolves to in turn until one answers. NetError on failure (the
/// lookup's, or the last address's: "connection refused"). Goroutine only.
Conn dial(std::string_view address);

/// A pipe as two Conns: {read end, write end}. Goroutine only.
std::pair<Conn, Conn> pipe();

}  // namespace gmp::stage4
