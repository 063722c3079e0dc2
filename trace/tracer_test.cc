// The tracer's pieces on hand-made events: per-thread buffers (order,
// time, chunks), the JSON writer (balanced tracks whatever events were
// lost), function labels, and a session's file per run.
#include "trace/tracer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <typeinfo>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "trace/json.h"

namespace gmp::trace {
namespace {

// What a written trace holds, read back from the writer's one-event-per-
// line output: the B/E depth of every track, and otherData's counters.
struct Written {
  std::map<std::pair<int, int>, int> depth;  // (pid, tid) -> open slices
  bool went_negative = false;                // an E closed nothing
  int begins = 0;
  std::map<std::string, long> other;  // "forced_ends" -> 1, ...
  std::string text;
};

Written read_back(const std::string& text) {
  Written w;
  w.text = text;
  static const std::regex event(R"re(^\{"ph":"([BE])","pid":(\d+),"tid":(\d+))re");
  static const std::regex counter(R"re("(\w+)":(\d+))re");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, event)) {
      int& d = w.depth[{std::stoi(m[2]), std::stoi(m[3])}];
      d += m[1] == "B" ? 1 : -1;
      w.begins += m[1] == "B";
      w.went_negative |= d < 0;
    }
    if (line.rfind("\"otherData\"", 0) == 0) {
      for (std::sregex_iterator it(line.begin(), line.end(), counter), end;
           it != end; ++it) {
        w.other[(*it)[1]] = std::stol((*it)[2]);
      }
    }
  }
  return w;
}

// Writes the tracer's file, reads it back and removes it.
Written write(const Tracer& tracer) {
  EXPECT_EQ(tracer.write({.stage = "test", .procs = 2}), "");
  std::ifstream in(tracer.path());
  std::ostringstream text;
  text << in.rdbuf();
  std::remove(tracer.path().c_str());
  return read_back(text.str());
}

std::string temp_path() {
  char path[] = "/tmp/gmp-tracer-test-XXXXXX";
  int fd = ::mkstemp(path);
  EXPECT_GE(fd, 0) << "no temporary file";
  ::close(fd);
  return path;
}

bool balanced(const Written& w) {
  if (w.went_negative) return false;
  for (const auto& [track, d] : w.depth) {
    if (d != 0) return false;
  }
  return true;
}

TEST(TraceBuffer, KeepsEveryEventInOrderAcrossChunks) {
  Tracer tracer(temp_path());
  Buffer* b = tracer.buffer(0);
  const std::size_t n = 3 * Buffer::kChunkEvents + 5;
  for (std::size_t i = 0; i < n; ++i) b->go_start(i, 0);
  ASSERT_EQ(b->size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ((*b)[i].g, i) << "event " << i;
    ASSERT_EQ((*b)[i].type, EventType::kGoStart);
    if (i > 0) {
      ASSERT_GT((*b)[i].ts, (*b)[i - 1].ts) << "event " << i;
    }
  }
  EXPECT_EQ(b->dropped(), 0u);
  std::remove(tracer.path().c_str());
}

TEST(TraceBuffer, AnEventKeepsItsEarlierTimeOnlyIfItStaysInOrder) {
  Tracer tracer(temp_path());
  Buffer* b = tracer.buffer(3);
  const std::int64_t before = b->now();
  b->go_syscall(7, 1);  // recorded after `before`
  b->handoff(1, 3, 4, before);
  ASSERT_EQ(b->size(), 2u);
  EXPECT_GT((*b)[1].ts, (*b)[0].ts) << "the buffer's order wins";
  const std::int64_t at = b->now();
  b->handoff(1, 3, 4, at);
  EXPECT_EQ((*b)[2].ts, std::max(at, (*b)[1].ts + 1));
  EXPECT_EQ((*b)[2].arg2, 4u);
  std::remove(tracer.path().c_str());
}

// A goroutine that yields, migrates to another M and P, makes a syscall and
// comes back onto a P, then exits: every track balances and nothing is
// forced.
TEST(TraceWriter, ARunAcrossMsAndPsBalancesEveryTrack) {
  Tracer tracer(temp_path());
  Buffer* run = tracer.buffer(kRunThread);
  Buffer* m0 = tracer.buffer(0);
  Buffer* m1 = tracer.buffer(1);
  run->go_create(1, 0, nullptr, kNoP);
  m0->go_start(1, 0);
  m0->go_create(2, 1, nullptr, 0);
  m0->go_stop(1, StopReason::kYield, WaitReason::kNone);
  m1->steal(1, 0, 1);
  m1->go_start(2, 1);
  m1->go_syscall(2, 1);
  m0->go_start(1, 0);
  m1->go_sysexit(2, 1);
  m1->go_stop(2, StopReason::kExit, WaitReason::kNone);
  m0->go_stop(1, StopReason::kExit, WaitReason::kNone);
  Written w = write(tracer);
  EXPECT_TRUE(balanced(w)) << w.text;
  EXPECT_EQ(w.other["forced_ends"], 0) << w.text;
  EXPECT_EQ(w.other["goroutines_created"], 2);
  EXPECT_EQ(w.other["goroutines_ended"], 2);
  EXPECT_NE(w.text.find("\"name\":\"steal 1 from P0\""), std::string::npos)
      << w.text;
}

