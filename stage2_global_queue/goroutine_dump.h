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
/// parked one, how long it has waited. Stage 2 has no Ps: "last ran on
/// M 1"; a scheduler with Ps says which it last ran on (LastP).
/// Dead goroutines are left out, as Go leaves them out.
///
/// SIGQUIT (Ctrl-\ in a terminal, or kill -QUIT): as Go does, the program
/// prints "SIGQUIT: quit", then every goroutine of every runtime running at
/// that moment, and exits with status 2. When several runtimes run, each
/// list starts with a line naming its runtime ("runtime 2 of 2: stage3"). The signal handler only posts a
/// semaphore (all it may safely do); a watcher thread, started with
/// the handler by the first run(), reads it and prints the dumps, taking
/// the runtimes' locks as any thread may. A runtime whose scheduler is
/// wedged holding its own lock cannot be dumped; the watcher then waits.
/// ```
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "common/errors.h"
#include "stage2_global_queue/g.h"

namespace gmp::stage2 {

/// One goroutine's block (see the file's comment), ending in a newline;
/// `p` is the P it last ran on, or -1 (none, or no Ps). Reads only the
/// G's atomic fields: any thread, at any time.
std::string goroutine_lines(const G& g,
                            std::chrono::steady_clock::time_point now,
                            int p = -1);

/// The blocks of every goroutine in `gs` that is not dead, each followed
/// by a blank line: `first`'s first if given (a panic's report starts with
/// the panicking goroutine, as Go's does), then the others by id. Each
/// block names the goroutine's last P if `last_p` is given.
std::string goroutine_dump(std::vector<const G*> gs, const G* first = nullptr,
                           LastP last_p = nullptr);

/// The end of goroutine gp, whose exception nobody caught: Go's panic
/// report (gmp::die_of_panic) with every goroutine of `rt`, gp first, then
/// exit 2. Called from the catch block in the goroutine's first frame.
/// Out of line and cold: inlined, its string and its try block gave that
/// frame a stack canary and two more saved registers on every goroutine.
template <class Runtime>
[[noreturn, gnu::cold, gnu::noinline]] void die_of_uncaught(
    const Runtime& rt, const G* gp) noexcept {
  std::exception_ptr e = std::current_exception();
  std::string dump;
  try {
    dump = rt.dump_goroutines(gp);
  } catch (...) {  // out of memory: the report names gp alone
  }
  die_of_panic(gp->goid.load(std::memory_order_relaxed), e, dump);
}

/// While it lives, SIGQUIT prints `dump()` (a runtime's goroutine dump)
/// and ends the program, as in Go. run() holds one for its duration. The
/// first one installs the SIGQUIT handler and starts its watcher thread.
/// Thread-safe; `dump` is called on the watcher thread.
class SigquitDump {
 public:
  /// Registers `dump`, the goroutines of the runtime called `name`
  /// ("stage3"), for the SIGQUIT report.
  SigquitDump(std::string name, std::function<std::string()> dump);
  /// Unregisters it: once this returns, `dump` is not running and will not
  /// be called again.
  ~SigquitDump();
  SigquitDump(const SigquitDump&) = delete;
  SigquitDump& operator=(const SigquitDump&) = delete;

  /// The runtime's name, as given.
  const std::string& name() const noexcept { return name_; }
  /// Its goroutines now (calls the function given).
  std::string dump() const { return dump_(); }

 private:
  const std::string name_;
  const std::function<std::string()> dump_;
};

}  // namespace gmp::stage2
