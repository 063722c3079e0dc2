/// \file
/// select: wait on several channel operations, run the first that can go
/// (Go's select statement, runtime/select.go's selectgo), written once for
/// every stage.
///
/// ```unparsed
/// Go:                                 The course:
///   select {                            std::optional<int> v;
///   case v, ok := <-a:                  switch (select(recv_case(a, v),
///   case b <- x:                                       send_case(b, x),
///   default:                                           default_case)) {
///   }                                     case 0: ... case 1: ... case 2: ...
///                                       }
/// select returns the position of the case that ran, in argument order.
///
/// selectgo, step by step (the names are Go's):
///   1. pollorder: the cases in a uniformly random order (cheaprandn), so
///      that no case is favoured when several are ready. A case on a null
///      channel (Go's nil channel) is left out: it is never ready.
///   2. lockorder: the channels sorted by address, each locked once. Two
///      selects over the same channels in opposite orders lock them in the
///      same order, so they cannot deadlock.
///   3. Pass 1, every lock held: the first case in pollorder that can run
///      without waiting runs (the channel's send_now / recv_now: a waiting
///      partner, the buffer, or for a receive, the close). A send case on a
///      closed channel throws Go's panic.
///   4. None can, and a default case is there: it runs.
///   5. Pass 2: one sudog per case, each on its channel's queue, chained by
///      waitlink and sharing one claim (sudog.h): the first waker of any
///      case wins them all. The goroutine parks, and its scheduler releases
///      every channel lock once it is recorded as waiting (ParkUnlock).
///   6. Pass 3, woken: every lock again; the cases that did not fire are
///      taken off their queues; the one that fired (Sudog::fired) is
///      finished: a receive has its value (or the close), a send woken by
///      a close panics.
/// A select whose every case has a null channel, and no default, parks
/// forever: checkdead reports it when nothing else can run, as Go does,
/// "[select]"; Go's `select {}` (block) as "[select (no cases)]".
/// ```
#pragma once

#include <array>
#include <cstddef>
#include <new>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "common/chan.h"
#include "common/cheaprand.h"
#include "common/check.h"
#include "common/errors.h"
#include "common/park_unlock.h"
#include "common/runtime_lock.h"
#include "common/scheduler.h"

