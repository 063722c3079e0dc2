// Stage 1's park and ready: a blocked goroutine blocks its worker thread.
#include "stage1_threadpool/sched.h"

#include <string>

#include "common/check.h"
#include "common/errors.h"
#include "stage1_threadpool/runtime.h"
#include "stage1_threadpool/tls.h"
#include "stage1_threadpool/worker.h"

namespace gmp::stage1 {

using Clock = std::chrono::steady_clock;

Sched::G Sched::current_g(const char* op) {
  Worker* w = tls_worker;
  if (w == nullptr || w->goid == 0) [[unlikely]] {
    throw UsageError(std::string(op) +
                     " called outside a goroutine: only goroutines of a "
                     "running stage1::Runtime may call it (start one with "
                     "Runtime::run(main) and call it from main or from a "
                     "goroutine started with go())");
  }
  return w;
}

std::uint64_t Sched::goid(G g) noexcept { return g->goid; }

std::optional<Sudog<Sched::G>>& Sched::sudog_slot(G g) noexcept {
  return g->sudog;
}

const void* Sched::runtime_of(G g) noexcept { return g->rt; }

bool Sched::park(Sudog<G>& s, ParkUnlock unlock, WaitReason why) {
  return s.g->rt->park(s.g, s, unlock, why, std::chrono::nanoseconds::max());
}

void Sched::ready(Sudog<G>& s) noexcept { s.g->rt->ready(s.g); }

// Protocol 3 of runtime.h. `unlock` releases the objects' locks (nothing
// for a sleep);
// `timeout` is max() for an untimed wait. Runs on w's own thread.
bool Runtime::park(Worker* w, Sudog<Worker*>& s, ParkUnlock unlock,
                   WaitReason why, std::chrono::nanoseconds timeout) {
  // Clear before anyone can claim s: a waker needs the object's lock (still
  // held) and the exit path needs w->parked (set below, under mu_).
  w->note.clear();
  {
    std::lock_guard rl(mu_);  // lock order: object lock, then mu_
    if (state_ == State::kExiting) {
      // main has returned: do not block at all. No waker can have claimed s
      // (its object's lock is still held), so cancel and unlink it here.
      GMP_CHECK(s.try_cancel(), "a sudog was claimed before it was parked");
      unlink_cancelled_locked(s);  // a select's other cases too
      unlock();
      return false;
    }
    w->parked = &s;
    w->wait_reason = why;
    w->wait_since = Clock::now();
    if (why != WaitReason::kSleep) {  // a sleeper wakes by itself
      ++nblocked_;
      checkdead();
    }
  }
  unlock();  // from here on, s may be claimed

  bool woken = true;
  if (timeout == std::chrono::nanoseconds::max()) {
    w->note.sleep();
  } else {
    woken = w->note.tsleep(timeout);
  }
  // Timed out: claim s for the timer. If the exit path claimed it first, its
  // wakeup is on the way and must be consumed before s goes out of scope.
  if (!woken && !s.try_claim()) w->note.sleep();

  std::lock_guard rl(mu_);
  w->parked = nullptr;
  w->wait_reason = WaitReason::kNone;
  return s.claimed();
}

// Go's goready for stage 1: the goroutine on w was claimed by the caller.
void Runtime::ready(Worker* w) noexcept {
  {
    std::lock_guard rl(mu_);
    GMP_CHECK(nblocked_ > 0, "ready of a goroutine that is not blocked");
    --nblocked_;
  }
  w->note.wakeup();
}

}  // namespace gmp::stage1
