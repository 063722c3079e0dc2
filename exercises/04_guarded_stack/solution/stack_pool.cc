// Exercise 04, reference solution: guarded stacks from mmap, a bounded
// cache of released ones (Go's stackalloc/stackfree and gfget/gfput).
#include "exercises/04_guarded_stack/stack_pool.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <system_error>

namespace gmp::exercises::stack {

StackPool::StackPool(std::size_t stack_size, std::size_t max_stacks) {
  if (stack_size == 0) {
    throw std::invalid_argument("StackPool: stack_size is 0; a stack needs "
                                "at least one usable byte");
  }
  if (max_stacks == 0) {
    throw std::invalid_argument("StackPool: max_stacks is 0; the pool could "
                                "never hand out a stack");
  }
  const std::size_t page = page_size();
  if (stack_size > SIZE_MAX - 2 * page) {  // rounding and the guard overflow
    throw std::invalid_argument("StackPool: stack_size " +
                                std::to_string(stack_size) + " is too large");
  }
  stack_size_ = (stack_size + page - 1) / page * page;
  max_stacks_ = max_stacks;
  // So that release never allocates: it cannot fail after taking s out of
  // live_.
  cache_.reserve(kMaxCached);
}

void* StackPool::map_stack() {
  const std::size_t page = page_size();
  const std::size_t bytes = page + stack_size_;
  // MAP_NORESERVE: pages cost memory only once touched, as with thread
  // stacks; MAP_STACK: a hint that this is a stack.
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                    -1, 0);
  if (base == MAP_FAILED) {
    throw std::system_error(errno, std::generic_category(),
                            "StackPool::allocate: mmap of a stack of " +
                                std::to_string(stack_size_) +
                                " bytes and its guard page");
  }
  // The guard: the lowest page, where an overflowing stack arrives first.
  if (mprotect(base, page, PROT_NONE) != 0) {
    int err = errno;
    munmap(base, bytes);  // nothing of it was handed out
    throw std::system_error(err, std::generic_category(),
                            "StackPool::allocate: mprotect of a guard page");
  }
  return static_cast<char*>(base) + page;
}

Stack StackPool::allocate() {
  // The whole of it under mu_, mmap included: simple, and a miss in the
  // cache is rare once the pool is warm (Go's stackalloc, too, goes to
  // the OS only when its caches are empty).
  std::lock_guard lk(mu_);
  if (live_.size() >= max_stacks_) {  // checked first: nothing to undo
    throw StackExhausted(max_stacks_, stack_size_);
  }
  void* lo;
  if (!cache_.empty()) {  // gfget: a dead goroutine's stack, reused
    lo = cache_.back();
    cache_.pop_back();
  } else {
    lo = map_stack();  // throws with nothing changed
  }
  live_.insert(lo);
  return Stack{lo, static_cast<char*>(lo) + stack_size_};
}

void StackPool::release(Stack s) {
  std::lock_guard lk(mu_);
  auto it = live_.find(s.lo);
  if (it == live_.end() || s.hi != static_cast<char*>(s.lo) + stack_size_) {
    char where[64];
    std::snprintf(where, sizeof where, "[%p, %p)", s.lo, s.hi);
    throw std::invalid_argument(
        std::string("StackPool::release: ") + where +
        " is not a live stack of this pool (released twice, never "
        "allocated here, or changed since allocate returned it)");
  }
  live_.erase(it);
  if (cache_.size() < kMaxCached) {  // gfput: keep it for the next one
    cache_.push_back(s.lo);          // never allocates (constructor)
    return;
  }
  unmap(s.lo);
}

std::size_t StackPool::live() const {
  std::lock_guard lk(mu_);
  return live_.size();
}

std::size_t StackPool::cached() const {
  std::lock_guard lk(mu_);
  return cache_.size();
}

}  // namespace gmp::exercises::stack
