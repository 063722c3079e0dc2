/// \file
/// Timers as values, written once for every stage (Go's time.Timer,
/// time.Ticker, time.After and time.AfterFunc, over the runtime timers of
/// timer.h).
///
/// ```unparsed
/// A Timer owns a runtime timer and, unless it was made by after_func, a
/// channel of one slot. When the runtime timer fires, its function (run by
/// the runtime, not by a goroutine: timer.h) sends the time on the channel
/// without waiting (a ticker drops a tick nobody took), or starts the
/// after_func goroutine.
///
/// Stop and reset follow Go 1.23: once stop() or reset() has returned, no
/// value prepared before the call is received. They take the timer's own
/// lock, take the runtime timer out of its heap (TimerScheduler::del_timer),
/// increment its seq (a firing already taken off the heap then finds a seq
/// that is no longer the timer's and does nothing) and drop a value left
/// in the channel. Stop returns true if it kept a value from being
/// received or the function from starting: the timer was waiting, firing,
/// or had sent a value nobody has received yet.
///
/// The one difference from Go 1.23: the channel has a buffer of one slot,
/// so len(c) is 1 between a firing and its receive, where Go 1.23 says 0.
///
/// A duration too long for the clock saturates, as in Go: the timer never
/// fires (timer.h's timer_when), and a ticker of such a period ticks at
/// most once. A Timer belongs to the runtime that made it: its firing is
/// that runtime's work, and cannot wake a goroutine of another one. So a
/// receive from its channel, or a reset, by a goroutine of another runtime
/// is a gmp::UsageError that changes nothing; stop() and the destructor
/// work from anywhere.
///
/// Lock order: the timer's lock, then a channel's lock, then the
/// scheduler's. The runtime calls a timer's function without its own lock.
/// ```
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "common/chan.h"
#include "common/errors.h"
#include "common/runtime_lock.h"
#include "common/scheduler.h"
#include "common/select.h"
#include "common/timer.h"

namespace gmp {

/// What a stage provides, beyond park and ready (scheduler.h), for timers
/// that are values. `S` has, besides Scheduler's members:
///  - `add_timer(t)`: puts `t` (in no heap, its when, period, f and arg
///    set) into the calling goroutine's runtime; from now on that runtime
///    calls t.f(t.arg, seq) when it is due, without the scheduler's lock.
///    Goroutine only (gmp::UsageError otherwise).
///  - `del_timer(t)`: takes `t` out of its runtime's heap if it is there;
///    whether it was. Any thread; `t`'s runtime must still be running or
///    have ended its run (a run's end empties the heap).
///  - `go_from_timer(fn)`: starts a goroutine running fn, from inside a
///    timer's function (the runtime's own thread of control).
template <class S>
concept TimerScheduler =
    Scheduler<S> && requires(RuntimeTimer& t, std::function<void()> fn) {
      { S::add_timer(t) } -> std::same_as<void>;
      { S::del_timer(t) } -> std::same_as<bool>;
      { S::go_from_timer(std::move(fn)) } -> std::same_as<void>;
    };

namespace detail {

// The runtime-side half of a channel timer's send: without a goroutine,
// without waiting. A value left in the slot stays (a ticker's dropped
// tick); a waiting receiver gets the value and is readied.
template <class T, class S>
void timer_send(BasicChan<T, S>& c, T value) {
  using A = ChanAccess<T, S>;
  Sudog<typename S::G>* wake = nullptr;
  {
    std::lock_guard lk(*A::lock(&c));
    if (A::closed(&c)) return;  // the program closed it: nothing to send
    A::send_now(&c, value, wake);
  }
  if (wake != nullptr) S::ready(*wake);
}

// Drops a value waiting in the channel's buffer; whether there was one.
template <class T, class S>
bool timer_drain(BasicChan<T, S>& c) {
  using A = ChanAccess<T, S>;
  std::lock_guard lk(*A::lock(&c));
  return A::drop_buffered(&c);
}

}  // namespace detail

/// Go's time.Timer and time.Ticker (`period` nonzero): see the file's
/// comment. Made by the factories below; movable, not copyable. Every
/// member is for goroutines of the runtime that made it, except the
/// destructor (any thread; it stops the timer and waits for a firing under
/// way to finish).
template <TimerScheduler S>
class BasicTimer {
 public:
  using Clock = std::chrono::steady_clock;  ///< the timers' clock
  using Chan = BasicChan<Clock::time_point, S>;  ///< what a timer sends

