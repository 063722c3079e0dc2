// Exercise 19, reference solution: Go's procresize and p.destroy
// (runtime/proc.go, Go 1.19), without the memory allocator's and the
// garbage collector's parts.
#include "exercises/19_procresize/procresize.h"

#include <stdexcept>
#include <utility>

namespace gmp::exercises::resize {
namespace {

// Go's p.destroy: nothing of a removed P's work is lost.
void destroy(Sched& sched, P& pp, P& mine) {
  // From the tail, each to the global queue's head: the queue keeps its
  // order, ahead of what the global queue held (these were runnable
  // already), and runnext, put last, runs first.
  while (!pp.runq.empty()) {
    sched.globrunqputhead(pp.runq.back());
    pp.runq.pop_back();
  }
  if (pp.runnext != nullptr) {
    sched.globrunqputhead(pp.runnext);
    pp.runnext = nullptr;
  }
  // Go's moveTimers: to the P of the M that resizes.
  mine.timers.insert(mine.timers.end(), pp.timers.begin(), pp.timers.end());
  pp.timers.clear();
  // Go's gfpurge.
  sched.gfree.insert(sched.gfree.end(), pp.gfree.begin(), pp.gfree.end());
  pp.gfree.clear();
  pp.status = PStatus::kDead;
}

bool runqempty(const P& pp) { return pp.runq.empty() && pp.runnext == nullptr; }

}  // namespace

std::vector<P*> procresize(Sched& sched, M& self, int nprocs) {
  if (nprocs <= 0) throw std::invalid_argument("procresize: invalid arg");
  const int old = sched.gomaxprocs;
  while (static_cast<int>(sched.allp.size()) < nprocs) {  // new Ps, idle
    sched.allp.push_back(std::make_unique<P>());
    sched.allp.back()->id = static_cast<int>(sched.allp.size()) - 1;
  }
  // The caller's P: kept if it stays, else P 0 (Go's acquirep(allp[0])).
  if (self.p != nullptr && self.p->id < nprocs) {
    self.p->status = PStatus::kRunning;
  } else {
    if (self.p != nullptr) self.p->m = nullptr;
    self.p = sched.allp[0].get();
    self.p->m = &self;
    self.p->status = PStatus::kRunning;
  }
  for (int i = nprocs; i < old; ++i) destroy(sched, *sched.allp[i], *self.p);
  for (int i = nprocs; i < old; ++i) {  // Go trims allp, keeps the Ps
    sched.retired.push_back(std::move(sched.allp[i]));
  }
  sched.allp.resize(static_cast<std::size_t>(nprocs));
  // Every other P idles, or gets an M for its work; built from the last
  // P down, so the list comes out lowest id first (Go's runnablePs).
  std::vector<P*> runnable;
  for (int i = nprocs - 1; i >= 0; --i) {
    P* pp = sched.allp[i].get();
    if (pp == self.p) continue;
    pp->status = PStatus::kIdle;
    if (runqempty(*pp)) {
      sched.pidleput(pp);
    } else {
      pp->m = sched.mget();
      runnable.insert(runnable.begin(), pp);
    }
  }
  sched.gomaxprocs = nprocs;
  return runnable;
}

}  // namespace gmp::exercises::resize
