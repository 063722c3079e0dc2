// gmp::exercises::Atomic<T>, Plain<T>, Mutex and CondVar in the memory-
// model check build (GMP_RELACY; included by exercises/testing/atomic.h,
// never directly).
//
// Atomic<T> has std::atomic<T>'s interface (its operations and their
// shorthand operators), and forwards each operation to Relacy's
// rl::atomic<T> with its memory order, and with the caller's file and
// line (a default argument, Here::current()), so that Relacy's report of
// a failed run names the student's line. Plain<T> is Relacy's rl::var<T>:
// a variable whose every access Relacy checks for a data race. Mutex and
// CondVar are Relacy's mutex and condition variable behind std::mutex's
// and std::condition_variable's interfaces. All four exist only inside a
// Relacy test (rl::simulate, through every_interleaving or
// every_schedule_preempted below), as members of its test suite.
#pragma once

#include <atomic>
#include <mutex>

// Relacy's main header also defines macros for a program written against
// it (memory_order_relaxed as "mo_relaxed, $", new, delete, malloc, assert,
// errno, ...): the exercises are written against the standard library, so
// they go, and the C library's assert and errno come back.
#include <cassert>
#include <cerrno>
#pragma push_macro("assert")
#pragma push_macro("errno")
#include <relacy/relacy.hpp>
#undef memory_order_relaxed
#undef memory_order_consume
#undef memory_order_acquire
#undef memory_order_release
#undef memory_order_acq_rel
#undef memory_order_seq_cst
#undef new
#undef delete
#undef malloc
#undef calloc
#undef realloc
#undef free
#undef assert
#undef errno
#pragma pop_macro("assert")
#pragma pop_macro("errno")

namespace gmp::exercises {

namespace relacy {

/// Relacy's name for a standard memory order.
inline rl::memory_order order(std::memory_order mo) {
  switch (mo) {
    case std::memory_order_relaxed: return rl::mo_relaxed;
    case std::memory_order_consume: return rl::mo_consume;
    case std::memory_order_acquire: return rl::mo_acquire;
    case std::memory_order_release: return rl::mo_release;
    case std::memory_order_acq_rel: return rl::mo_acq_rel;
    default: return rl::mo_seq_cst;
  }
}

/// A caller's place: Here::current() as a default argument is the place of
/// the call (the compilers' builtins, as std::source_location uses; that
/// one needs a builtin that clangd's clang 14 lacks).
struct Here {
  const char* file;      ///< the caller's file
  int line;              ///< its line
  const char* function;  ///< its function
  /// The place of the call that this default argument belongs to.
  static constexpr Here current(const char* file = __builtin_FILE(),
                                int line = __builtin_LINE(),
                                const char* function = __builtin_FUNCTION()) {
    return {file, line, function};
  }
};

/// The caller's place, as Relacy reports it.
inline rl::debug_info at(const Here& where) {
  return rl::debug_info(where.function, where.file, where.line);
}

}  // namespace relacy

/// std::atomic<T>'s interface over Relacy's simulated atomic.
template <class T>
class Atomic {
  using mo = std::memory_order;
  using Here = relacy::Here;
  static constexpr mo kSeqCst = std::memory_order_seq_cst;

 public:
  /// Value-initialised, as std::atomic<T>'s {} (relaxed: no thread sees
  /// the object before the test's threads start).
  Atomic(Here h = Here::current()) {
    a_.store(T{}, rl::mo_relaxed, relacy::at(h));
  }
  /// Initialised to `v`.
  Atomic(T v, Here h = Here::current()) {
    a_.store(v, rl::mo_relaxed, relacy::at(h));
  }
  Atomic(const Atomic&) = delete;
  Atomic& operator=(const Atomic&) = delete;

