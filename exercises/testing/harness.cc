#include "exercises/testing/harness.h"

#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace gmp::exercises {

namespace {

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  unsigned long long n = std::strtoull(v, &end, 10);
  return *end == '\0' ? n : fallback;
}

void cpu_relax() noexcept {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Every test's watchdog (harness.h): a Watchdog made at the test's start
// and ended at its end.
class TestWatchdog : public ::testing::EmptyTestEventListener {
 public:
  void OnTestStart(const ::testing::TestInfo& t) override {
    what_ = std::string("test ") + t.test_suite_name() + "." + t.name();
    dog_.emplace(what_.c_str(), test_limit_seconds());
  }
  void OnTestEnd(const ::testing::TestInfo&) override { dog_.reset(); }

 private:
  std::string what_;  // the running test's name, which dog_ prints
  std::optional<Watchdog> dog_;
};

// Registered before main runs: every test binary that links the harness.
[[maybe_unused]] const bool kWatchdogRegistered = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new TestWatchdog);
  return true;
}();

}  // namespace

double test_limit_seconds() {
  std::uint64_t s = env_or("GMP_EXERCISE_TEST_LIMIT", 280);
  return s == 0 ? 280.0 : static_cast<double>(s);
}

std::uint64_t base_seed() { return env_or("GMP_EXERCISE_SEED", 1); }

int stress_iterations(int fallback) {
  std::uint64_t n = env_or("GMP_EXERCISE_ITERATIONS", fallback);
  return n == 0 ? fallback : static_cast<int>(n);
}

std::vector<std::uint64_t> stress_seeds(int fallback, const std::string& salt) {
  Chaos mix(base_seed() ^ std::hash<std::string>{}(salt));
  std::vector<std::uint64_t> seeds(stress_iterations(fallback));
  for (std::uint64_t& s : seeds) s = mix.next();
  return seeds;
}

std::uint64_t Chaos::next() noexcept {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void Chaos::point() noexcept {
  std::uint64_t r = next();
  switch (r & 7) {
    case 0: case 1: case 2: case 3:
      return;
    case 4: case 5:
      for (std::uint64_t i = (r >> 8) & 1023; i > 0; --i) cpu_relax();
      return;
    default:
      if (((r >> 20) & 31) == 0) {
        std::this_thread::sleep_for(std::chrono::microseconds((r >> 32) % 50));
      } else {
        std::this_thread::yield();
      }
  }
}

void run_threads(int n, std::uint64_t seed,
                 const std::function<void(int, Chaos&)>& body) {
  std::barrier start(n);
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      Chaos chaos(seed + 0x632be59bd9b4e019ULL * (i + 1));
      start.arrive_and_wait();
      body(i, chaos);
    });
  }
  for (std::thread& t : threads) t.join();
}

bool eventually(const std::function<bool()>& done, double seconds) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return done();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

Watchdog::Watchdog(const char* what, double seconds)
    : thread_([this, what, seconds] {
        std::unique_lock lk(mu_);
        if (!cv_.wait_for(lk, std::chrono::duration<double>(seconds),
                          [this] { return done_; })) {
          std::fprintf(stderr, "\nHANG: %s did not finish within %.0f s\n",
                       what, seconds);
          std::fflush(stderr);
          std::_Exit(1);
        }
      }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lk(mu_);
    done_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

}  // namespace gmp::exercises
