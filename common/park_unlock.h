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
  /// Called once, with arg; null: arg is a RuntimeLock to unlock (or null:
  /// nothing), the common case, unlocked without an indirect call.
  void (*fn)(void*) = nullptr;
  void* arg = nullptr;  ///< fn's argument, or the lock

  /// Releases `lock` (held by the caller).
  static ParkUnlock of(RuntimeLock* lock) noexcept { return {nullptr, lock}; }
  /// Does the release; the stage calls it once.
  void operator()() const noexcept {
    if (fn != nullptr) {
      fn(arg);  // a select's channel locks
    } else if (arg != nullptr) {
      static_cast<RuntimeLock*>(arg)->unlock();
    }
  }
};

}  // namespace gmp
