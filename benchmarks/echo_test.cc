// The echo comparison's parts, small: a course server under the client
// program, the client's marks and figures, and its errors.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/echo.h"

namespace gmp::bench::echo {
namespace {

TEST(Echo, TheClientMakesItsRoundTripsBetweenItsMarksOnEveryServer) {
  for (int stage : {4, 5}) {
    Server server(stage, /*procs=*/2);
    std::vector<bool> marks;
    ServerCounters at_start, at_end;
    ClientRun r = run_client(server.port(), /*conns=*/3, /*round_trips=*/7,
                             /*syscalls=*/false, [&](bool start) {
                               marks.push_back(start);
                               (start ? at_start : at_end) = server.counters();
                             });
    EXPECT_EQ(r.round_trips, 21) << "stage " << stage;
    EXPECT_GT(r.echo_ns, 0);
    EXPECT_GT(r.server_cpu_ns, 0) << "this process's threads served them";
    EXPECT_TRUE(r.syscalls.empty()) << "not asked for";
    EXPECT_EQ(marks, (std::vector<bool>{true, false}));
    // Each round trip runs a connection's goroutine at least once.
    EXPECT_GE(at_end.switches - at_start.switches, 1) << "stage " << stage;
  }
}

TEST(Echo, AServerServesOneClientAfterAnother) {
  Server server(4, 1);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(run_client(server.port(), 2, 5, false, [](bool) {}).round_trips, 10);
  }
}

TEST(Echo, AClientThatCannotRunIsAnErrorThatSaysSo) {
  Server server(4, 1);
  std::string real = client_path();
  ::setenv("GMP_ECHO_CLIENT", "/nonexistent/echo_client", 1);
  try {
    run_client(server.port(), 1, 1, false, [](bool) {});
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    // The path alone would contain "echo_client": the message says what
    // to do.
    EXPECT_NE(std::string(e.what()).find(
                  "cannot run /nonexistent/echo_client (build "
                  "//benchmarks:echo_client, or set GMP_ECHO_CLIENT)"),
              std::string::npos)
        << e.what();
  }
  ::setenv("GMP_ECHO_CLIENT", real.c_str(), 1);
}

TEST(Echo, AFailingClientIsAnError) {
  Server server(4, 1);
  // A port nobody listens on: the client cannot connect and exits 2.
  try {
    run_client(1, 1, 1, false, [](bool) {});
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("echo_client failed"),
              std::string::npos)
        << e.what();
  }
}

// The parent's ends of its pipes (/proc/self/fd), to see none left open.
int open_pipes() {
  int n = 0;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    auto target = std::filesystem::read_symlink(fd.path(), ec);
    if (!ec && target.string().starts_with("pipe:")) ++n;
  }
  return n;
}

// A mark callback that throws (a failed measurement) ends run_client with
// the client still running, blocked on its stdin: it is killed and reaped
// (this test's process has no child left, not even a zombie), and the
// parent's ends of its pipes are closed.
TEST(Echo, AMarkThatThrowsLeavesNoChildAndNoPipe) {
  Server server(4, 1);
  const int pipes = open_pipes();
  for (bool at_start : {true, false}) {
    EXPECT_THROW(run_client(server.port(), 1, 3, false,
                            [&](bool start) {
                              if (start == at_start) {
                                throw std::runtime_error("mark failed");
                              }
                            }),
                 std::runtime_error);
    errno = 0;
    EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD) << "a child left behind";
    EXPECT_EQ(open_pipes(), pipes);
  }
  // The server goes on serving.
  EXPECT_EQ(run_client(server.port(), 1, 3, false, [](bool) {}).round_trips, 3);
}

TEST(Echo, OnlyStagesFourAndFiveHaveThisServer) {
  EXPECT_THROW(Server(3, 1), std::invalid_argument);
}

}  // namespace
}  // namespace gmp::bench::echo
