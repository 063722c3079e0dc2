// The exercises' test harness: seeded stress runs and randomized
// interleavings, so that a solution cannot pass by the luck of one thread
// ordering.
//
//   - Every random choice of a test comes from a seed. The grader sets
//     GMP_EXERCISE_SEED to a fresh value on every run and prints it; set it
//     yourself to replay a failure (`GMP_EXERCISE_SEED=1234 ./course grade 05`).
//   - Stress tests repeat their scenario stress_iterations() times, each
//     with its own seed (GMP_EXERCISE_ITERATIONS overrides the count).
//   - Chaos::point() is a seeded random delay (nothing, a short spin, a
//     yield, or a sleep) that a test calls between the operations of its
//     threads: the same idea as Go's scheduler randomization under -race.
//     It shakes the interleavings a stress test explores.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gmp::exercises {

/// GMP_EXERCISE_SEED if set (decimal), else 1.
std::uint64_t base_seed();

/// GMP_EXERCISE_ITERATIONS if set, else `fallback`.
int stress_iterations(int fallback);

/// The seeds of a stress test's iterations: stress_iterations(fallback)
/// values derived from base_seed() and the test's `salt` (its name), so two
/// tests of one run explore different sequences.
std::vector<std::uint64_t> stress_seeds(int fallback, const std::string& salt);

/// A seeded random source with random delays for one thread (splitmix64).
/// Not thread-safe: give each thread its own.
class Chaos {
 public:
  explicit Chaos(std::uint64_t seed) noexcept : state_(seed) {}

  /// A random 64-bit value.
  std::uint64_t next() noexcept;
  /// A random value in [0, n); n > 0.
  std::uint32_t below(std::uint32_t n) noexcept {
    return static_cast<std::uint32_t>(next() % n);
  }
  /// A random delay: half the time none, else a spin of up to 1024 pause
  /// loops, a yield, or (1 time in 32) a sleep of up to 50 us.
  void point() noexcept;

 private:
  std::uint64_t state_;  // owner: the thread using this Chaos
};

/// Runs body(i, chaos_i) on n threads that start together (after a
/// barrier), each with its own Chaos seeded from `seed` and i; joins them.
void run_threads(int n, std::uint64_t seed,
                 const std::function<void(int, Chaos&)>& body);

/// Waits until done() is true or `seconds` pass (for a test that must
/// notice a lost wake-up rather than hang); returns done()'s last value.
/// A deadline for liveness, not a speed goal: pick one that a correct
/// solution misses only if it is stuck.
bool eventually(const std::function<bool()>& done, double seconds);

/// Seconds a test may run before the harness's watchdog ends it:
/// GMP_EXERCISE_TEST_LIMIT if set (./course grade sets it 10 s below its
/// --timeout), else 280 (the grader's default limit is 300).
double test_limit_seconds();

/// Ends the test binary with "HANG: <what> did not finish within N s" if
/// its scope lasts longer than `seconds`: a hang (a lost wake-up, a worker
/// that never exits) then fails its test with a reason instead of running
/// into the grader's time limit. Put it first in a test body.
///
/// Every test also has one, armed by the harness at its start: a test
/// that outlasts test_limit_seconds() ends the binary with "HANG: test
/// Suite.Name did not finish within N s", before the grader's own limit
/// kills it without a word. A Watchdog of the test's own, shorter, names
/// what the test waits for.
class Watchdog {
 public:
  Watchdog(const char* what, double seconds);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;   // guarded by mu_; set by the destructor
  std::thread thread_;  // last: starts once the fields above exist
};

}  // namespace gmp::exercises