  /// std::atomic::load.
  T load(mo m = kSeqCst, Here h = Here::current()) const {
    return a_.load(relacy::order(m), relacy::at(h));
  }
  /// std::atomic::store.
  void store(T v, mo m = kSeqCst, Here h = Here::current()) {
    a_.store(v, relacy::order(m), relacy::at(h));
  }
  /// std::atomic::exchange.
  T exchange(T v, mo m = kSeqCst, Here h = Here::current()) {
    return a_.exchange(v, relacy::order(m), relacy::at(h));
  }
  /// std::atomic::compare_exchange_weak with one order.
  bool compare_exchange_weak(T& expected, T desired, mo m = kSeqCst,
                             Here h = Here::current()) {
    return cas(true, expected, desired, m, failure_order(m), h);
  }
  /// std::atomic::compare_exchange_weak with success and failure orders.
  bool compare_exchange_weak(T& expected, T desired, mo success, mo failure,
                             Here h = Here::current()) {
    return cas(true, expected, desired, success, failure, h);
  }
  /// std::atomic::compare_exchange_strong with one order.
  bool compare_exchange_strong(T& expected, T desired, mo m = kSeqCst,
                               Here h = Here::current()) {
    return cas(false, expected, desired, m, failure_order(m), h);
  }
  /// std::atomic::compare_exchange_strong with success and failure orders.
  bool compare_exchange_strong(T& expected, T desired, mo success, mo failure,
                               Here h = Here::current()) {
    return cas(false, expected, desired, success, failure, h);
  }
  /// std::atomic::fetch_add (integers).
  T fetch_add(T v, mo m = kSeqCst, Here h = Here::current()) {
    return a_.fetch_add(v, relacy::order(m), relacy::at(h));
  }
  /// std::atomic::fetch_sub (integers).
  T fetch_sub(T v, mo m = kSeqCst, Here h = Here::current()) {
    return a_.fetch_sub(v, relacy::order(m), relacy::at(h));
  }
  /// std::atomic::fetch_and (integers).
  T fetch_and(T v, mo m = kSeqCst, Here h = Here::current()) {
    return a_.fetch_and(v, relacy::order(m), relacy::at(h));
  }
  /// std::atomic::fetch_or (integers).
  T fetch_or(T v, mo m = kSeqCst, Here h = Here::current()) {
    return a_.fetch_or(v, relacy::order(m), relacy::at(h));
  }
  /// std::atomic::fetch_xor (integers).
  T fetch_xor(T v, mo m = kSeqCst, Here h = Here::current()) {
    return a_.fetch_xor(v, relacy::order(m), relacy::at(h));
  }
  /// std::atomic::is_lock_free: as the real atomic would say.
  bool is_lock_free() const { return std::atomic<T>{}.is_lock_free(); }

  // std::atomic's shorthand, each a seq_cst operation as there. (An
  // operator cannot take the caller's place: Relacy reports these at
  // this header's line; the function name shows which it was.)
  /// A seq_cst load.
  operator T() const { return load(); }
  /// A seq_cst store; returns the value stored.
  T operator=(T v) {
    store(v);
    return v;
  }
  /// Pre-increment: a seq_cst fetch_add, the new value.
  T operator++() { return fetch_add(1) + 1; }
  /// Post-increment: a seq_cst fetch_add, the old value.
  T operator++(int) { return fetch_add(1); }
  /// Pre-decrement: a seq_cst fetch_sub, the new value.
  T operator--() { return fetch_sub(1) - 1; }
  /// Post-decrement: a seq_cst fetch_sub, the old value.
  T operator--(int) { return fetch_sub(1); }
  /// A seq_cst fetch_add, the new value.
  T operator+=(T v) { return fetch_add(v) + v; }
  /// A seq_cst fetch_sub, the new value.
  T operator-=(T v) { return fetch_sub(v) - v; }

 private:
  // The failure order std::atomic derives from a single order: no release
  // part (a failed compare-and-swap stores nothing).
  static mo failure_order(mo m) {
    if (m == std::memory_order_acq_rel) return std::memory_order_acquire;
    if (m == std::memory_order_release) return std::memory_order_relaxed;
    return m;
  }
  // A compare-and-swap; a weak one may fail spuriously, as the standard
  // allows (Relacy makes it happen).
  bool cas(bool weak, T& expected, T desired, mo success, mo failure,
           Here h) {
    rl::debug_info at = relacy::at(h);
    if (weak) {
      return a_.compare_exchange_weak(expected, desired,
                                      relacy::order(success), at,
                                      relacy::order(failure), at);
    }
    return a_.compare_exchange_strong(expected, desired,
                                      relacy::order(success), at,
                                      relacy::order(failure), at);
  }

