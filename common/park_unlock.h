/// \file
/// ParkUnlock: what a parking goroutine's scheduler releases for it, once
/// the goroutine is recorded as waiting (scheduler.h, protocol step 2).
#pragma once

#include "common/runtime_lock.h"

namespace gmp {

/// What park releases once the goroutine is recorded as waiting (Go's
/// gopark takes an unlock function and its lock the same way): one
/// object's lock, a select's channel locks (select.h), or nothing (a
/// sleep). A plain value: a function and its argument.
struct ParkUnlock {
  void (*fn)(void*) = nullptr;  ///< called once, with arg; null: nothing
  void* arg = nullptr;          ///< fn's argument

  /// Releases `lock` (held by the caller).
  static ParkUnlock of(RuntimeLock* lock) noexcept {
    return {[](void* l) { static_cast<RuntimeLock*>(l)->unlock(); }, lock};
  }
  /// Does the release; the stage calls it once.
  void operator()() const noexcept {
    if (fn != nullptr) fn(arg);
  }
};

}  // namespace gmp
