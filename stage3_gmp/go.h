/// \file
/// Stage 3 as a goroutine sees it: go, yield, sleep_for, num_goroutine,
/// gomaxprocs, LockOSThread, and Go's objects (channels, Mutex, WaitGroup,
/// timers, contexts) for stage 3's goroutines. The scheduler behind them is
/// runtime.h's.
#pragma once

#include <chrono>
#include <cstdint>
#include <typeinfo>
#include <utility>

#include "common/chan.h"
#include "common/context.h"
#include "common/function_type.h"
#include "common/go_func.h"
#include "common/mutex.h"
#include "common/select.h"
#include "common/time.h"
#include "common/timer.h"
#include "common/wait_group.h"
#include "stage2_global_queue/g.h"
#include "stage3_gmp/sched.h"

namespace gmp::stage3 {

using stage2::G;

/// A Go channel whose blocked goroutines park; a readied one runs next on
/// the P that readied it.
template <class T>
using Chan = BasicChan<T, Sched>;
/// Go's sync.Mutex for stage 3 goroutines.
using Mutex = BasicMutex<Sched>;
/// Go's sync.WaitGroup for stage 3 goroutines.
using WaitGroup = BasicWaitGroup<Sched>;
/// Go's `select {}`: the calling goroutine waits forever (gmp::block).
/// select itself, and its cases, are gmp::select, gmp::recv_case,
/// gmp::send_case and gmp::default_case (common/select.h).
[[noreturn]] inline void block() { gmp::block<Sched>(); }

/// Go's time.Timer and time.Ticker (common/time.h): Timer::new_timer,
/// Timer::after, Timer::after_func and Timer::new_ticker are Go's
/// time.NewTimer, time.After, time.AfterFunc and time.NewTicker.
using Timer = BasicTimer<Sched>;
using Ticker = Timer;  ///< Go's time.Ticker: a Timer from new_ticker
/// Go's context.Context (common/context.h): Context::background(),
/// with_cancel, with_deadline, with_timeout.
using Context = BasicContext<Sched>;

/// The first and last frame of every goroutine (schedule.cc); internal.
void goroutine_entry(void* arg) noexcept;
/// A goroutine's life, up to the destruction of its function: called by
/// goroutine_entry, which then ends it (schedule.cc); internal.
void goroutine_body(G* gp) noexcept;

/// go(fn)'s work, once fn's type is known (gmp::function_type, for the
/// goroutine dumps and traces).
void go(GoFunc fn, const std::type_info* type);

/// Starts a new goroutine running `fn`, any callable with no arguments
/// (Go's `go fn()`): it goes to this P's runnext. Goroutine only; errors
/// as in stage 2.
template <class F>
void go(F&& fn) {
  const std::type_info* type = function_type(fn);
  go(GoFunc(std::forward<F>(fn)), type);  // move-only ones too
}

/// Lets another goroutine run: the caller goes to the tail of its P's run
/// queue (the notes' Gosched; Go's goyield). Goroutine only; throws
/// gmp::Goexit once main has returned.
void yield();

/// Go's runtime.NumGoroutine: how many goroutines of the caller's runtime
/// exist now (main included; queued, running and blocked ones; not the
/// dead). A snapshot. Goroutine only (gmp::UsageError otherwise).
int num_goroutine();

/// Parks the calling goroutine for at least `d` (Go's time.Sleep).
/// Goroutine only; throws gmp::Goexit if main returns meanwhile.
void sleep_for(std::chrono::nanoseconds d);

/// Go's runtime.GOMAXPROCS: returns the current number of Ps and, if `n`
/// is positive, changes it to n (stopping the world meanwhile), or to
/// kMaxProcs if n is larger, as Go caps it. n <= 0 only asks, as in Go.
/// Goroutine only; once main has returned, a change throws gmp::Goexit.
int gomaxprocs(int n = 0);

/// Go's runtime.LockOSThread: wires the calling goroutine to its M (its
/// OS thread) until as many unlock_os_thread calls: it runs on that thread
/// only, and the thread runs no other goroutine. When the goroutine waits,
/// its M hands its P to another M and sleeps until the goroutine is ready
/// again. A goroutine that ends while wired takes its thread with it: the
/// thread exits (Go 1.10+). Goroutine only (gmp::UsageError otherwise).
void lock_os_thread();

/// Go's runtime.UnlockOSThread: undoes one lock_os_thread call; the
/// goroutine is free to move again once every call is undone. Without a
/// lock_os_thread to undo it does nothing, as in Go. Goroutine only.
void unlock_os_thread();

/// How many lock_os_thread calls of the caller are not undone yet (the
/// first value of Go's LockOSCounts, which Go's own tests read through
/// export_test.go). Goroutine only.
std::uint32_t lock_os_count();

}  // namespace gmp::stage3
