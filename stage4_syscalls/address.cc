#include "stage4_syscalls/address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstring>
#include <string>

#include "common/errors.h"
#include "stage4_syscalls/net.h"
#include "stage4_syscalls/runtime.h"

namespace gmp::stage4 {

namespace {

[[noreturn]] void bad_address(std::string_view address, const char* why) {
  throw UsageError("address \"" + std::string(address) + "\" is invalid: " +
                   why + " (expected \"host:port\", \"[ipv6]:port\" or "
                   "\":port\")");
}

std::string printed(int (*get)(int, sockaddr*, socklen_t*), int fd) {
  SockAddr a;
  a.len = sizeof a.storage;
  if (get(fd, reinterpret_cast<sockaddr*>(&a.storage), &a.len) != 0) return "";
  return to_string(a);
}

}  // namespace

void split_host_port(std::string_view address, std::string& host, int& port) {
  std::size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) bad_address(address, "no port");
  std::string_view h = address.substr(0, colon);
  std::string_view p = address.substr(colon + 1);
  if (!h.empty() && h.front() == '[') {
    if (h.size() < 2 || h.back() != ']') bad_address(address, "unclosed '['");
    h = h.substr(1, h.size() - 2);
  } else if (h.find(':') != std::string_view::npos) {
    bad_address(address, "an IPv6 host needs brackets");
  }
  if (p.empty() || p.size() > 5) bad_address(address, "the port must be 0 to 65535");
  int v = 0;
  for (char c : p) {
    if (c < '0' || c > '9') bad_address(address, "the port must be a number");
    v = v * 10 + (c - '0');
  }
  if (v > 65535) bad_address(address, "the port must be 0 to 65535");
  host.assign(h);
  port = v;
}

std::vector<SockAddr> resolve(std::string_view address, bool passive) {
  std::string host;
  int port = 0;
  split_host_port(address, host, port);
  if (host.empty()) host = passive ? "0.0.0.0" : "127.0.0.1";
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  std::string service = std::to_string(port);
  addrinfo* res = nullptr;
  // A numeric host needs no resolver; a name may (files, DNS): a blocking
  // call, so that the resolver's wait does not hold a P.
  addrinfo numeric = hints;
  numeric.ai_flags |= AI_NUMERICHOST;
  int rc = getaddrinfo(host.c_str(), service.c_str(), &numeric, &res);
  if (rc == EAI_NONAME) {
    rc = blocking([&] {
      return getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
    });
  }
  if (rc != 0) {
    throw NetError(EHOSTUNREACH, "lookup " + host + ": " + gai_strerror(rc));
  }
  std::vector<SockAddr> out;
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    SockAddr a;
    std::memcpy(&a.storage, ai->ai_addr, ai->ai_addrlen);
    a.len = ai->ai_addrlen;
    out.push_back(a);
  }
  freeaddrinfo(res);
  if (out.empty()) throw NetError(EHOSTUNREACH, "lookup " + host + ": no address");
  return out;
}

std::string to_string(const SockAddr& a) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (a.family() == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&a.storage);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(ntohs(in->sin_port));
  }
  if (a.family() == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a.storage);
    inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf);
    return "[" + std::string(buf) + "]:" + std::to_string(ntohs(in6->sin6_port));
  }
  return "?";
}

std::string local_address_of(int fd) { return printed(&getsockname, fd); }
std::string peer_address_of(int fd) { return printed(&getpeername, fd); }

}  // namespace gmp::stage4
