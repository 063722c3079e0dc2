/// \file
/// Faults in goroutines (SIGSEGV, SIGBUS, SIGFPE), reported as Go reports
/// them, for every stage.
///
/// ```unparsed
/// Go turns a hardware fault in a goroutine into a panic or a fatal error
/// that names the goroutine (runtime/signal_unix.go, sigpanic):
///
///   a stack overflow           fatal error: goroutine 7 stack overflow
///                              (the course's words; Go's: "goroutine stack
///                              exceeds ...-byte limit")
///   a nil dereference          panic: runtime error: invalid memory
///   (an address below 4096)    address or nil pointer dereference
///   any other bad address      unexpected fault address 0x...
///                              fatal error: fault
///   an integer division by 0   panic: runtime error: integer divide by zero
///
/// each followed by "[signal SIGSEGV: segmentation violation code=0x1
/// addr=0x0 pc=0x...]" (not for the overflow), a blank line and the
/// goroutine's block ("goroutine 7 [running]:", where it ran, who made
/// it), with exit status 2. A plain thread's fault is not the runtime's:
/// it goes to the handler installed before (a sanitizer's) or to the
/// default action, as before.
///
/// The handler runs on the thread's alternate signal stack (a goroutine
/// that overflowed has no stack left), may not allocate or lock, so each
/// stage describes its running goroutine through a FaultLookup that only
/// reads (a stage 1 worker, a stage 2-5 M's current G). The report is
/// printed by one thread only (detail::begin_dying). C++ frames are not
/// walked: the report has no stack trace, unlike Go's.
/// ```
#pragma once

#include <signal.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace gmp {

/// The goroutine running on the faulting thread, as a stage describes it.
struct FaultGoroutine {
  std::uint64_t goid = 0;           ///< its id
  std::uint64_t parent = 0;         ///< who made it (0: Runtime::run)
  std::uintptr_t stack_lo = 0;      ///< its usable stack: [stack_lo,
  std::uintptr_t stack_hi = 0;      ///< stack_hi); the guard is below
  std::size_t guard_size = 0;       ///< bytes of guard below stack_lo
  int m = -1;                       ///< the M (stage 1: the worker) it runs on
  int p = -1;                       ///< its P (stages 3-5), or -1
  bool worker = false;              ///< stage 1: `m` is a worker number
  /// The overflow hint's fix: "raise stage3::Config.stack_size", or null
  /// where the stack's size is the system's (stage 1's threads).
  const char* stack_size_field = nullptr;
};

/// Fills `out` for the goroutine running on the calling thread and returns
/// true, or returns false if none runs there (runtime code on g0, an idle
/// worker). Called by the signal handler: only reads, no allocation, no
/// lock (async-signal-safe).
using FaultLookup = bool (*)(FaultGoroutine* out) noexcept;

/// While it lives, faults on the calling thread in a goroutine are
/// reported as the file's comment says. The first one installs the
/// process's handler for SIGSEGV, SIGBUS and SIGFPE; each gives its thread
/// an alternate signal stack (64 KiB) and `lookup`, and puts the thread's
/// previous ones back when it goes. One per thread (an M, a worker), made
/// and destroyed on that thread.
class FaultReports {
 public:
  /// Starts reporting faults of the calling thread's goroutines through
  /// `lookup`. Fatal if the handler or the signal stack cannot be set.
  explicit FaultReports(FaultLookup lookup);
  /// Stops, restoring the thread's previous signal stack and lookup.
  ~FaultReports();
  FaultReports(const FaultReports&) = delete;
  FaultReports& operator=(const FaultReports&) = delete;

 private:
  std::unique_ptr<char[]> stack_;  // this thread's alternate signal stack
  stack_t previous_stack_{};       // the thread's before ours (a sanitizer's)
  FaultLookup previous_lookup_;    // the thread's before ours (none)
};

}  // namespace gmp
