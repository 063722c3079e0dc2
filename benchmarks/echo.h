/// \file
/// Echo servers and their client load, shared by the I/O demo
/// (examples/io/demo.cc) and the benchmarks (io_bench.h): stage 4's
/// goroutine per connection on the netpoller, and stage 1's thread per
/// connection on blocking sockets.
#pragma once

#include <cstddef>
#include <cstdint>

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

}  // namespace gmp::bench::echo