  /// Go's time.NewTimer: sends the time on c() once, after d (at once if
  /// d <= 0, never if now + d is past the clock's end).
  static BasicTimer new_timer(std::chrono::nanoseconds d) {
    BasicTimer t(Kind::kSend);
    t.start(d, Clock::duration::zero());
    return t;
  }
  /// Go's time.After: new_timer(d); receive from c().
  static BasicTimer after(std::chrono::nanoseconds d) { return new_timer(d); }
  /// Go's time.AfterFunc: after d, runs fn in a goroutine of its own. c()
  /// is null (Go's nil channel).
  static BasicTimer after_func(std::chrono::nanoseconds d,
                               std::function<void()> fn) {
    if (!fn) throw UsageError("after_func called with an empty function");
    BasicTimer t(Kind::kFunc);
    t.st_->fn = std::move(fn);
    t.start(d, Clock::duration::zero());
    return t;
  }
  /// Go's time.NewTicker: sends the time on c() every d, dropping ticks a
  /// slow receiver has not taken. Panics ("non-positive interval for
  /// NewTicker") if d <= 0, as Go's does.
  static BasicTimer new_ticker(std::chrono::nanoseconds d) {
    if (d <= std::chrono::nanoseconds::zero()) {
      throw Panic("non-positive interval for NewTicker");
    }
    BasicTimer t(Kind::kSend);
    t.start(d, d);
    return t;
  }

  /// Takes over `o`'s timer; `o` is left empty (only destructible).
  BasicTimer(BasicTimer&& o) noexcept = default;
  /// Stops this timer, then takes over `o`'s.
  BasicTimer& operator=(BasicTimer&& o) noexcept {
    if (this != &o) {
      release();
      st_ = std::move(o.st_);
    }
    return *this;
  }
  BasicTimer(const BasicTimer&) = delete;
  BasicTimer& operator=(const BasicTimer&) = delete;
  /// Stops the timer and waits for a firing under way. Any thread.
  ~BasicTimer() { release(); }

  /// The channel the time arrives on (Go's t.C); null for after_func's.
  /// Receive from it only: Go's is receive-only, which C++ cannot say. If
  /// the program closes it anyway, the timer sends nothing more; a value
  /// the program sends into its slot makes the timer drop its own.
  Chan* c() const noexcept {
    return st_->kind == Kind::kSend ? &st_->c : nullptr;
  }

  /// Whether the timer waits in a runtime's heap or is firing: false once
  /// it has fired, was stopped, or its run ended before it was due. Any
  /// thread; a snapshot.
  bool pending() const noexcept {
    if (!st_) return false;  // moved from
    // acquire: pairs with the heap's release of owner and f's of firing.
    return st_->rt.owner.load(std::memory_order_acquire) != nullptr ||
           st_->rt.firing.load(std::memory_order_acquire) > 0;
  }

  /// Go's Timer.Stop / Ticker.Stop: the timer will not fire (again), and
  /// no value sent before is received. Whether this call prevented a value
  /// or a function (false: it had fired and been received, or was stopped).
  bool stop() {
    std::lock_guard lk(st_->mu);
    return stop_locked();
  }

  /// Go's Timer.Reset: stop(), then fire after d (at once if d <= 0), a
  /// ticker every d from now; returns what stop() would. A ticker's d <= 0
  /// panics ("non-positive interval for Ticker.Reset"), and a goroutine of
  /// another runtime gets a gmp::UsageError: both change nothing.
  bool reset(std::chrono::nanoseconds d) {
    check_runtime(S::current_g("Timer::reset"), "Timer::reset");
    std::lock_guard lk(st_->mu);
    // period is read under mu: a concurrent reset's arm() writes it.
    bool ticker = st_->rt.period != Clock::duration::zero();
    if (ticker && d <= std::chrono::nanoseconds::zero()) {
      throw Panic("non-positive interval for Ticker.Reset");
    }
    bool pending = stop_locked();
    arm(d, ticker ? Clock::duration(d) : Clock::duration::zero());
    return pending;
  }

 private:
  enum class Kind { kSend, kFunc };