namespace gmp {

/// A receive case: fires when a value arrives, or when the channel is
/// closed (then `out`, if given, becomes std::nullopt: Go's ok == false).
/// Made by recv_case().
template <class T, Scheduler S>
struct RecvCase {
  BasicChan<T, S>* ch;      ///< null: never fires (Go's nil channel)
  std::optional<T>* out;    ///< where the value goes; null: discarded
  std::optional<T> slot{};  ///< the value, until the select hands it out
};

/// A send case: fires when `value` is sent. Made by send_case().
template <class T, Scheduler S>
struct SendCase {
  BasicChan<T, S>* ch;  ///< null: never fires (Go's nil channel)
  T value;              ///< moved from only if this case fires
};

/// select's default case: runs when no other case can at once.
struct DefaultCase {};
/// The default case (Go's `default:`).
inline constexpr DefaultCase default_case{};

/// A case receiving from `ch` into `out`.
template <class T, Scheduler S>
RecvCase<T, S> recv_case(BasicChan<T, S>& ch, std::optional<T>& out) {
  return {&ch, &out};
}
/// A case receiving from `ch`, which may be null (never fires), into `out`.
template <class T, Scheduler S>
RecvCase<T, S> recv_case(BasicChan<T, S>* ch, std::optional<T>& out) {
  return {ch, &out};
}
/// A case receiving from `ch` and discarding the value (Go's `case <-ch:`).
template <class T, Scheduler S>
RecvCase<T, S> recv_case(BasicChan<T, S>& ch) {
  return {&ch, nullptr};
}
/// As recv_case(ch), where `ch` may be null (never fires).
template <class T, Scheduler S>
RecvCase<T, S> recv_case(BasicChan<T, S>* ch) {
  return {ch, nullptr};
}
/// A case sending `value` on `ch` (moved in; dropped if another case fires).
template <class T, Scheduler S, class U>
SendCase<T, S> send_case(BasicChan<T, S>& ch, U&& value) {
  return {&ch, T(std::forward<U>(value))};
}
/// As send_case(ch, value), where `ch` may be null (never fires).
template <class T, Scheduler S, class U>
SendCase<T, S> send_case(BasicChan<T, S>* ch, U&& value) {
  return {ch, T(std::forward<U>(value))};
}

namespace detail {

template <class C>
struct CaseTraits {  // a default case
  static constexpr bool kDefault = true;
};
template <class T, class S>
struct CaseTraits<RecvCase<T, S>> {
  static constexpr bool kDefault = false;
  using Sched = S;
};
template <class T, class S>
struct CaseTraits<SendCase<T, S>> {
  static constexpr bool kDefault = false;
  using Sched = S;
};

template <class C>
using CaseOf = std::remove_cvref_t<C>;

// Whether case C is a default or a channel case of stage S.
template <class C, class S>
inline constexpr bool kOfStage = true;  // a default case
template <class T, class S, class S2>
inline constexpr bool kOfStage<RecvCase<T, S2>, S> = std::is_same_v<S, S2>;
template <class T, class S, class S2>
inline constexpr bool kOfStage<SendCase<T, S2>, S> = std::is_same_v<S, S2>;

// The stage (Sched) of the first channel case among Cs.
template <class... Cs>
struct FirstSched;
template <bool kDefault, class C, class... Cs>
struct FirstSchedAfter : FirstSched<Cs...> {};  // C is a default: skip it
template <class C, class... Cs>
struct FirstSchedAfter<false, C, Cs...> {
  using type = typename CaseTraits<C>::Sched;
};
template <class C, class... Cs>
struct FirstSched<C, Cs...>
    : FirstSchedAfter<CaseTraits<C>::kDefault, C, Cs...> {};

// The channel case's operations, lock held where it says. Overloaded on
// the case kind; `g` is the selecting goroutine.
template <class T, class S>
RuntimeLock* case_lock(RecvCase<T, S>& c) {
  return c.ch != nullptr ? ChanAccess<T, S>::lock(c.ch) : nullptr;
}
template <class T, class S>
RuntimeLock* case_lock(SendCase<T, S>& c) {
  return c.ch != nullptr ? ChanAccess<T, S>::lock(c.ch) : nullptr;
}
inline RuntimeLock* case_lock(const DefaultCase&) { return nullptr; }

// Before anything is locked: a receive from a Timer's channel is for the
// goroutines of the Timer's runtime (chan.h), whichever case would run.
template <class T, class S>
void case_check(RecvCase<T, S>& c, typename S::G g) {
  if (c.ch != nullptr) ChanAccess<T, S>::check_receiver(c.ch, g, "select");
}
template <class C, class G>
void case_check(C&, G) {}

// Pass 1 (lock held): whether the case ran now; a partner to ready after
// the unlock goes to `wake`. A send on a closed channel returns true with
// `closed_send` set (the caller unlocks, then panics).
template <class T, class S>
bool case_poll(RecvCase<T, S>& c, typename S::G g,
               Sudog<typename S::G>*& wake, bool&) {
  check_same_runtime<S>(ChanAccess<T, S>::sendq(c.ch), g, "select",
                        /*all=*/false);
  return ChanAccess<T, S>::recv_now(c.ch, c.slot, wake);
}
template <class T, class S>
bool case_poll(SendCase<T, S>& c, typename S::G g,
               Sudog<typename S::G>*& wake, bool& closed_send) {
  if (ChanAccess<T, S>::closed(c.ch)) {
    closed_send = true;
    return true;
  }
  check_same_runtime<S>(ChanAccess<T, S>::recvq(c.ch), g, "select",
                        /*all=*/false);
  return ChanAccess<T, S>::send_now(c.ch, c.value, wake);
}
template <class G>
bool case_poll(const DefaultCase&, G, Sudog<G>*&, bool&) {
  return false;
}

// Pass 2 (lock held): s waits on the case's queue, `elem` its value's place.
template <class S>
void enqueue_case(WaitQ<typename S::G>& q, RuntimeLock* lock, void* elem,
                  Sudog<typename S::G>& s) {
  s.elem = elem;
  s.queue = &q;
  s.lock = lock;
  q.enqueue(&s, S::runtime_of(s.g));
}
template <class T, class S>
void case_enqueue(RecvCase<T, S>& c, Sudog<typename S::G>& s) {
  using A = ChanAccess<T, S>;
  enqueue_case<S>(A::recvq(c.ch), A::lock(c.ch), &c.slot, s);
}
template <class T, class S>
void case_enqueue(SendCase<T, S>& c, Sudog<typename S::G>& s) {
  using A = ChanAccess<T, S>;
  enqueue_case<S>(A::sendq(c.ch), A::lock(c.ch), &c.value, s);
}
template <class G>
void case_enqueue(const DefaultCase&, Sudog<G>&) {}

// The case ran (pass 1, or fired in pass 3 with `success` from its waker):
// a receive hands out its value, a send woken by a close panics.
template <class T, class S>
void case_finish(RecvCase<T, S>& c, bool) {
  if (c.out != nullptr) *c.out = std::move(c.slot);
}
template <class T, class S>
void case_finish(SendCase<T, S>&, bool success) {
  if (!success) throw Panic("send on closed channel");
}
inline void case_finish(const DefaultCase&, bool) {}

// Calls f(case i) for a runtime index i of the tuple.
template <class Tuple, class F, std::size_t... Is>
void visit_case(Tuple& t, std::size_t i, F&& f, std::index_sequence<Is...>) {
  ((i == Is ? (f(std::get<Is>(t)), 0) : 0), ...);
}

// The channel locks of one select, in lockorder, each once; releases them
// in reverse order. Also the ParkUnlock of the park: then the scheduler
// releases them (on g0, or before the thread blocks). Reads nothing of
// itself after the last unlock: from then on the goroutine may run again.
struct SelLocks {
  RuntimeLock** locks;  // the select's array, [0, n) in lockorder
  std::size_t n = 0;
  bool held = false;

