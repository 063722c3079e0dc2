// Exercise 04: a guarded stack allocator with a cache of released stacks
// (Go's stackalloc and stackfree, and the free G list that keeps dead
// goroutines' stacks for the next `go` statement).
//
// Given: the interface, the fields, StackExhausted, the destructor and the
// small helpers below. Write the constructor, allocate, release, live,
// cached and map_stack in stack_pool.cc. See README.md.
//
// One stack is one mapping of its own: a guard page, then the usable
// bytes.
//
//   lo - page_size()   lo                                  hi
//   +------------------+-----------------------------------+
//   | guard page       | usable: stack_size() bytes        |
//   | PROT_NONE        | PROT_READ | PROT_WRITE            |
//   +------------------+-----------------------------------+
//   ^ the mapping starts here (what munmap takes)          ^ and ends here
//
// A stack grows down from hi. A function that runs past lo touches the
// guard page and dies with SIGSEGV at once, instead of silently
// overwriting whatever lies below (another goroutine's stack, the heap).
//
// The life of a stack:
//
//                allocate (map_stack)            release
//   not mapped ---------------------> live -----------------> cached
//        ^                             | ^                       |
//        |   release, cache full       | +------- allocate ------+
//        +-----------------------------+
//
// (and the destructor unmaps every stack, live or cached).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

namespace gmp::exercises::stack {

/// One stack: the usable bytes are [lo, hi); the guard page is
/// [lo - page_size(), lo).
struct Stack {
  void* lo = nullptr;  ///< lowest usable byte; page-aligned
  void* hi = nullptr;  ///< one past the highest usable byte
};

/// Thrown by StackPool::allocate when max_stacks stacks are live. Given.
class StackExhausted : public std::runtime_error {
 public:
  /// The message says how many stacks of what size are in use, and what
  /// to do about it.
  StackExhausted(std::size_t max_stacks, std::size_t stack_size)
      : std::runtime_error(
            "StackPool::allocate: all " + std::to_string(max_stacks) +
            " stacks (max_stacks) of " + std::to_string(stack_size) +
            " bytes are live; release one first, or make a pool with a "
            "larger max_stacks") {}
};

/// Stacks of one size, each with a guard page, at most max_stacks live at
/// once; released stacks are kept (up to kMaxCached) for the next
/// allocate. Thread-safe: any thread may call any member function, except
/// the destructor, which must run alone.
class StackPool {
 public:
  /// Released stacks kept mapped for reuse; more are unmapped. Arbitrary,
  /// in the spirit of Go's per-P free G list (gfput keeps up to 64 dead
  /// Gs, with their stacks, before moving half to the global list).
  static constexpr std::size_t kMaxCached = 32;

  /// A pool of stacks of `stack_size` usable bytes, rounded up to whole
  /// pages, of which at most `max_stacks` may be live at once. Maps
  /// nothing yet. Throws std::invalid_argument if stack_size is 0 (the
  /// message contains "stack_size") or max_stacks is 0 (the message
  /// contains "max_stacks").
  StackPool(std::size_t stack_size, std::size_t max_stacks);

  /// Given: unmaps every stack, cached or live: the pool owns them all
  /// (nothing may run on a live stack any more). Not thread-safe.
  ~StackPool() {
    for (void* lo : cache_) unmap(lo);
    for (void* lo : live_) unmap(lo);
  }
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  /// Go's stackalloc (and gfget's reuse of a dead G's stack): a stack,
  /// now live: a cached one if there is one, else a new mapping with its
  /// guard page (map_stack). Its contents are unspecified. Throws
  /// StackExhausted if max_stacks stacks are live already, and
  /// std::system_error if the kernel refuses the mapping or the guard;
  /// either way the pool is unchanged (a later allocate can succeed).
  Stack allocate();

  /// Go's stackfree (and gfput): `s`, which allocate returned and which
  /// is live, is live no more; it is cached for reuse, or unmapped if the
  /// cache holds kMaxCached stacks already. Throws std::invalid_argument,
  /// changing nothing, if `s` is not a live stack of this pool exactly as
  /// allocate returned it (released twice, or never allocated here).
  void release(Stack s);

  /// Stacks allocated and not yet released. A snapshot.
  std::size_t live() const;

  /// Stacks released and kept for reuse (at most kMaxCached). A snapshot.
  std::size_t cached() const;

  /// Given: usable bytes of each stack (the rounded size).
  std::size_t stack_size() const { return stack_size_; }

  /// Given: the system's page size.
  static std::size_t page_size() {
    return static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  }

 private:
  /// Maps one new stack (a mapping of a guard page and stack_size_ usable
  /// bytes, the guard made PROT_NONE) and returns its lo. Throws
  /// std::system_error, leaving nothing mapped, if mmap or mprotect
  /// fails. Reads only stack_size_: needs no lock (allocate may hold mu_).
  void* map_stack();

  /// Given: unmaps the stack whose usable bytes start at `lo`, guard
  /// included.
  void unmap(void* lo) const {
    munmap(static_cast<char*>(lo) - page_size(), page_size() + stack_size_);
  }

  // Set by the constructor, read-only afterwards (no lock needed).
  std::size_t stack_size_ = 0;  // usable bytes per stack, a page multiple
  std::size_t max_stacks_ = 0;  // at most this many live at once

  mutable std::mutex mu_;  // guards the fields below
  // lo of each cached stack (released, still mapped), at most kMaxCached.
  std::vector<void*> cache_;
  // lo of each live stack (allocated, not yet released).
  std::unordered_set<void*> live_;
};

}  // namespace gmp::exercises::stack
