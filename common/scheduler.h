/// \file
/// The two verbs every stage must provide: park and ready.
///
/// ```unparsed
/// Channels, mutexes and wait groups (chan.h, mutex.h, wait_group.h) are
/// written once, against this interface, the way Go's chan.go is written
/// against gopark and goready. Each stage answers "how does a goroutine wait?"
/// in its own way, and only that answer changes from stage to stage:
///
///   stage 1  a goroutine is a task on an OS thread; park blocks the thread
///            (a Note), ready wakes the thread.
///   stage 2+ a goroutine is a green thread; park switches to the scheduler,
///            ready puts the goroutine back on a run queue.
///
/// Protocol (Go's gopark with an unlock function):
///   1. The goroutine locks the object, finds it must wait, puts a Sudog on
///      the object's WaitQ and calls S::park(sudog, unlock, reason).
///   2. park records the goroutine as waiting, and only then releases the
///      object's lock. A waker must take that lock to find the sudog, so it
///      cannot wake the goroutine before it is recorded as waiting.
///   3. A waker locks the object, claims the sudog (WaitQ::dequeue), hands
///      over what the waiter waits for (a value, the mutex), unlocks, and
///      calls S::ready(sudog).
///   4. park returns true. Or, if the runtime cancelled the wait because main
///      returned, false: the runtime has unlinked the sudog already, and the
///      goroutine throws Goexit without touching the object again.
/// ```
#pragma once

#include <concepts>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "common/check.h"
#include "common/errors.h"
#include "common/park_unlock.h"
#include "common/runtime_lock.h"
#include "common/sudog.h"
#include "common/wait_queue.h"
#include "common/wait_reason.h"

namespace gmp {

/// What a stage provides so that the shared objects can block goroutines.
/// `S` is a type with static members only:
///  - `G`: the stage's goroutine handle (copyable, cheap).
///  - `current_g(op)`: the calling goroutine; throws gmp::UsageError naming
///    `op` when called from a thread that is not running a goroutine.
///  - `goid(g)`: the goroutine's id; only the goroutine itself may ask.
///  - `runtime_of(g)`: the runtime g belongs to, as an identity (compared,
///    never dereferenced); any thread, any goroutine.
///  - `park(sudog, unlock, reason)`: steps 2 and 4 above; the locks that
///    `unlock` releases (a ParkUnlock) are held on entry and released by
///    the time it returns; returns false if the wait was cancelled (the
///    sudog, and a select's other cases, are then unlinked from their
///    queues: sudog.h).
///  - `ready(sudog)`: step 3; the caller claimed `sudog`; any goroutine.
///  - `sudog_slot(g)`: where g keeps its sudog for a wait on one object, in
///    its G (OwnSudog below); only g itself uses it.
template <class S>
concept Scheduler =
    requires(typename S::G g, Sudog<typename S::G>& s, ParkUnlock unlock,
             WaitReason why, const char* op) {
      { S::current_g(op) } -> std::same_as<typename S::G>;
      { S::goid(g) } -> std::convertible_to<std::uint64_t>;
      { S::runtime_of(g) } -> std::convertible_to<const void*>;
      { S::park(s, unlock, why) } -> std::same_as<bool>;
      { S::ready(s) } noexcept -> std::same_as<void>;
      { S::sudog_slot(g) } noexcept
          -> std::same_as<std::optional<Sudog<typename S::G>>&>;
    };

/// The calling goroutine's sudog for one wait on one object (a channel
/// operation, Mutex::lock, WaitGroup::wait), made in its G for the wait and
/// ended with the scope, however the scope ends (a Goexit too).
///
/// Go takes a sudog from its P's cache for every wait (acquireSudog) and
/// gives it back after (releaseSudog). A goroutine outside select waits on
/// one object at a time, so the course keeps one sudog in each G instead:
/// nothing to allocate, and a waker that walks a queue of waiters (close,
/// the last WaitGroup::done) touches their Gs, which it must touch anyway
/// to ready them, and not their stacks, each on a page of its own
/// (benchmark: parked goroutines). A select's cases, one sudog each, stay
/// on its stack (select.h).
template <Scheduler S>
class OwnSudog {
 public:
  /// g's sudog, made anew; g is the calling goroutine.
  explicit OwnSudog(typename S::G g) noexcept
      : slot_(S::sudog_slot(g)), s_(slot_.emplace(g, S::goid(g))) {}
  ~OwnSudog() { slot_.reset(); }
  OwnSudog(const OwnSudog&) = delete;
  OwnSudog& operator=(const OwnSudog&) = delete;

