// Stage 3's free lists of dead Gs: Go's gfget and gfput (proc.go). A P
// keeps its own list (no lock); a full one spills a batch to the global
// list under gfree_lock_, and an empty one refills from it. Lab "gfree"
// (labs/gfree) replaces this file.
#include <mutex>

#include "stage3_gmp/runtime.h"

namespace gmp::stage3 {
namespace {
constexpr int kGFreeMax = 64;   // Go's gfput: spill a P's cache at 64 ...
constexpr int kGFreeKeep = 32;  // ... while it has 32 (to 31); gfget refills to 32
}  // namespace

G* Runtime::gfget(P* pp) {
  if (pp->gfree == nullptr &&
      ngfree_.load(std::memory_order_relaxed) > 0) {  // a peek: rechecked
    std::lock_guard lk(gfree_lock_);
    while (pp->gfreecnt.load(std::memory_order_relaxed) < kGFreeKeep &&
           gfree_ != nullptr) {
      G* gp = gfree_;
      gfree_ = gp->schedlink;
      ngfree_.fetch_sub(1, std::memory_order_relaxed);
      gp->schedlink = pp->gfree;
      pp->gfree = gp;
      pp->gfreecnt.fetch_add(1, std::memory_order_relaxed);
    }
  }
  G* gp = pp->gfree;
  if (gp == nullptr) return nullptr;
  pp->gfree = gp->schedlink;
  pp->gfreecnt.fetch_sub(1, std::memory_order_relaxed);
  return gp;
}

void Runtime::gfput(P* pp, G* gp) {
  gp->schedlink = pp->gfree;
  pp->gfree = gp;
  if (pp->gfreecnt.fetch_add(1, std::memory_order_relaxed) + 1 < kGFreeMax) {
    return;
  }
  std::lock_guard lk(gfree_lock_);
  while (pp->gfreecnt.load(std::memory_order_relaxed) >= kGFreeKeep) {
    G* g = pp->gfree;
    pp->gfree = g->schedlink;
    pp->gfreecnt.fetch_sub(1, std::memory_order_relaxed);
    g->schedlink = gfree_;
    gfree_ = g;
    ngfree_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace gmp::stage3