  void lock_all() {
    for (std::size_t i = 0; i < n; ++i) locks[i]->lock();
    held = true;
  }
  void unlock_all() noexcept {
    held = false;
    unlock(this);
  }
  static void unlock(void* arg) noexcept {
    auto* self = static_cast<SelLocks*>(arg);
    RuntimeLock** ls = self->locks;
    for (std::size_t i = self->n; i-- > 0;) ls[i]->unlock();  // ls[0] last
  }
  ~SelLocks() {
    if (held) unlock_all();  // a panic or UsageError in pass 1
  }
};

}  // namespace detail

namespace detail {

// Parks the calling goroutine for good, as `reason`: nothing can wake it;
// it unwinds (gmp::Goexit) when main returns.
template <Scheduler S>
[[noreturn]] void park_forever(WaitReason reason) {
  typename S::G g = S::current_g("select");
  Sudog<typename S::G> s(g, S::goid(g));
  bool woken = S::park(s, ParkUnlock{}, reason);
  GMP_CHECK(!woken, "select: woken, but nothing can wake it");
  throw Goexit{};  // main returned
}

}  // namespace detail

/// Go's `select {}` (runtime.block): the calling goroutine waits forever,
/// as "select (no cases)"; checkdead reports it when nothing else can run,
/// and it unwinds (gmp::Goexit) when main returns. Goroutine only.
template <Scheduler S>
[[noreturn]] void block() {
  detail::park_forever<S>(WaitReason::kSelectNoCases);
}

/// Go's select: runs the first of `cases` that can go (a uniformly random
/// one if several can), waiting until one can unless a default_case is
/// among them; returns its position in `cases` (0 for the first). Each
/// case is recv_case(ch, out), recv_case(ch), send_case(ch, value) or
/// default_case; channels may have different element types, and may be
/// null (Go's nil channel: never ready). At most one default, at most 64
/// cases. Goroutine only (gmp::UsageError otherwise, as every channel
/// operation). Errors are the channels': gmp::Panic("send on closed
/// channel") from a send case whose channel is, or becomes, closed; a
/// select with no channel case and no default blocks forever ("select (no
/// cases)"), which checkdead reports when nothing else can run.
template <class... Cases>
int select(Cases&&... cases) {
  constexpr std::size_t kN = sizeof...(Cases);
  static_assert(kN > 0, "select needs a case: Go's empty select is "
                        "block<Sched>()");
  static_assert(kN <= 64, "select: at most 64 cases");
  constexpr int kDefaults =
      (int{detail::CaseTraits<detail::CaseOf<Cases>>::kDefault} + ...);
  static_assert(kDefaults <= 1, "select: more than one default case");
  static_assert(kDefaults < static_cast<int>(kN),
                "select: a channel case is needed (a select with only a "
                "default does nothing)");
  // The stage comes from the first channel case; all must agree.
  using S = typename detail::FirstSched<detail::CaseOf<Cases>...>::type;
  static_assert((detail::kOfStage<detail::CaseOf<Cases>, S> && ...),
                "select: every channel must belong to the same stage");
  using G = typename S::G;
  using Sudog = gmp::Sudog<G>;
  constexpr auto kIdx = std::make_index_sequence<kN>{};

  G g = S::current_g("select");
  std::tuple<Cases&...> t(cases...);
  int default_at = -1;
  // 1. pollorder, and the locks of the cases it holds.
  std::array<int, kN> pollorder{};
  std::array<RuntimeLock*, kN> locks;  // [0, npoll) written before read
  std::size_t npoll = 0;
  for (std::size_t i = 0; i < kN; ++i) {
    RuntimeLock* l = nullptr;
    bool is_default = true;
    detail::visit_case(t, i, [&](auto& c) {
      detail::case_check(c, g);
      l = detail::case_lock(c);
      is_default = detail::CaseTraits<detail::CaseOf<decltype(c)>>::kDefault;
    }, kIdx);
    if (is_default) default_at = static_cast<int>(i);
    if (l == nullptr) continue;  // default, or a null channel
    std::uint32_t j = cheaprandn(static_cast<std::uint32_t>(npoll + 1));
    pollorder[npoll] = pollorder[j];
    pollorder[j] = static_cast<int>(i);
    locks[npoll++] = l;
  }
  // 2. lockorder: by address, each lock once (insertion sort: n is small).
  std::size_t nlocks = 0;
  for (std::size_t i = 0; i < npoll; ++i) {
    RuntimeLock* l = locks[i];
    std::size_t k = nlocks;
    while (k > 0 && locks[k - 1] > l) --k;
    if (k > 0 && locks[k - 1] == l) continue;  // a second case, same channel
    for (std::size_t m = nlocks; m > k; --m) locks[m] = locks[m - 1];
    locks[k] = l;
    ++nlocks;
  }
  detail::SelLocks held{locks.data(), nlocks};
  if (npoll == 0) {  // every channel null: Go parks as "select"
    if (default_at >= 0) return default_at;
    detail::park_forever<S>(WaitReason::kSelect);
  }
  // 3. Pass 1: a case that can run now.
  held.lock_all();
  for (std::size_t k = 0; k < npoll; ++k) {
    bool ran = false, closed_send = false;
    Sudog* wake = nullptr;
    detail::visit_case(t, static_cast<std::size_t>(pollorder[k]),
                       [&](auto& c) {
                         ran = detail::case_poll(c, g, wake, closed_send);
                       }, kIdx);
    if (!ran) continue;
    held.unlock_all();
    if (closed_send) throw Panic("send on closed channel");
    if (wake != nullptr) S::ready(*wake);
    detail::visit_case(t, static_cast<std::size_t>(pollorder[k]),
                       [](auto& c) { detail::case_finish(c, true); }, kIdx);
    return pollorder[k];
  }
  // 4. Nothing ready: the default case, if any.
  if (default_at >= 0) {
    held.unlock_all();
    return default_at;
  }
  // 5. Pass 2: a sudog on every case's queue, one claim for all; park.
  // (Sudogs are not movable: made in place, one per case with a channel,
  // in storage left uninitialized: an array of std::optional<Sudog> would
  // be zeroed whole, a `rep stos` of kN sudogs, on every park.)
  static_assert(std::is_trivially_destructible_v<Sudog>,
                "select: its sudogs' storage is never destroyed");
  alignas(Sudog) std::byte sg_mem[kN][sizeof(Sudog)];
  std::array<Sudog*, kN> sgs;  // [0, npoll) made below
  Sudog* first = nullptr;
  Sudog* prev = nullptr;
  std::array<int, kN> case_of;  // the case index of sgs[k], [0, npoll)
  for (std::size_t k = 0; k < npoll; ++k) {
    Sudog& s = *(sgs[k] = ::new (sg_mem[k]) Sudog(g, S::goid(g)));
    case_of[k] = pollorder[k];
    if (first == nullptr) {
      first = &s;
    } else {
      s.share_claim(*first);
      prev->waitlink = &s;
    }
    prev = &s;
    detail::visit_case(t, static_cast<std::size_t>(pollorder[k]),
                       [&](auto& c) { detail::case_enqueue(c, s); }, kIdx);
  }
  held.held = false;  // the scheduler releases them (ParkUnlock)
  if (!S::park(*first, ParkUnlock{&detail::SelLocks::unlock, &held},
               WaitReason::kSelect)) {
    throw Goexit{};  // cancelled at exit: every case was unlinked
  }
  // 6. Pass 3: the cases that did not fire leave their queues.
  held.lock_all();
  std::size_t fired = npoll;
  for (std::size_t k = 0; k < npoll; ++k) {
    Sudog& s = *sgs[k];
    if (s.fired) {
      fired = k;
    } else {
      s.queue->remove(&s);
    }
  }
  held.unlock_all();
  GMP_CHECK(fired < npoll, "select: woken with no case fired");
  bool success = sgs[fired]->success;
  detail::visit_case(t, static_cast<std::size_t>(case_of[fired]),
                     [&](auto& c) { detail::case_finish(c, success); }, kIdx);
  return case_of[fired];
}

}  // namespace gmp
