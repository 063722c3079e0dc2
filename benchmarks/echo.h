/// \file
/// Echo servers and their client load, shared by the I/O demo
/// (examples/io/demo.cc) and the benchmarks (io_bench.h): stage 4's
/// goroutine per connection on the netpoller, and stage 1's thread per
/// connection on blocking sockets, both loaded from the same process; and
/// for the comparison with Go, stage 4's and stage 5's servers loaded by
/// a client process of their own (echo_client.cc), as Go's server is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

/// The echo workload shared by the I/O demo and the benchmarks.
namespace gmp::bench::echo {

/// Round trips per connection.
inline constexpr int kRoundTrips = 10;
inline constexpr std::size_t kMsg = 64;  ///< bytes per message

/// What one run of the client load measured.
struct Load {
  double connect_ms = 0;  ///< until every connection was open
  double echo_ms = 0;     ///< the round trips, all connections at once
  double rss_mib = 0;     ///< the process's resident memory, all open
};

/// The client load against 127.0.0.1:port: n goroutines (a stage 4
/// runtime of its own on 1 P, in the calling thread) each dial, wait until
/// all are connected (the server then holds n connections), do
/// `round_trips` round trips of kMsg bytes, and close.
Load client_load(int port, int n, int round_trips = kRoundTrips);

/// Stage 4's server (goroutine per connection, GOMAXPROCS = procs) for n
/// connections, under client_load; its Ms in *threads.
Load stage4_server(int n, int procs, int round_trips, std::uint64_t* threads);

/// Stage 1's server (blocking sockets, a pool thread per connection: the
/// pool must be that large, as a task blocked in read() holds its thread)
/// for n connections, under client_load; its threads in *threads.
Load stage1_server(int n, int round_trips, std::uint64_t* threads);

/// The process's resident memory in MiB.
double rss_mib();

/// What one run of the client program (echo_client.cc) measured.
struct ClientRun {
  double round_trips = 0;    ///< made in the timed phase, all connections
  double echo_ns = 0;        ///< the timed phase's wall time
  double server_cpu_ns = 0;  ///< CPU time of the server's threads meanwhile
  /// The server's system calls in the timed phase by kind (echo_client's
  /// names: "all", "read", "write_echo", "epoll_wait"...); empty unless
  /// asked for.
  std::map<std::string, double> syscalls;
};

/// echo_client's path: $GMP_ECHO_CLIENT, else the file next to this
/// program (Bazel builds both into bazel-bin/benchmarks).
std::string client_path();

/// Runs echo_client against this process's server on 127.0.0.1:port:
/// `conns` connections, `round_trips` each; with `syscalls`, counted by
/// perf. `mark(true)` is called as the timed phase begins and
/// `mark(false)` as it ends (the client waits for both). Throws
/// std::runtime_error with the client's message if it fails (no perf, say).
ClientRun run_client(int port, int conns, int round_trips, bool syscalls,
                     const std::function<void(bool)>& mark);

/// The counters of a course server's runtime that explain a round trip.
struct ServerCounters {
  double ms_woken = 0;      ///< idle Ms woken (Stats::wakeups)
  double parks = 0;         ///< Ms gone idle (Stats::parks)
  double netpolls = 0;      ///< epoll_wait calls (Stats::netpolls)
  double switches = 0;      ///< goroutines run (Stats::context_switches)
  double threads = 0;       ///< Ms made (Stats::threads_created)
};

/// A goroutine-per-connection echo server (a goroutine accepts; each
/// connection's goroutine reads and writes back until EOF) on a runtime of
/// its own, stage 4's or stage 5's with GOMAXPROCS procs, run by a thread
/// of its own from construction until destruction.
class Server {
 public:
  /// Starts it; returns once it listens. stage: 4 or 5.
  Server(int stage, int procs);
  /// Closes the listener, waits for every connection to end, joins.
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  /// The port it listens on (127.0.0.1).
  int port() const;
  /// Its runtime's counters so far (ServerCounters). Any thread.
  ServerCounters counters() const;

  /// The stage-specific part (echo.cc).
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gmp::bench::echo
