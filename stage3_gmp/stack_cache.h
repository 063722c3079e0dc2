/// \file
/// A P's cache of free goroutine stacks (Go's mcache.stackcache, with
/// stackcache_refill and stackcache_release, runtime/stack.go).
///
/// ```unparsed
/// Stage 2 takes every stack from one pool under one lock, at go(). From
/// stage 3 a goroutine gets its stack when it first runs, from the cache
/// of the P it runs on, and gives it back there the moment it dies; the
/// cache trades with the shared pool (stage2::StackPool) in batches of
/// half its size, so the pool's lock is taken once per kBatch stacks, and
/// a P that alternates between one goroutine dying and the next starting
/// reuses the same, already faulted-in stack without touching it at all.
///
///        P's cache (owner M only, no lock)        StackPool (its lock)
///     [ s0 s1 ... s15 ]  --- full: oldest 8 ---->  [ ... free stacks ]
///            ^   |       <-- empty: 8, newest last -
///      put   |   v get (newest first: last freed, still in memory)
/// ```
#pragma once

#include <cstddef>

#include "stage2_global_queue/stack.h"

namespace gmp::stage3 {

/// The free stacks of one P. Owned by the M holding the P (no lock, no
/// atomic: only that M calls get and put), or by whoever stopped the world
/// (flush).
class StackCache {
 public:
  /// Stacks it holds at most. Go caps its cache at 32 KiB per stack size
  /// and refills or releases half of that at once; the course's stacks all
  /// have one size, so the cap counts stacks.
  static constexpr std::size_t kMax = 16;
  /// Stacks moved per trade with the pool (Go: half the cap).
  static constexpr std::size_t kBatch = kMax / 2;
  /// Cache lines of the next stack's top that get() prefetches (256
  /// bytes), where a new goroutine's first frames go. Why, in
  /// docs/course/stage3.md ("Stacks only for goroutines that run").
  static constexpr int kPrefetchLines = 4;
  /// Bytes per cache line (x86-64 and the course's aarch64 targets).
  static constexpr std::size_t kCacheLine = 64;

  /// A free stack: the one put last, or, the cache being empty, one of
  /// kBatch taken from `pool` at once (Go's stackcache_refill). Throws as
  /// StackPool::alloc does; the cache is then unchanged.
  ///
  /// It also asks the CPU to fetch the top kPrefetchLines cache lines of
  /// the stack the next get() will hand out: the lines a new goroutine's
  /// first frames write. That stack was last used by a goroutine
  /// that died long ago, perhaps on the other CPU, so its lines and its
  /// page's address translation are in no cache of ours; fetched now,
  /// they arrive while this goroutine runs instead of stalling the next
  /// one's first instructions.
  stage2::Stack get(stage2::StackPool& pool) {
    if (n_ == 0) [[unlikely]] refill(pool);
    stage2::Stack s = stacks_[--n_];
    if (n_ > 0) {
      char* top = static_cast<char*>(stacks_[n_ - 1].lo) + stacks_[n_ - 1].size;
      for (int i = 1; i <= kPrefetchLines; ++i) {
        __builtin_prefetch(top - kCacheLine * i, /*write=*/1, /*keep=*/3);
      }
    }
    return s;
  }

  /// Keeps `s` for the next get; a full cache first gives its kBatch
  /// oldest stacks back to `pool` (Go's stackcache_release).
  void put(stage2::StackPool& pool, stage2::Stack s) noexcept {
    if (n_ == kMax) [[unlikely]] release(pool);
    stacks_[n_++] = s;
  }

  /// Gives every stack back to `pool` (a P removed by procresize, the
  /// runtime's end; Go's stackcache_clear).
  void flush(stage2::StackPool& pool) noexcept {
    pool.free(stacks_, n_);
    n_ = 0;
  }

  /// Stacks held now.
  std::size_t size() const noexcept { return n_; }

 private:
  // kBatch from the pool (out of line: get stays a load).
  [[gnu::noinline]] void refill(stage2::StackPool& pool) {
    pool.alloc(stacks_, kBatch);
    n_ = kBatch;
  }

  // The kBatch oldest back to the pool (out of line: put stays a store).
  [[gnu::noinline]] void release(stage2::StackPool& pool) noexcept {
    pool.free(stacks_, kBatch);
    for (std::size_t i = kBatch; i < kMax; ++i) stacks_[i - kBatch] = stacks_[i];
    n_ -= kBatch;
  }

  stage2::Stack stacks_[kMax];  // [0, n_): oldest first
  std::size_t n_ = 0;
};

}  // namespace gmp::stage3
