/// \file
/// Go's context package, written once for every stage: cancellation and
/// deadlines that reach every goroutine working for one request.
///
/// ```unparsed
/// A context is a node in a tree. background() is the root: never
/// cancelled, no deadline, done() null (a nil channel: never ready in a
/// select). with_cancel(parent) makes a child and the function that
/// cancels it; with_deadline and with_timeout also cancel it when the time
/// comes (a Timer::after_func, as Go's timerCtx). Cancelling a context
/// closes its done() channel, records why (err()), cancels every
/// descendant, removes it from its parent, and stops its timer. A child of
/// a context that is already cancelled is born cancelled, with the
/// parent's reason. Cancel is idempotent: only the first call counts.
///
/// Ownership (C++ has no garbage collector): contexts are shared_ptrs. A
/// child holds its parent; a parent knows its children weakly, so a child
/// the program drops before cancelling it simply leaves the tree.
/// ```
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/chan.h"
#include "common/runtime_lock.h"
#include "common/time.h"

namespace gmp {

/// Why a context is done (Go's ctx.Err()): not yet, context.Canceled, or
/// context.DeadlineExceeded.
enum class ContextErr { kNone, kCanceled, kDeadlineExceeded };

/// Go's error text: "", "context canceled", "context deadline exceeded".
constexpr std::string_view to_string(ContextErr e) noexcept {
  switch (e) {
    case ContextErr::kNone: return "";
    case ContextErr::kCanceled: return "context canceled";
    case ContextErr::kDeadlineExceeded: return "context deadline exceeded";
  }
  return "";
}

/// Go's context.Context for the goroutines of stage `S` (see the file's
/// comment). Made by background(), with_cancel, with_deadline and
/// with_timeout; shared (std::shared_ptr). done() and err() from any
/// goroutine; cancelling (CancelFunc, a deadline) closes a channel, so it
/// is for goroutines too (gmp::UsageError from a plain thread).
template <TimerScheduler S>
class BasicContext : public std::enable_shared_from_this<BasicContext<S>> {
 public:
  using Clock = std::chrono::steady_clock;          ///< deadlines' clock
  using Ptr = std::shared_ptr<BasicContext>;        ///< how contexts are held
  using DoneChan = BasicChan<std::monostate, S>;    ///< Go's <-chan struct{}
  using CancelFunc = std::function<void()>;         ///< Go's CancelFunc

  /// Go's context.Background(): the root, never cancelled.
  static Ptr background() {
    static const Ptr root(new BasicContext(nullptr, std::nullopt));
    return root;
  }

  /// Go's context.WithCancel: a child of `parent`, and the function that
  /// cancels it (with kCanceled) and its descendants. Call it when the
  /// work is done, as in Go, to release the child from its parent.
  static std::pair<Ptr, CancelFunc> with_cancel(const Ptr& parent) {
    Ptr c(new BasicContext(parent, parent->deadline_));
    c->attach();
    return {c, cancel_func(c)};
  }

  /// Go's context.WithDeadline: with_cancel, and cancelled with
  /// kDeadlineExceeded at `deadline` (at once if it has passed). A parent
  /// whose deadline is earlier keeps its own.
  static std::pair<Ptr, CancelFunc> with_deadline(const Ptr& parent,
                                                  Clock::time_point deadline) {
    if (parent->deadline_ && *parent->deadline_ <= deadline) {
      return with_cancel(parent);  // the parent's comes first
    }
    Ptr c(new BasicContext(parent, deadline));
    c->attach();
    auto d = deadline - Clock::now();
    if (d <= Clock::duration::zero()) {
      c->cancel(ContextErr::kDeadlineExceeded);
    } else {
      std::weak_ptr<BasicContext> weak = c;
      auto timer = BasicTimer<S>::after_func(
          std::chrono::duration_cast<std::chrono::nanoseconds>(d), [weak] {
            if (Ptr self = weak.lock()) {
              self->cancel(ContextErr::kDeadlineExceeded);
            }
          });
      std::lock_guard lk(c->mu_);
      if (c->err_ == ContextErr::kNone) c->timer_.emplace(std::move(timer));
    }
    return {c, cancel_func(c)};
  }

  /// Go's context.WithTimeout: with_deadline(parent, now + d).
  static std::pair<Ptr, CancelFunc> with_timeout(const Ptr& parent,
                                                 std::chrono::nanoseconds d) {
    return with_deadline(parent, Clock::now() + d);
  }

  BasicContext(const BasicContext&) = delete;
  BasicContext& operator=(const BasicContext&) = delete;
  /// Leaves its parent's list of children. Any thread.
  ~BasicContext() {
    if (parent_) parent_->remove_child(this);
  }

  /// Go's ctx.Done(): closed when the context is cancelled; null for
  /// background() (never ready in a select). Any thread.
  DoneChan* done() noexcept { return parent_ ? &done_ : nullptr; }

  /// Go's ctx.Err(): kNone until done() is closed, then why. Any thread.
  ContextErr err() const {
    std::lock_guard lk(mu_);
    return err_;
  }

  /// Go's ctx.Deadline(): when it will be cancelled by time, if ever.
  std::optional<Clock::time_point> deadline() const noexcept {
    return deadline_;
  }

 private:
  BasicContext(Ptr parent, std::optional<Clock::time_point> deadline)
      : parent_(std::move(parent)), deadline_(deadline) {}

  static CancelFunc cancel_func(const Ptr& c) {
    return [c] { c->cancel(ContextErr::kCanceled); };
  }

  // Joins the parent's children, or is born cancelled if the parent is.
  void attach() {
    ContextErr parent_err;
    {
      std::lock_guard lk(parent_->mu_);
      parent_err = parent_->err_;
      if (parent_err == ContextErr::kNone && parent_->parent_) {
        parent_->children_.push_back(this->weak_from_this());
      }
    }
    if (parent_err != ContextErr::kNone) cancel(parent_err);
  }

  // Go's cancelCtx.cancel: the first call records `why`, closes done_,
  // cancels the children, leaves the parent and stops the timer.
  void cancel(ContextErr why) {
    S::current_g("context cancel");  // a UsageError first, changing nothing
    std::vector<std::weak_ptr<BasicContext>> children;
    std::optional<BasicTimer<S>> timer;
    {
      std::lock_guard lk(mu_);
      if (err_ != ContextErr::kNone) return;  // cancelled already
      err_ = why;
      children.swap(children_);
      timer.swap(timer_);
    }
    done_.close();
    for (auto& w : children) {
      if (Ptr child = w.lock()) child->cancel(why);
    }
    if (parent_) parent_->remove_child(this);
    if (timer) timer->stop();  // its function may be what is running
  }

  void remove_child(const BasicContext* child) {
    std::lock_guard lk(mu_);
    std::erase_if(children_, [child](const std::weak_ptr<BasicContext>& w) {
      Ptr p = w.lock();
      return p == nullptr || p.get() == child;
    });
  }

  const Ptr parent_;  // null only for background(); immutable
  const std::optional<Clock::time_point> deadline_;  // immutable
  DoneChan done_;     // closed once, by the first cancel
  mutable RuntimeLock mu_;  // protects the three fields below
  ContextErr err_ = ContextErr::kNone;
  std::vector<std::weak_ptr<BasicContext>> children_;  // not cancelled yet
  std::optional<BasicTimer<S>> timer_;  // with_deadline's, until cancel
};

}  // namespace gmp
