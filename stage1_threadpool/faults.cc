// Stage 1's fault lookup: the worker thread's goroutine and its stack.
#include "stage1_threadpool/faults.h"

#include <pthread.h>

#include <cstdint>

#include "common/check.h"
#include "stage1_threadpool/tls.h"
#include "stage1_threadpool/worker.h"

namespace gmp::stage1 {
namespace {

// common/fault.h's FaultLookup for a worker: the goroutine it runs, if
// any. Reads the worker's own fields, written by this same thread.
bool lookup(FaultGoroutine* out) noexcept {
  const Worker* w = tls_worker;
  if (w == nullptr || w->goid == 0) return false;  // no goroutine runs here
  out->goid = w->goid;
  out->stack_lo = w->stack_lo;
  out->stack_hi = w->stack_hi;
  out->guard_size = w->guard_size;
  out->m = w->id;
  out->worker = true;
  return true;  // no stack_size_field: the thread's stack is the system's
}

// The calling thread's stack, [lo, hi), and the guard below it (glibc's
// pthread_getattr_np: for a thread it made, the guard lies below the stack
// it reports).
void stack_of_this_thread(Worker* w) {
  pthread_attr_t attr;
  GMP_CHECK(pthread_getattr_np(pthread_self(), &attr) == 0,
            "cannot read the worker thread's stack");
  void* addr = nullptr;
  std::size_t size = 0, guard = 0;
  pthread_attr_getstack(&attr, &addr, &size);
  pthread_attr_getguardsize(&attr, &guard);
  pthread_attr_destroy(&attr);
  w->stack_lo = reinterpret_cast<std::uintptr_t>(addr);
  w->stack_hi = w->stack_lo + size;
  w->guard_size = guard;
}

FaultLookup lookup_after_reading_stack(Worker* w) {
  stack_of_this_thread(w);
  return &lookup;
}

}  // namespace

WorkerFaultReports::WorkerFaultReports(Worker* w)
    : reports_(lookup_after_reading_stack(w)) {}

}  // namespace gmp::stage1