  mutable rl::atomic<T> a_;  // Relacy's: every access is a simulated one
};

/// A plain variable whose accesses Relacy checks for data races: reads and
/// writes as T's (reported at this header's line: an operator cannot take
/// the caller's place).
template <class T>
class Plain {
  using Here = relacy::Here;

 public:
  /// T{}.
  Plain(Here h = Here::current()) { v_(relacy::at(h)) = T{}; }
  /// A write.
  Plain& operator=(T v) {
    v_(relacy::at(Here::current())) = v;
    return *this;
  }
  /// A read.
  operator T() const { return v_(relacy::at(Here::current())); }

 private:
  mutable rl::var<T> v_;  // Relacy's: every access is checked
};

/// std::mutex's interface (lock, unlock; std::lock_guard and
/// std::unique_lock take it) over Relacy's simulated mutex.
class Mutex {
  using Here = relacy::Here;

 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;
  /// std::mutex::lock.
  void lock(Here h = Here::current()) { m_.lock(relacy::at(h)); }
  /// std::mutex::unlock.
  void unlock(Here h = Here::current()) { m_.unlock(relacy::at(h)); }
  /// Relacy's own, for CondVar.
  rl::mutex& simulated() { return m_; }

 private:
  rl::mutex m_;
};

/// std::condition_variable's interface (on std::unique_lock<Mutex>) over
/// Relacy's simulated one.
class CondVar {
  using Here = relacy::Here;

 public:
  /// std::condition_variable::notify_one.
  void notify_one(Here h = Here::current()) { cv_.notify_one(relacy::at(h)); }
  /// std::condition_variable::notify_all.
  void notify_all(Here h = Here::current()) { cv_.notify_all(relacy::at(h)); }
  /// std::condition_variable::wait with a predicate.
  /// (Relacy's own predicate wait does not compile: the loop is here.)
  template <class Pred>
  void wait(std::unique_lock<Mutex>& lock, Pred pred,
            Here h = Here::current()) {
    while (!pred()) cv_.wait(lock.mutex()->simulated(), relacy::at(h));
  }

 private:
  rl::condition_variable cv_;
};

namespace relacy {

/// Runs Relacy's test suite Suite over every interleaving of its threads'
/// operations (and every value each load may read in it); true if no run
/// failed. Relacy prints the history of the first that did.
template <class Suite>
bool every_interleaving() {
  rl::test_params p;
  p.search_type = rl::sched_full;
  return rl::simulate<Suite>(p);
}

/// The same over every schedule that preempts a thread at most
/// `preemptions` times: for suites too long to explore whole.
template <class Suite>
bool every_schedule_preempted(unsigned preemptions) {
  rl::test_params p;
  p.search_type = rl::sched_bound;
  p.context_bound = preemptions;
  return rl::simulate<Suite>(p);
}

}  // namespace relacy

}  // namespace gmp::exercises

// std::atomic_thread_fence, simulated: a fence is an order too, and a
// solution that puts its orders in fences (a relaxed load, then an acquire
// fence) must be checked with them, not without. The name is a macro in
// this build only, so `std::atomic_thread_fence(mo)` in an exercise's code
// calls Relacy's fence (from here on: the standard headers above have
// already used the real one). A relaxed fence does nothing, as in C++.
namespace std {
inline void gmp_relacy_atomic_thread_fence(
    memory_order mo, gmp::exercises::relacy::Here h =
                         gmp::exercises::relacy::Here::current()) {
  if (mo == memory_order_relaxed) return;
  rl::atomic_thread_fence(gmp::exercises::relacy::order(mo),
                          gmp::exercises::relacy::at(h));
}
}  // namespace std
#define atomic_thread_fence gmp_relacy_atomic_thread_fence
