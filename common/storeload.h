/// \file
/// storeload_fence: the full barrier of the "delicate dance" between a
/// goroutine submitter and a spinning M (stage 3 onward). Each side stores
/// (a queued goroutine / a decremented spinning count) and then loads what
/// the other side stored; without a StoreLoad barrier between the two, both
/// could read the old value and a goroutine would sit queued with no M.
#pragma once

#include <atomic>

namespace gmp {

/// A sequentially consistent StoreLoad barrier: every store before it is
/// visible to the other side before any load after it.
///
/// ThreadSanitizer does not model std::atomic_thread_fence (GCC warns so
/// under -fsanitize=thread, and CI makes warnings errors), so TSan builds
/// use the other textbook form:
/// both sides do a seq_cst read-modify-write on one shared word. The RMWs
/// are totally ordered, so whichever side comes second sees everything the
/// first side stored before its RMW. That costs a shared cache line, which
/// is why the normal build uses the fence (with GCC 12, one `lock or` of
/// zero to the stack on x86-64; one `dmb ish` on aarch64).
inline void storeload_fence() {
#if defined(__SANITIZE_THREAD__)
  static std::atomic<unsigned> word{0};
  word.fetch_add(0, std::memory_order_seq_cst);  // see above
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

}  // namespace gmp
