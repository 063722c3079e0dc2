// GOMAXPROCS as Go 1.25 decides it (cgroup CPU limits, read from fixture
// trees in testdata/cgroup/), the environment variables, and their errors.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "common/errors.h"
#include "stage3_gmp/cgroup.h"
#include "stage3_gmp/config.h"

namespace gmp::stage3 {
namespace {

// A fixture tree: proc/self/{mountinfo,cgroup} and the cgroup files.
std::optional<double> limit_of(const std::string& fixture) {
  return cgroup_cpu_limit("stage3_gmp/testdata/cgroup/" + fixture);
}

TEST(CgroupTest, ReadsTheV2CpuMaxOfTheProcessCgroup) {
  EXPECT_EQ(limit_of("v2_limited"), 1.5);       // "150000 100000"
  EXPECT_EQ(limit_of("v2_unlimited"), std::nullopt);  // "max 100000"
  EXPECT_EQ(limit_of("v2_nested_mount"), 3.2);  // mount root /kubepods/pod1
}

TEST(CgroupTest, ReadsTheV1CfsQuotaOfTheCpuController) {
  EXPECT_EQ(limit_of("v1_limited"), 0.5);  // 50000 / 100000
  EXPECT_EQ(limit_of("v1_unlimited"), std::nullopt);  // quota -1
}

TEST(CgroupTest, NoCgroupOrNoFilesMeansNoLimit) {
  EXPECT_EQ(limit_of("none"), std::nullopt);
  EXPECT_EQ(limit_of("does_not_exist"), std::nullopt);
}

TEST(CgroupTest, DefaultIsTheCpuCountCappedByTheLimitRoundedUpButAtLeastTwo) {
  EXPECT_EQ(default_gomaxprocs(8, std::nullopt), 8);
  EXPECT_EQ(default_gomaxprocs(8, 1.5), 2);
  EXPECT_EQ(default_gomaxprocs(8, 3.2), 4);
  EXPECT_EQ(default_gomaxprocs(8, 0.5), 2);  // never below 2 by the limit
  EXPECT_EQ(default_gomaxprocs(1, 0.5), 1);  // but never above the CPUs
  EXPECT_EQ(default_gomaxprocs(2, 16.0), 2);
  EXPECT_GE(affinity_cpu_count(), 1);
}

TEST(ConfigTest, ExplicitProcsWinOverTheEnvironment) {
  Config c;
  c.procs = 3;
  EXPECT_EQ(c.resolve("7", nullptr).procs, 3);
  Config unset;
  EXPECT_EQ(unset.resolve("7", nullptr).procs, 7);
  EXPECT_EQ(unset.resolve(nullptr, nullptr).procs,
            default_gomaxprocs(affinity_cpu_count(), cgroup_cpu_limit()));
}

// Go's schedinit: a GOMAXPROCS that is not a number above 0 is ignored
// (the default stands); one above the maximum is capped.
TEST(ConfigTest, AnInvalidGomaxprocsInTheEnvironmentIsIgnoredAsInGo) {
  Config c;
  const int fallback = c.resolve(nullptr, nullptr).procs.value();
  for (const char* bad : {"", "abc", "0", "-1", "2 ", " 2", "+2", "1e3",
                          "99999999999"}) {
    EXPECT_EQ(c.resolve(bad, nullptr).procs, fallback) << "\"" << bad << "\"";
  }
  EXPECT_EQ(c.resolve("1025", nullptr).procs, kMaxProcs);
  EXPECT_EQ(c.resolve("3", nullptr).procs, 3);
}

TEST(ConfigTest, ParsesGmpDebugAndRejectsWhatItDoesNotKnow) {
  DebugSettings d = parse_debug("schedtrace=1000,scheddetail=1", "GMP_DEBUG");
  EXPECT_EQ(d.schedtrace_ms, 1000);
  EXPECT_TRUE(d.scheddetail);
  EXPECT_EQ(parse_debug("", "GMP_DEBUG").schedtrace_ms, 0);
  for (const char* bad : {"schedtrace=", "schedtrace=-5", "scheddetail=2",
                          "gctrace=1", "schedtrace=10,nonsense"}) {
    EXPECT_THROW(parse_debug(bad, "GMP_DEBUG"), ConfigError) << bad;
  }
  Config c;
  EXPECT_THROW(c.resolve(nullptr, "schedtrace=x"), ConfigError);
  c.debug = "scheddetail=1";
  EXPECT_TRUE(parse_debug(*c.resolve(nullptr, "gctrace=1").debug, "x")
                  .scheddetail)
      << "an explicit setting does not read GMP_DEBUG";
}

TEST(ConfigTest, ExplicitFieldsAreValidated) {
  Config c;
  c.procs = 0;
  EXPECT_THROW(c.validate(), ConfigError);
  c.procs = 2;
  c.stack_size = 1000;
  try {
    c.validate();
    ADD_FAILURE();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("stage3::Config.stack_size = 1000"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace gmp::stage3

TEST(ConfigTest, TracePathIsCheckedWhenTheRuntimeIsMade) {
  using gmp::stage3::Config;
  using gmp::ConfigError;
  Config c;
  c.trace = "/nonexistent-dir/t.json";
  try {
    c.validate();
    FAIL() << "a trace file in a missing folder was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "stage3::Config.trace = \"/nonexistent-dir/t.json\" is "
                  "invalid: the trace file cannot be created there"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Config{}.resolve(nullptr, nullptr, "/tmp/"), ConfigError);
  Config off = Config{}.resolve(nullptr, nullptr, nullptr);
  EXPECT_EQ(*off.trace, "");  // unset and no GMP_TRACE: off
  Config on = Config{}.resolve(nullptr, nullptr, "t.json");
  EXPECT_EQ(*on.trace, "t.json");
}
