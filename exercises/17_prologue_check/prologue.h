// Exercise 17: cooperative preemption through the stack-bound check of
// every function prologue (Go's stackguard0 and stackPreempt: preemptone,
// the prologue of cmd/internal/obj/x86's stacksplit, newstack, releasem,
// execute; Go 1.19). See README.md for the statement.
//
// A goroutine's stack is [stack_lo, stack_hi); it grows down. Every Go
// function starts by comparing its stack pointer with g.stackguard0 and
// calls morestack (then newstack) when it is too close to stack_lo. To ask
// a goroutine to yield, the runtime sets stackguard0 to stackPreempt, a
// value above every stack: the next prologue check fails, and newstack
// tells a preemption from a real overflow by that value.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace gmp::exercises::prologue {

/// Go's _StackGuard on linux/amd64: stackguard0 sits this far above
/// stack_lo, so that a function may use up to _StackSmall bytes below it
/// (and the runtime's own small frames fit) without a check.
inline constexpr std::uintptr_t kStackGuard = 928;
/// Go's _StackSmall: a frame this small is checked as if it were empty.
inline constexpr std::size_t kStackSmall = 128;
/// Go's _StackBig: a frame larger than this is checked against underflow.
inline constexpr std::size_t kStackBig = 4096;
/// Go's stackPreempt (uintptr(-1314)): larger than any stack address.
inline constexpr std::uintptr_t kStackPreempt = ~std::uintptr_t{0} - 1313;
/// Go's maxstacksize on 64-bit systems, set by runtime.main.
inline constexpr std::size_t kMaxStackSize = 1'000'000'000;

/// A goroutine, as far as preemption and its stack care.
struct G {
  std::uintptr_t stack_lo = 0;  ///< lowest usable byte
  std::uintptr_t stack_hi = 0;  ///< one past the highest
  /// Compared by every prologue: stack_lo + kStackGuard, or kStackPreempt
  /// when a preemption is asked for. Written by other threads (sysmon's
  /// preemptone), read by the goroutine's own.
  std::atomic<std::uintptr_t> stackguard0{0};
  /// Go's gp.preempt: a preemption is wanted, even while stackguard0 has
  /// been put back for a moment (see releasem).
  std::atomic<bool> preempt{false};
};

/// The M running the goroutine: what canPreemptM reads (Go's m fields).
struct M {
  int locks = 0;           ///< runtime locks held (Go's m.locks)
  bool mallocing = false;  ///< inside the allocator (m.mallocing)
  /// A reason not to preempt is set (m.preemptoff != "").
  bool preemptoff = false;
  bool p_running = true;  ///< its P is _Prunning
};

/// Given: a new G with a stack of `size` bytes at `lo`, not preempted.
inline void malg(G& gp, std::uintptr_t lo, std::size_t size) {
  gp.stack_lo = lo;
  gp.stack_hi = lo + size;
  gp.stackguard0.store(lo + kStackGuard, std::memory_order_relaxed);
  gp.preempt.store(false, std::memory_order_relaxed);
}

/// Given: Go's copystack: moves gp to a new stack of `newsize` bytes (here
/// only its bounds change: the new stack sits just below 1 << 46) and sets
/// stackguard0 for it, which overwrites a preemption request ("NOTE: might
/// clobber a preempt request", Go's stack.go).
inline void copystack(G& gp, std::size_t newsize) {
  const std::uintptr_t hi = std::uintptr_t{1} << 46;
  gp.stack_lo = hi - newsize;
  gp.stack_hi = hi;
  gp.stackguard0.store(gp.stack_lo + kStackGuard, std::memory_order_relaxed);
}

// ---- Yours: prologue.cc
// --------------------------------------------------------

/// Go's preemptone (the cooperative half): asks gp to yield at its next
/// function call. Any thread.
void preemptone(G& gp);

/// The check a function with a frame of `framesize` bytes makes in its
/// prologue, at stack pointer `sp`, against `stackguard0`: true when it must
/// call morestack. Go's three cases: a frame of at most kStackSmall bytes
/// compares sp itself; one of at most kStackBig compares sp minus the part
/// of the frame above kStackSmall; a larger one first checks that this
/// subtraction does not wrap below 0 (then it calls morestack).
bool needs_morestack(std::uintptr_t sp, std::uintptr_t stackguard0,
                     std::size_t framesize);

/// What newstack decided.
enum class Morestack : std::uint8_t {
  kPreempt,      ///< yield now (Go's gopreempt_m: to the global run queue)
  kKeepRunning,  ///< a preemption was asked for, but not now: run on
  kGrew,         ///< the stack was too small: moved to a larger one
};

/// Go's newstack, called by morestack when gp's prologue check failed at
/// `sp`, in a function whose frame needs `max_frame` bytes, on M `m`.
/// stackguard0 decides: kStackPreempt is a preemption request, anything else
/// a real overflow. A request on an M that cannot be preempted now (Go's
/// canPreemptM: locks held, in malloc, preemptoff, its P not running) is
/// deferred: the goroutine runs on with its real guard, the request kept in
/// gp.preempt. A real overflow moves the stack (copystack) to twice its
/// size, doubled again until the frame fits with kStackGuard to spare; past
/// kMaxStackSize, throws std::runtime_error("stack overflow: goroutine
/// stack exceeds 1000000000-byte limit").
Morestack newstack(G& gp, const M& m, std::uintptr_t sp, std::size_t max_frame);

/// Go's releasem: the M leaves a critical section (m.locks - 1); the last
/// one out re-arms a preemption request that came meanwhile.
void releasem(G& gp, M& m);

/// Go's execute, for what concerns preemption: gp starts a new time slice
/// on an M; whatever was asked of it before is done.
void execute(G& gp);

}  // namespace gmp::exercises::prologue
