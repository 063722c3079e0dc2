/// \file
/// TCP addresses of stage 4's net API: "host:port" parsed, resolved and
/// printed as Go prints them.
#pragma once

#include <sys/socket.h>

#include <string>
#include <string_view>
#include <vector>

namespace gmp::stage4 {

/// One socket address.
struct SockAddr {
  sockaddr_storage storage{};  ///< big enough for any family
  socklen_t len = 0;           ///< bytes of storage in use
  /// AF_INET, AF_INET6 or AF_UNIX.
  int family() const noexcept { return storage.ss_family; }
  /// The address as the socket calls take it.
  const sockaddr* get() const noexcept {
    return reinterpret_cast<const sockaddr*>(&storage);
  }
};

/// Splits "host:port" or "[v6host]:port" (host may be empty: every local
/// address). gmp::UsageError naming `address` if malformed or the port is
/// not in [0, 65535].
void split_host_port(std::string_view address, std::string& host, int& port);

/// The addresses of "host:port": numeric hosts at once; names (such as
/// "localhost") through getaddrinfo, as a blocking call (stage4::blocking:
/// the resolver may wait on the network). An empty host: 0.0.0.0 when
/// `passive` (listen), else the loopback. NetError if nothing is found.
std::vector<SockAddr> resolve(std::string_view address, bool passive);

/// "127.0.0.1:5000" or "[::1]:5000".
std::string to_string(const SockAddr& a);

/// The local address of socket `fd`, printed; "" if unknown.
std::string local_address_of(int fd);
/// The peer address of socket `fd`, printed; "" if unknown.
std::string peer_address_of(int fd);

}  // namespace gmp::stage4
