// A child process the benchmarks start and read: the cold benchmarks'
// fresh process (cold_bench.h) and the echo rows' client (echo.cc). Its
// stdout comes back through a pipe; its stdin is a pipe too if asked.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

extern char** environ;

namespace gmp::bench {

/// A running child and the parent's ends of its pipes. One that goes out
/// of scope before wait_child (a mark callback threw) is killed and
/// reaped, and its pipes closed.
struct Child {
  pid_t pid = -1;       ///< -1 once reaped by wait_child
  FILE* out = nullptr;  ///< its stdout, for the parent to read
  int in = -1;          ///< its stdin, for the parent to write; -1 if none

  Child() = default;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (pid < 0) return;
    ::kill(pid, SIGKILL);
    close_pipes();
    reap();
  }

  /// Closes the parent's ends of the pipes (the child sees end of input).
  void close_pipes() {
    if (out != nullptr) std::fclose(out);
    if (in >= 0) ::close(in);
    out = nullptr;
    in = -1;
  }

  /// Waits for the child (pid >= 0) and forgets it; true if it exited
  /// with status 0.
  bool reap() {
    int status = 0;
    pid_t got;
    do {
      got = ::waitpid(pid, &status, 0);
    } while (got < 0 && errno == EINTR);  // a handler without SA_RESTART
    const bool reaped = got == pid;
    pid = -1;  // reaped, or not ours to reap
    return reaped && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
};

/// Starts the program at `path` with `args` (args[0] is its name), its
/// stdout into a pipe and, with `pipe_stdin`, its stdin from one. The
/// pipes are close-on-exec, so no other child inherits them. False if the
/// pipes or the spawn failed; then nothing is left open.
inline bool spawn_child(const char* path, std::vector<std::string> args,
                        bool pipe_stdin, Child* c) {
  int from[2];
  int to[2] = {-1, -1};
  if (::pipe2(from, O_CLOEXEC) != 0) return false;
  if (pipe_stdin && ::pipe2(to, O_CLOEXEC) != 0) {
    ::close(from[0]);
    ::close(from[1]);
    return false;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (pipe_stdin) posix_spawn_file_actions_adddup2(&fa, to[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&fa, from[1], STDOUT_FILENO);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int err = ::posix_spawn(&c->pid, path, &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(from[1]);
  if (pipe_stdin) ::close(to[0]);
  if (err != 0) {
    c->pid = -1;  // nothing to reap
    ::close(from[0]);
    if (pipe_stdin) ::close(to[1]);
    return false;
  }
  c->out = ::fdopen(from[0], "r");
  c->in = pipe_stdin ? to[1] : -1;
  return true;
}

/// Closes the parent's ends and waits for the child; true if it exited
/// with status 0, false if it was waited for already.
inline bool wait_child(Child* c) {
  c->close_pipes();
  // Waited for already, or never started: waitpid(-1) would reap any
  // child of the process instead.
  if (c->pid < 0) return false;
  return c->reap();
}

}  // namespace gmp::bench