// Lost events (a full buffer drops them) must not unbalance the file: the
// writer closes what they left open and counts it.
TEST(TraceWriter, LostStopsAreClosedAndCounted) {
  Tracer tracer(temp_path());
  Buffer* m0 = tracer.buffer(0);
  Buffer* m1 = tracer.buffer(1);
  m0->go_create(1, 0, nullptr, 0);
  m0->go_create(2, 1, nullptr, 0);
  m0->go_start(1, 0);  // its stop is lost
  m1->go_start(2, 1);
  m1->go_syscall(2, 1);
  m1->go_sysexit(2, 0);  // onto P0, which still shows goroutine 1
  m1->go_stop(2, StopReason::kExit, WaitReason::kNone);
  m1->spin_start();  // never stopped
  Written w = write(tracer);
  EXPECT_TRUE(balanced(w)) << w.text;
  EXPECT_GE(w.other["forced_ends"], 3) << w.text;
}

TEST(TraceWriter, EveryStopReasonAndWaitReasonIsNamed) {
  Tracer tracer(temp_path());
  Buffer* m = tracer.buffer(0);
  m->go_create(1, 0, nullptr, 0);
  m->go_start(1, 0);
  m->go_stop(1, StopReason::kPark, WaitReason::kChanReceive);
  m->go_start(1, 0);
  m->go_stop(1, StopReason::kPreempt, WaitReason::kNone);
  m->go_start(1, 0);
  m->go_stop(1, StopReason::kExit, WaitReason::kNone);
  Written w = write(tracer);
  EXPECT_NE(w.text.find("\"reason\":\"park\",\"wait\":\"chan receive\""),
            std::string::npos)
      << w.text;
  EXPECT_NE(w.text.find("\"reason\":\"preempted\""), std::string::npos);
  EXPECT_NE(w.text.find("\"reason\":\"exit\""), std::string::npos);
  EXPECT_TRUE(balanced(w));
}

namespace labels {
struct Job {
  void operator()() const {}
};
}  // namespace labels

TEST(TraceWriter, LabelsAreDemangledWithoutTheAnonymousNamespace) {
  EXPECT_EQ(function_label(&typeid(labels::Job)),
            "gmp::trace::labels::Job");
  EXPECT_EQ(function_label(nullptr), "");
  // JSON-escaped where it is written: a quote in a name cannot break it.
  Tracer tracer(temp_path());
  Buffer* m = tracer.buffer(0);
  m->go_create(1, 0, &typeid(labels::Job), 0);
  m->go_start(1, 0);
  m->go_stop(1, StopReason::kExit, WaitReason::kNone);
  Written w = write(tracer);
  EXPECT_NE(w.text.find("\"name\":\"G1 gmp::trace::labels::Job\""),
            std::string::npos)
      << w.text;
}

// The file's times are the ticks times the clock's rate: a hand-off stamped
// at tick 1000 with 0.5 ns per tick is at 0.5 us.
TEST(TraceWriter, TicksBecomeMicrosecondsAtTheClocksRate) {
  Clock clock;
  Buffer b(0, clock);
  b.handoff(0, 0, 1, 1000);
  std::ostringstream out;
  write_chrome_json(out, {&b}, {.stage = "test", .procs = 1, .ns_per_tick = 0.5});
  EXPECT_NE(out.str().find("\"ts\":0.500,\"dur\":0"), std::string::npos)
      << out.str();
}

TEST(TraceClock, TicksGrowAndHaveARate) {
  Clock clock;
  std::int64_t a = clock.now();
  std::int64_t b = clock.now();
  EXPECT_GE(a, 0);
  EXPECT_GE(b, a);
  EXPECT_GT(clock.ns_per_tick(), 0.0);
  if (!clock.cycle_counter()) {
    EXPECT_EQ(clock.ns_per_tick(), 1.0);
  }
}

TEST(TraceSession, EachRunGetsItsOwnFileThroughPercentR) {
  char dir[] = "/tmp/gmp-tracer-test-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  Session s;
  for (int run = 0; run < 2; ++run) {
    s.start(std::string(dir) + "/run-%r.json");
    ASSERT_TRUE(s.on());
    ASSERT_TRUE(s.open());
    s.run_buffer()->go_create(1, 0, nullptr, kNoP);
    s.finish({.stage = "test", .procs = 1});
    EXPECT_FALSE(s.on());
    EXPECT_FALSE(s.open());
  }
  // Two files, numbered by the process's run count ("run-<n>.json").
  int found = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(f.path().filename().string().rfind("run-", 0), 0u) << f.path();
    ++found;
  }
  EXPECT_EQ(found, 2);
  std::filesystem::remove_all(dir);
}

TEST(TraceSession, OffWritesNothingAndGivesNoBuffer) {
  Session s;
  s.start("");
  EXPECT_FALSE(s.on());
  EXPECT_TRUE(s.open());
  EXPECT_EQ(s.buffer(0), nullptr);
  EXPECT_EQ(s.run_buffer(), nullptr);
  s.finish({.stage = "test", .procs = 1});
  EXPECT_FALSE(s.open());
}

TEST(TracePath, BadPathsAreConfigErrorsNamingTheirSource) {
  EXPECT_NO_THROW(check_trace_path("", "X.trace"));
  EXPECT_NO_THROW(check_trace_path("/tmp/t.json", "X.trace"));
  try {
    check_trace_path("/no/such/dir/t.json", "X.trace");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "X.trace = \"/no/such/dir/t.json\" is invalid: the trace "
                 "file cannot be created there (No such file or directory)");
  }
  EXPECT_THROW(check_trace_path("/tmp/", "X.trace"), ConfigError);
  EXPECT_EQ(resolve_trace_path(std::string("a.json"), "/no/such/x"), "a.json");
  EXPECT_EQ(resolve_trace_path(std::nullopt, nullptr), "");
  EXPECT_EQ(resolve_trace_path(std::nullopt, "/tmp/t.json"), "/tmp/t.json");
  try {
    (void)resolve_trace_path(std::nullopt, "/no/such/dir/t.json");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("GMP_TRACE (from the environment)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace gmp::trace
