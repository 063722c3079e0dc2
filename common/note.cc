#include "common/note.h"

#include "common/check.h"

namespace gmp {

void Note::clear() noexcept {
  std::lock_guard lk(mu_);
  woken_ = false;
}

void Note::wakeup() noexcept {
  std::lock_guard lk(mu_);
  GMP_CHECK(!woken_, "notewakeup - double wakeup");
  woken_ = true;
  // Notify with mu_ held: once the sleeper can see woken_ it may return and
  // destroy the note, so the note must not be touched after unlocking.
  cv_.notify_one();
}

void Note::sleep() noexcept {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [this] { return woken_; });
}

bool Note::tsleep(std::chrono::nanoseconds timeout) noexcept {
  using Clock = std::chrono::steady_clock;
  auto now = Clock::now();
  if (timeout >= Clock::time_point::max() - now) {  // now + timeout overflows:
    sleep();                                        // it never times out
    return true;
  }
  std::unique_lock lk(mu_);
  return cv_.wait_until(lk, now + timeout, [this] { return woken_; });
}

}  // namespace gmp
