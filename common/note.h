/// \file
/// Note: a one-shot sleep/wakeup event for OS threads, Go's `note`
/// (runtime/lock_futex.go: noteclear, notesleep, notetsleep, notewakeup).
///
/// ```unparsed
/// A thread that must block until another thread says "go on" sleeps on a
/// note; the other thread wakes it. The note remembers a wakeup that comes
/// before the sleep, so there is no lost-wakeup window. Go implements notes
/// with a futex; the course uses std::mutex + std::condition_variable, which
/// is what a futex-based note amounts to and is easier to read.
/// ```
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace gmp {

/// One-shot event: clear() it, then one thread sleeps and one thread wakes
/// it up, at most once per clear(). Thread-safe.
class Note {
 public:
  /// Re-arms the note. Only when nobody sleeps on it (Go's noteclear).
  void clear() noexcept;

  /// Wakes the sleeper, or lets the next sleep() return at once. Any thread;
  /// at most once per clear(), a second wakeup is a fatal error ("notewakeup
  /// - double wakeup", as in Go).
  void wakeup() noexcept;

  /// Blocks the calling thread until wakeup() (Go's notesleep).
  void sleep() noexcept;

  /// Like sleep() but gives up after `timeout`; returns whether it was woken
  /// (Go's notetsleep).
  bool tsleep(std::chrono::nanoseconds timeout) noexcept;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false;  // protected by mu_
};

}  // namespace gmp