  // Everything the runtime may touch stays at one address (the runtime
  // timer is in a heap by address): the Timer value only points to it.
  struct State final : ReceiveGuard<S> {
    State(Kind k, const void* rt_id)
        : kind(k), runtime(rt_id), c(k == Kind::kSend ? 1 : 0) {
      if (k == Kind::kSend) detail::ChanAccess<Clock::time_point, S>::bind(&c, this);
    }
    // A receive from c by a goroutine of another runtime is refused: the
    // firing, c's only sender, readies receivers on the Timer's scheduler.
    void before_receive(typename S::G g, const char* op) const override {
      if (S::runtime_of(g) == runtime) [[likely]] return;
      throw UsageError(std::string(op) +
                       ": this channel is a Timer's, and the Timer belongs "
                       "to another runtime. A Timer belongs to the runtime "
                       "that made it: its firing cannot wake a goroutine of "
                       "another runtime");
    }
    const Kind kind;
    const void* const runtime;  // the runtime that made it (an identity)
    RuntimeLock mu;   // the timer's lock: stop, reset and the firing's check
    RuntimeTimer rt;  // when, period, f, arg: set under mu before add_timer
    Chan c;           // kSend: one slot; kFunc: unused, no buffer
    std::function<void()> fn;  // kFunc: set before the first start
  };

  explicit BasicTimer(Kind k)
      : st_(std::make_unique<State>(k, S::runtime_of(S::current_g("time")))) {
    st_->rt.arg = st_.get();
    st_->rt.f = k == Kind::kSend ? &send_time : &go_func;
  }

  // A new timer's first arm, without mu: nobody else can reach the state
  // before add_timer publishes it, under its heap's lock.
  void start(std::chrono::nanoseconds d, Clock::duration period) {
    arm(d, period);
  }

  // A gmp::UsageError unless `g` is of the runtime that made the timer.
  void check_runtime(typename S::G g, const char* op) const {
    if (S::runtime_of(g) == st_->runtime) [[likely]] return;
    throw UsageError(std::string(op) +
                     ": this Timer belongs to another runtime. A Timer "
                     "belongs to the runtime that made it: its firing "
                     "cannot wake a goroutine of another runtime");
  }

  // mu held (or the timer is new: start): into the runtime's heap, due d
  // from now (never, if that is past the clock's end).
  void arm(std::chrono::nanoseconds d, Clock::duration period) {
    st_->rt.when = timer_when(Clock::now(), d);
    st_->rt.period = period;
    S::add_timer(st_->rt);
  }

  // mu held.
  bool stop_locked() {
    bool pending = S::del_timer(st_->rt);
    // After the removal (see timer.h): a firing taken before it sees a
    // stale seq.
    bump_seq();
    if (st_->rt.firing.load(std::memory_order_relaxed) > 0) pending = true;
    if (st_->kind == Kind::kSend && detail::timer_drain(st_->c)) {
      pending = true;
    }
    return pending;
  }

  // mu held: seq's only writers hold mu, so a load and a store increment
  // it without a locked instruction. relaxed: the heap's lock, taken by
  // del_timer before, orders it after any read of seq by a removal from
  // the heap; a firing reads it under mu.
  void bump_seq() noexcept {
    st_->rt.seq.store(st_->rt.seq.load(std::memory_order_relaxed) + 1,
                      std::memory_order_relaxed);
  }

  void release() noexcept {
    if (!st_) return;  // moved from
    // Stopped or fired already, nothing under way (acquire: pairs with the
    // heap's release of owner and f's release of firing): in no heap, no
    // firing can start, and nothing of ours is read any more.
    if (st_->rt.owner.load(std::memory_order_acquire) == nullptr &&
        st_->rt.firing.load(std::memory_order_acquire) == 0) {
      st_.reset();
      return;
    }
    {
      std::lock_guard lk(st_->mu);
      S::del_timer(st_->rt);
      bump_seq();
    }
    // A firing taken off the heap before the removal still reads the
    // state: wait until it has returned (it does not block).
    while (st_->rt.firing.load(std::memory_order_acquire) > 0) {
      std::this_thread::yield();
    }
    st_.reset();
  }

  // The runtime timer's functions (timer.h): on the runtime's thread.
  static void send_time(void* arg, std::uint64_t seq, Clock::time_point due) {
    auto* st = static_cast<State*>(arg);
    {
      std::lock_guard lk(st->mu);
      if (seq == st->rt.seq.load(std::memory_order_relaxed)) {
        detail::timer_send(st->c, due);  // Go sends the time it was due
      }
    }
    st->rt.firing.fetch_sub(1, std::memory_order_release);  // the last touch
  }
  static void go_func(void* arg, std::uint64_t seq, Clock::time_point) {
    auto* st = static_cast<State*>(arg);
    std::function<void()> fn;
    {
      std::lock_guard lk(st->mu);
      if (seq == st->rt.seq.load(std::memory_order_relaxed)) fn = st->fn;
    }
    st->rt.firing.fetch_sub(1, std::memory_order_release);  // the last touch
    if (fn) S::go_from_timer(std::move(fn));
  }

  std::unique_ptr<State> st_;
};

}  // namespace gmp