  /// The sudog, to fill in (`elem`) and to park with.
  Sudog<typename S::G>& operator*() const noexcept { return s_; }
  /// The sudog's fields (`elem`, `success`).
  Sudog<typename S::G>* operator->() const noexcept { return &s_; }

 private:
  std::optional<Sudog<typename S::G>>& slot_;  // in the G; owned by g
  Sudog<typename S::G>& s_;                     // *slot_
};

/// Parks the calling goroutine on queue `q` of an object whose lock is held
/// by `lock`, with sudog `s`: its OwnSudog, or a select's case (Go's
/// goparkunlock). Returns, with `lock` released, once a waker claimed `s`
/// and readied the goroutine; throws gmp::Goexit if the runtime cancelled
/// the wait. Fill in what the waker needs (a channel's `elem`) before
/// calling.
template <Scheduler S>
void park_on(WaitQ<typename S::G>& q, Sudog<typename S::G>& s,
             std::unique_lock<RuntimeLock>& lock, WaitReason why) {
  s.queue = &q;
  s.lock = lock.mutex();
  q.enqueue(&s, S::runtime_of(s.g));
  if (!S::park(s, ParkUnlock::of(lock.release()), why)) {
    throw Goexit{};  // cancelled: main returned
  }
}

/// Readies every sudog of a chain made by WaitQ::dequeue_all. Call it after
/// unlocking the object: a readied goroutine may run at once and lock it.
template <Scheduler S>
void ready_all(Sudog<typename S::G>* chain) noexcept {
  while (chain != nullptr) {
    Sudog<typename S::G>* next = chain->next;  // read first: after ready()
    chain->next = nullptr;                     // the sudog may be gone
    // The next sudog lives in a goroutine that parked long ago (a close
    // wakes 100,000 at once in benchmarks/workloads.h's Parked): ask for
    // its line now, so that it arrives while this one is readied.
    if (next != nullptr) __builtin_prefetch(next, /*write=*/1, /*keep=*/3);
    S::ready(*chain);
    chain = next;
  }
}

namespace detail {
/// check_same_runtime's slow path: the first waiting sudog of `q` (every
/// one with `all`) checked; throws gmp::UsageError naming `op` if one
/// belongs to a runtime other than `mine`.
template <Scheduler S>
[[gnu::cold, gnu::noinline]] void check_waiters_runtime(
    const WaitQ<typename S::G>& q, const void* mine, const char* op,
    bool all) {
  const Sudog<typename S::G>* foreign = nullptr;
  q.for_each_waiting([&](const Sudog<typename S::G>& s) {
    if (S::runtime_of(s.g) != mine) foreign = &s;
    return foreign == nullptr && all;
  });
  if (foreign == nullptr) return;
  throw UsageError(std::string(op) + ": goroutine " +
                   std::to_string(foreign->goid) +
                   ", waiting on this object, belongs to another runtime. "
                   "A Chan, Mutex or WaitGroup belongs to one runtime at a "
                   "time: goroutines of two runtimes cannot wake each other");
}
}  // namespace detail

/// For goroutine `me`, about to wake the goroutines of queue `q` (every
/// waiting one with `all`, else the one WaitQ::dequeue takes next):
/// throws gmp::UsageError naming `op`, before anything has changed, if one
/// of them belongs to another runtime. An object belongs to one runtime at
/// a time: a goroutine woken by another runtime's would be queued on the
/// waker's scheduler, which does not own it. The object's lock is held.
/// Inline and cheap when nobody waits, when every waiter was queued by
/// `me`'s runtime (WaitQ::sole_runtime: no walk, however many wait), or
/// when the oldest waiter is of `me`'s runtime (a channel hand-off).
template <Scheduler S>
inline void check_same_runtime(const WaitQ<typename S::G>& q, typename S::G me,
                               const char* op, bool all) {
  const Sudog<typename S::G>* first = q.front();
  if (first == nullptr) [[likely]] return;
  const void* mine = S::runtime_of(me);
  if (q.sole_runtime() == mine) [[likely]] return;
  if (!all && S::runtime_of(first->g) == mine &&
      first->waiting()) [[likely]] {
    return;
  }
  detail::check_waiters_runtime<S>(q, mine, op, all);
}

/// The destructor check of every object with wait queues: `waiters` lists
/// the goroutines still waiting (WaitQ::describe); if any, the program ends,
/// since they would wake up inside a destroyed object. Any thread.
inline void check_not_waited_on(std::string_view object,
                                const std::string& waiters) noexcept {
  if (waiters.empty()) return;
  fatal(std::string(object) + " destroyed while goroutines wait on it: " +
        waiters +
        ". An object must outlive every goroutine that blocks on it.");
}

}  // namespace gmp
