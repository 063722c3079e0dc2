/// \file
/// Goroutine stacks: mmap'ed, with a guard region below each, pooled.
///
/// ```unparsed
/// A goroutine's stack is fixed-size (Go grows its stacks by copying them;
/// C++ frames cannot be moved, so the course cannot). Below each stack lies
/// a guard region that faults when touched, so that an overflow ends with
/// "goroutine N stack overflow" (signals.h) instead of silently overwriting
/// whatever lies below.
///
/// The guard and vm.max_map_count
/// ------------------------------
/// The classic guard page is mprotect(PROT_NONE). It splits the mapping:
/// every stack then costs two kernel memory mappings (VMAs), and a process
/// may have vm.max_map_count of them (65530 by default), so about 32,000
/// goroutines at most. Linux 6.13 added "guard regions"
/// (madvise(MADV_GUARD_INSTALL)): they fault the same way but live in the
/// page tables, not in the VMA tree. So the pool maps stacks in slabs of
/// kStacksPerSlab and installs guard regions where the kernel has them
/// (one VMA per slab: 100,000 stacks take ~1,600 mappings), and falls back
/// to mprotect elsewhere, reporting the limit clearly when it is reached.
/// ```
#pragma once

#include <cstddef>
#include <vector>

#include "common/runtime_lock.h"

namespace gmp::stage2 {

/// One goroutine stack: usable bytes [lo, lo + size); the guard lies in
/// [lo - guard, lo).
struct Stack {
  void* lo = nullptr;    ///< lowest usable byte (the guard is below)
  std::size_t size = 0;  ///< usable bytes, from lo up
};

/// A pool of equally sized stacks. Thread-safe (its own lock).
class StackPool {
 public:
  /// Stacks per mmap (a slab): arbitrary; big enough to make mappings
  /// rare, small enough not to waste much address space.
  static constexpr std::size_t kStacksPerSlab = 64;

  /// Bytes of the guard below each stack: 64 KiB, not one page, because a
  /// function with a large frame moves the stack pointer by more than a
  /// page at once. GCC's -fstack-clash-protection (in .bazelrc) then probes
  /// the frame's pages, every 4 KiB on x86-64 but every 64 KiB on aarch64
  /// (the guard size that ABI assumes), so the first probe below the stack
  /// always lands in the guard. Costs address space only.
  static constexpr std::size_t kGuardSize = 64 * 1024;

  /// A pool of stacks of `stack_size` usable bytes (a multiple of the page
  /// size) with a guard of kGuardSize below each.
  explicit StackPool(std::size_t stack_size);
  /// Unmaps every slab: every stack must have been freed (fatal error if
  /// not, since a goroutine could still be running on it).
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  /// A free stack, mapping a new slab if none is left. Throws
  /// std::system_error when the kernel refuses memory or mappings; the
  /// message names the limit reached (vm.max_map_count, or memory).
  Stack alloc();

  /// Returns `s` to the pool for reuse (its memory stays mapped).
  void free(Stack s) noexcept;

  /// `n` free stacks into `out` under one acquisition of the pool's lock,
  /// mapping slabs as needed: for a caller that keeps a cache of its own.
  /// `out[n - 1]` is the most recently freed (its pages are the likeliest
  /// to be in memory), as alloc() would have handed them out. Throws as
  /// alloc() does; then `out` holds nothing.
  void alloc(Stack* out, std::size_t n);
  /// Returns `n` stacks to the pool under one acquisition of its lock;
  /// `in[n - 1]` is the first that alloc() hands out again.
  void free(const Stack* in, std::size_t n) noexcept;

  /// Usable bytes of each stack.
  std::size_t stack_size() const noexcept { return stack_size_; }
  /// Stacks mapped so far (free or in use).
  std::size_t stacks_mapped() const;
  /// Whether guards are guard regions (MADV_GUARD_INSTALL: no mapping of
  /// their own) rather than mprotect'ed pages (two mappings per stack).
  /// False until the first slab has been mapped, and before Linux 6.13.
  static bool guard_regions_supported() noexcept;

  /// Whether a new slab's stacks come with their top page already in
  /// memory (MADV_POPULATE_WRITE, Linux 5.14; one call per slab from
  /// 6.14), the page a goroutine writes first: one system call instead of
  /// a page fault per stack. True until a slab finds the kernel without it,
  /// or finds that it did nothing (qemu-user ignores the advice).
  static bool populates_tops() noexcept;
  /// From now on, guards are mprotect'ed pages even where guard regions
  /// exist: what older kernels do (tests and demos use it to show the
  /// difference). Process-wide; call before any stack is allocated.
  static void use_mprotect_guards() noexcept;

 private:
  void map_slab();  // lock_ held

  const std::size_t stack_size_;  // immutable

  mutable RuntimeLock lock_;       // guards the fields below
  std::vector<void*> slabs_;       // base address of every slab
  std::vector<void*> free_;        // lo of every free stack
};

}  // namespace gmp::stage2
