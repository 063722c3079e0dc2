// Exercise 04: write these functions (see stack_pool.h and README.md).
#include "exercises/04_guarded_stack/stack_pool.h"

#include "exercises/testing/skeleton.h"

namespace gmp::exercises::stack {

StackPool::StackPool(std::size_t stack_size, std::size_t max_stacks) {
  (void)stack_size;
  (void)max_stacks;
  not_written("StackPool::StackPool (exercises/04_guarded_stack/stack_pool.cc)");
}

Stack StackPool::allocate() {
  not_written("StackPool::allocate (exercises/04_guarded_stack/stack_pool.cc)");
}

void StackPool::release(Stack s) {
  (void)s;
  not_written("StackPool::release (exercises/04_guarded_stack/stack_pool.cc)");
}

std::size_t StackPool::live() const {
  not_written("StackPool::live (exercises/04_guarded_stack/stack_pool.cc)");
}

std::size_t StackPool::cached() const {
  not_written("StackPool::cached (exercises/04_guarded_stack/stack_pool.cc)");
}

void* StackPool::map_stack() {
  not_written("StackPool::map_stack (exercises/04_guarded_stack/stack_pool.cc)");
}

}  // namespace gmp::exercises::stack
