// Stage 2's goroutines and Ms (Go 1.0's proc.c, with Go's names):
// newproc and malg, ready, the idle Ms (mput, mget), newm and
// newosproc.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <system_error>
#include <memory>
#include <utility>
#include "common/errors.h"
#include "stage2_global_queue/runtime.h"
#include "stage2_global_queue/switch.h"
#include "stage2_global_queue/tls.h"
#include "stage2_global_queue/trace_points.h"

namespace gmp::stage2 {

using Clock = std::chrono::steady_clock;

G* Runtime::newproc(GoFunc fn, M* m,
                     const std::type_info* type) {
  const bool is_main = m == nullptr;
  std::unique_lock lk(sched_);
  if (main_done_ && !is_main) return nullptr;  // too late: it would never run
  G* gp = gfget();
  if (gp == nullptr) {
    lk.unlock();
    gp = malg();  // may throw: nothing has changed yet
    lk.lock();
    if (main_done_ && !is_main) {
      gfput(gp);
      return nullptr;
    }
  }
  gp->fn = std::move(fn);
  context_init(&gp->ctx, gp->stack.lo, gp->stack.size, &goroutine_entry, gp);
  create_fiber(gp);
  gp->goid.store(++goidgen_, std::memory_order_relaxed);
  gp->started = false;
  // The parent: none for main, nor for a timer's goroutine (made on g0).
  G* parent = is_main ? nullptr : m->curg;
  note_go_create(
      gp, parent != nullptr ? parent->goid.load(std::memory_order_relaxed) : 0,
      type);
  if (trace::Buffer* t = is_main ? trace_.run_buffer() : m->trace) [[unlikely]] {
    trace_go_create(t, gp, trace::kNoP);
  }
  casgstatus(gp, GStatus::kDead, GStatus::kRunnable);
  ++live_;
  stats_.max_live = std::max(stats_.max_live, live_);
  ++stats_.goroutines_created;
  globrunqput(gp);
  wake_idle_m();
  return gp;
}

// Go's malg: a new G with a new stack, dead, in allgs_. sched_ not held.
G* Runtime::malg() {
  auto g = std::make_unique<G>();
  g->runtime = this;
  g->stack = stacks_.alloc();  // may throw: nothing has changed yet
  g->atomicstatus.store(GStatus::kDead, std::memory_order_relaxed);  // Go:
  // _Gidle, then _Gdead at once; published with allgs_ by the lock below
  G* gp = g.get();
  std::lock_guard lk(sched_);
  try {
    allgs_.push_back(std::move(g));
  } catch (...) {  // out of memory: give the stack back, change nothing
    stacks_.free(gp->stack);
    throw;
  }
  return gp;
}

//! [ready]

// Go's goready, sched_ held: waiting -> runnable, at the GRQ's tail; an
// idle M is woken to run it unless `wake` is false (the caller's M will).
void Runtime::ready(G* gp, bool wake) {
  WaitReason why = gp->waitreason.load(std::memory_order_relaxed);
  if (why != WaitReason::kSleep) --nblocked_;
  casgstatus(gp, GStatus::kWaiting, GStatus::kRunnable);
  gp->waiting = nullptr;
  gp->waitreason.store(WaitReason::kNone, std::memory_order_relaxed);
  globrunqput(gp);
  if (wake) wake_idle_m();
}
//! [ready]

void Runtime::mput(M* m) {  // sched_ held: m goes idle
  m->idle = true;
  m->schedlink = midle_;
  midle_ = m;
  ++nmidle_;
}

M* Runtime::mget() {  // sched_ held: an idle M, off the list, or null
  M* m = midle_;
  if (m != nullptr) mremove(m);
  return m;
}

void Runtime::mremove(M* m) {  // sched_ held: m is idle
  M** link = &midle_;
  while (*link != m) link = &(*link)->schedlink;
  *link = m->schedlink;
  m->schedlink = nullptr;
  m->idle = false;
  --nmidle_;
}

// Wakes an idle M, if a place is free, to run what was just queued; with
// no idle M, a place is free only because Ms wait for their locked
// goroutines or have ended with them: a new M takes it. sched_ held.
void Runtime::wake_idle_m() {
  if (mcount_ - nmidle_ - nmidlelocked_ >= config_.procs) return;  // taken
  if (M* m = mget()) {
    m->park.wakeup();
  } else {
    newm();
  }
}

void Runtime::newm() {
  if (stopping_) return;
  ms_.push_back(std::make_unique<M>(this, static_cast<int>(ms_.size())));
  M* m = ms_.back().get();
  ++mcount_;
  ++stats_.threads_created;
  if (M* self = getm(); self != nullptr && self->locked_ext != 0) {
    template_thread_.run([this, m] {  // not cloned from a locked thread
      std::lock_guard lk(sched_);
      newosproc(m);
    });
  } else {
    newosproc(m);
  }
}

void Runtime::newosproc(M* m) {
  try {
    m->thread = std::thread(&Runtime::mstart, this, m);
  } catch (const std::system_error& e) {
    fatal(std::string("newm: cannot create M thread ") +
          std::to_string(m->id) + ": " + e.what() +
          " (raise ulimit -u or kernel.threads-max)");
  }
}

}  // namespace gmp::stage2
