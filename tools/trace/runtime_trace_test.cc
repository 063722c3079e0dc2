// Tracing through the runtimes of stages 2-5: a file per traced run, each
// complete, also when several threads race to run() the same runtime (one
// wins; the losers get a UsageError and must not touch the winner's
// session). Under ThreadSanitizer and AddressSanitizer this is the test of
// the session's hand-over between runs.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/errors.h"
#include "stage2_global_queue/api.h"
#include "stage3_gmp/api.h"
#include "stage4_syscalls/api.h"
#include "stage5_preemption/api.h"
#include "testing/helpers.h"

namespace gmp::testing {
namespace {

template <class Api>
class RuntimeTraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/gmp-runtime-trace-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    for (const std::string& f : files()) std::remove(f.c_str());
    ::rmdir(dir_.c_str());
  }
  // The trace files written so far.
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) {
      out.push_back(e.path().string());
    }
    return out;
  }
  std::string dir_;
};

using TracedStages = ::testing::Types<stage2::Api, stage3::Api, stage4::Api,
                                      stage5::Api>;
TYPED_TEST_SUITE(RuntimeTraceTest, TracedStages);

// The seed base: --gtest_random_seed=N (or --gtest_shuffle) varies it; it
// is printed on failure.
std::uint32_t test_seed() {
  auto seed = static_cast<std::uint32_t>(
      ::testing::UnitTest::GetInstance()->random_seed());
  ::testing::Test::RecordProperty("seed", static_cast<int>(seed));
  std::printf("seed base %u\n", seed);
  return seed;
}

// otherData's counters of a written trace.
std::map<std::string, long> other_data(const std::string& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  std::map<std::string, long> out;
  auto at = s.find("\"otherData\":{");
  if (at == std::string::npos) return out;
  static const std::regex counter(R"re("(\w+)":(\d+))re");
  std::string tail = s.substr(at);
  for (std::sregex_iterator it(tail.begin(), tail.end(), counter), end;
       it != end; ++it) {
    out[(*it)[1]] = std::stol((*it)[2]);
  }
  return out;
}

// A short program whose shape depends on the seed: goroutines that yield,
// exchange over a channel and sleep.
template <class Api>
void small_program(std::uint32_t seed) {
  std::mt19937 rng(seed);
  const int n = 2 + static_cast<int>(rng() % 12);
  typename Api::WaitGroup wg;
  typename Api::template Chan<int> ch(static_cast<std::size_t>(rng() % 3));
  for (int i = 0; i < n; ++i) {
    wg.add(1);
    Api::go([&, i] {
      if (i % 3 == 0) Api::yield();
      if (i % 4 == 1) Api::sleep_for(std::chrono::microseconds(50));
      ch.send(i);
      wg.done();
    });
  }
  for (int i = 0; i < n; ++i) (void)ch.recv();
  wg.wait();
}

TYPED_TEST(RuntimeTraceTest, EveryRunWritesACompleteTraceOfItsOwn) {
  typename TypeParam::Config cfg;
  cfg.procs = 2;
  cfg.trace = this->dir_ + "/run-%r.json";
  typename TypeParam::Runtime rt(cfg);
  const std::uint32_t seed = test_seed();
  for (int run = 0; run < 3; ++run) {
    rt.run([&] { small_program<TypeParam>(seed + run); });
  }
  std::vector<std::string> files = this->files();
  ASSERT_EQ(files.size(), 3u);
  for (const std::string& f : files) {
    auto other = other_data(f);
    EXPECT_GE(other["goroutines_created"], 3) << f;
    EXPECT_EQ(other["goroutines_created"], other["goroutines_ended"]) << f;
    EXPECT_EQ(other["forced_ends"], 0) << f;
    EXPECT_EQ(other["dropped_events"], 0) << f;
  }
}

// Two threads run() one runtime over and over: while one run is under way
// the other gets a UsageError; no run may find the last one's trace still
// being written (the session is handed over only once it is finished).
TYPED_TEST(RuntimeTraceTest, RacingRunsNeverShareASession) {
  typename TypeParam::Config cfg;
  cfg.procs = 2;
  cfg.trace = this->dir_ + "/run-%r.json";
  typename TypeParam::Runtime rt(cfg);
  std::atomic<int> completed{0}, refused{0};
  const std::uint32_t seed = test_seed();
  auto runner = [&](std::uint32_t s) {
    for (int i = 0; i < 15; ++i) {
      try {
        rt.run([&] { small_program<TypeParam>(s + i); });
        ++completed;
      } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("while this runtime is running"),
                  std::string::npos)
            << e.what();
        ++refused;
      }
    }
  };
  std::thread a(runner, seed), b(runner, seed * 7 + 1);
  a.join();
  b.join();
  EXPECT_EQ(completed + refused, 30);
  EXPECT_GE(completed.load(), 1);
  std::vector<std::string> files = this->files();
  EXPECT_EQ(files.size(), static_cast<std::size_t>(completed.load()));
  for (const std::string& f : files) {
    auto other = other_data(f);
    EXPECT_EQ(other["goroutines_created"], other["goroutines_ended"]) << f;
    EXPECT_EQ(other["forced_ends"], 0) << f;
  }
}

}  // namespace
}  // namespace gmp::testing
