// The exercises' atomic type, gmp::exercises::Atomic<T> (and the Mutex and
// CondVar of their provided code).
//
// In every normal build it is std::atomic<T>, nothing more. In the memory-
// model check build (GMP_RELACY defined: an exercise's relacy_test), it is
// an atomic of Relacy, a C++11 memory-model checker (Dmitry Vyukov's
// Relacy Race Detector, Debian's relacy-dev): the test runs its threads as
// fibers under Relacy's scheduler, and every load may return any value the
// C++ memory model allows it to, not only the one x86 would give. So a
// relaxed order where a release or an acquire is needed fails there on
// x86 too (docs/course/memory_order.md). The student writes the same code
// for both: the operations and the std::memory_order arguments of
// std::atomic, its shorthand operators, and std::atomic_thread_fence
// (which that build also simulates).
#pragma once

#if defined(GMP_RELACY)
#include "exercises/testing/relacy_atomic.h"
#else
#include <atomic>
#include <condition_variable>
#include <mutex>

namespace gmp::exercises {

/// std::mutex; Relacy's simulated mutex in the memory-model build (for an
/// exercise's provided code that locks, so that Relacy runs it too).
using Mutex = std::mutex;

/// std::condition_variable (waits on a std::unique_lock<Mutex>);
/// Relacy's in the memory-model build.
using CondVar = std::condition_variable;

/// std::atomic<T> (see the file comment).
template <class T>
using Atomic = std::atomic<T>;

/// A plain variable that a test shares between threads only through the
/// exercise's own orders (a goroutine's payload). Under Relacy a variable
/// it checks for data races; here T itself.
template <class T>
using Plain = T;

}  // namespace gmp::exercises
#endif
