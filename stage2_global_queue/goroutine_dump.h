/// \file
/// Goroutine dumps: every goroutine with its state, wait reason, how long
/// it has waited and where it last ran, in Go's traceback header format;
/// printed on SIGQUIT, in the deadlock report and after an unrecovered
/// exception.
///
/// ```unparsed
/// One block per goroutine, as Go's headers (without Go's stack traces:
/// C++ frames are not walked here):
///
///   goroutine 7 [chan receive, 12 ms]:
///           last ran on M 1, P 0
///           created by goroutine 1: main()::{lambda()#1}
///
/// The state is Go's: running, runnable, syscall, or the wait reason of a
/// parked goroutine ("sleep", "chan receive", "IO wait"...), then, for a
/// parked one, how long it has waited. Stage 2 has no Ps: "last ran on M 1".
/// Dead goroutines are left out, as Go leaves them out.
///
/// SIGQUIT (Ctrl-\ in a terminal, or kill -QUIT): as Go does, the program
/// prints "SIGQUIT: quit", then every goroutine of every runtime running at
/// that moment, and exits with status 2. The signal handler only posts a
/// semaphore (all it may safely do); a watcher thread, started with
/// the handler by the first run(), reads it and prints the dumps, taking
/// the runtimes' locks as any thread may. A runtime whose scheduler is
/// wedged holding its own lock cannot be dumped; the watcher then waits.
/// ```
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "stage2_global_queue/g.h"

namespace gmp::stage2 {

/// One goroutine's block (see the file's comment), ending in a newline.
/// Reads only the G's atomic fields: any thread, at any time.
std::string goroutine_lines(const G& g,
                            std::chrono::steady_clock::time_point now);

/// The blocks of every goroutine in `gs` that is not dead, by id, each
/// followed by a blank line; `skip_goid`'s is left out (a panic prints the
/// panicking goroutine first, itself).
std::string goroutine_dump(std::vector<const G*> gs,
                           std::uint64_t skip_goid = 0);

/// While it lives, SIGQUIT prints `dump()` (a runtime's goroutine dump)
/// and ends the program, as in Go. run() holds one for its duration. The
/// first one installs the SIGQUIT handler and starts its watcher thread.
/// Thread-safe; `dump` is called on the watcher thread.
class SigquitDump {
 public:
  /// Registers `dump` (which names its runtime in its first line).
  explicit SigquitDump(std::function<std::string()> dump);
  /// Unregisters it: once this returns, `dump` is not running and will not
  /// be called again.
  ~SigquitDump();
  SigquitDump(const SigquitDump&) = delete;
  SigquitDump& operator=(const SigquitDump&) = delete;

 private:
  std::function<std::string()> dump_;
};

}  // namespace gmp::stage2
