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
/// child holds its parent; a parent knows its children weakly, through a
/// list linked through the children themselves, so that a child leaves it
/// in O(1) (Go's map of children), whether cancelled or simply dropped.
///
/// No step recurses, however deep the tree: a cancel walks the subtree
/// with a list of its own, and the last reference to the leaf of a chain
/// releases the chain's ancestors one after another (release_chain).
///
/// done() makes its channel on the first call, as Go's does: a context
/// cancelled before anyone asked hands out one shared closed channel
/// instead (Go's closedchan), and its cancel locks and closes none.
///
/// Cancel is all or nothing. It locks the context and every descendant not
/// yet cancelled (parent before child), then the done() channels they have
/// (by address, as select orders its locks), and checks that every goroutine
/// waiting on any of them belongs to the cancelling goroutine's runtime:
/// if one does not, it throws gmp::UsageError and nothing has changed.
/// Only then does it close the channels, record the reason and unlock.
///
/// A deadline outlives a run: the timer of a context made in one run of a
/// runtime dies with that run (time.h), so a goroutine that receives from
/// done(), or asks err(), while no timer is pending re-arms it in
/// its own runtime, or, if the deadline has passed, cancels the context
/// itself (keep_deadline).
///
/// Lock order: a context's lock before its descendants'; context locks
/// before any channel lock; channel locks by address.
/// ```
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/chan.h"
#include "common/errors.h"
#include "common/runtime_lock.h"
#include "common/time.h"
#include "common/timer.h"

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
/// thread; cancelling (CancelFunc, a deadline) closes channels, so it is
/// for goroutines (gmp::UsageError from a plain thread, or when a
/// goroutine of another runtime waits on done(): the context stays as it
/// was; a deadline says so on stderr instead, and is kept).
template <TimerScheduler S>
class BasicContext : public std::enable_shared_from_this<BasicContext<S>>,
                     private ReceiveGuard<S> {
  // The constructor's key: only this class can make one.
  struct Key {
    explicit Key() = default;
  };

 public:
  using Clock = std::chrono::steady_clock;          ///< deadlines' clock
  using Ptr = std::shared_ptr<BasicContext>;        ///< how contexts are held
  using DoneChan = BasicChan<std::monostate, S>;    ///< Go's <-chan struct{}
  using CancelFunc = std::function<void()>;         ///< Go's CancelFunc

  /// Go's context.Background(): the root, never cancelled.
  static Ptr background() {
    static const Ptr root =
        std::make_shared<BasicContext>(Key{}, nullptr, std::nullopt, nullptr);
    return root;
  }

  /// Go's context.WithCancel: a child of `parent`, and the function that
  /// cancels it (with kCanceled) and its descendants. Call it when the
  /// work is done, as in Go, to release the child from its parent.
  static std::pair<Ptr, CancelFunc> with_cancel(const Ptr& parent) {
    Ptr c = std::make_shared<BasicContext>(Key{}, parent, parent->deadline_,
                                           parent->deadline_owner_);
    c->attach();
    return {c, cancel_func(c)};
  }

  /// Go's context.WithDeadline: with_cancel, and cancelled with
  /// kDeadlineExceeded at `deadline` (at once if it has passed; never if
  /// it is time_point::max()). A parent whose deadline is earlier keeps
  /// its own.
  static std::pair<Ptr, CancelFunc> with_deadline(const Ptr& parent,
                                                  Clock::time_point deadline) {
    if (parent->deadline_ && *parent->deadline_ <= deadline) {
      return with_cancel(parent);  // the parent's comes first
    }
    const bool never = deadline == Clock::time_point::max();
    Ptr c = std::make_shared<BasicContext>(Key{}, parent, deadline, nullptr);
    if (!never) c->own_deadline();  // before anyone sees c
    c->attach();
    if (!never) c->arm_deadline();
    return {c, cancel_func(c)};
  }

  /// Go's context.WithTimeout: with_deadline(parent, now + d), where a sum
  /// past the clock's end is time_point::max() (never), as Go saturates.
  static std::pair<Ptr, CancelFunc> with_timeout(const Ptr& parent,
                                                 std::chrono::nanoseconds d) {
    return with_deadline(parent, saturating_add(Clock::now(), d));
  }

  /// Made by the functions above only: `Key` is private. (Public for
  /// std::make_shared, which puts the context and its reference counts in
  /// one allocation.)
  BasicContext(Key, Ptr parent, std::optional<Clock::time_point> deadline,
               BasicContext* deadline_owner)
      : parent_(std::move(parent)),
        deadline_(deadline),
        deadline_owner_(deadline_owner) {}
  BasicContext(const BasicContext&) = delete;
  BasicContext& operator=(const BasicContext&) = delete;
  /// Leaves its parent's list of children, and releases its ancestors
  /// without recursion. Any thread.
  ~BasicContext() {
    if (parent_ == nullptr) return;
    {
      std::lock_guard lk(parent_->mu_);
      parent_->unlink_child(this);
    }
    release_chain(std::move(parent_));
  }

  /// Go's ctx.Done(): closed when the context is cancelled; null for
  /// background() (never ready in a select). Any thread. Made by the
  /// first call, as Go's is (a context whose done() nobody asked for has
  /// no channel, and its cancel closes none); after a cancel that found
  /// none, one closed channel shared by all such contexts (Go's
  /// closedchan). Every receive from a context's own channel keeps a
  /// deadline alive across runs (keep_deadline, through its ReceiveGuard).
  /// A channel made by done() is the context's: keep the context (a Ptr)
  /// as long as the pointer is used (Go's garbage collector keeps it for
  /// `done := ctx.Done()`; C++ does not). Throws std::bad_alloc if the
  /// channel cannot be made.
  DoneChan* done() {
    if (parent_ == nullptr) return nullptr;
    // acquire: pairs with make_done's and cancel's release store, so the
    // channel is seen as made (and, for closedchan, closed).
    if (DoneChan* d = done_.load(std::memory_order_acquire)) return d;
    return make_done();
  }

  /// Go's ctx.Err(): kNone until done() is closed, then why. Any thread;
  /// as a receive from done(), it keeps a deadline alive across runs
  /// (keep_deadline): from
  /// a goroutine, a deadline that passed while no timer was pending (its
  /// run ended) cancels the context now. A plain thread cannot cancel: it
  /// is told kDeadlineExceeded once the deadline has passed, and done() is
  /// closed by the next goroutine that looks
  /// (ContextSuite.ErrAfterADeadlineItsRunDidNotSee).
  ContextErr err() const noexcept {
    // acquire: pairs with cancel's release store, made after done_ was
    // closed (or set to closedchan) under mu_: a reader that sees the
    // reason finds done() closed.
    ContextErr e = err_.load(std::memory_order_acquire);
    if (e != ContextErr::kNone || deadline_owner_ == nullptr) return e;
    deadline_owner_->keep_deadline();
    e = err_.load(std::memory_order_acquire);
    if (e != ContextErr::kNone) return e;
    // Not cancelled: its timer is pending (the deadline is ahead), or
    // none is and nobody could cancel (a plain thread).
    if (!deadline_owner_->deadline_armed() && *deadline_ <= Clock::now()) {
      return ContextErr::kDeadlineExceeded;
    }
    return ContextErr::kNone;
  }

  /// Go's ctx.Deadline(): when it will be cancelled by time, if ever.
  std::optional<Clock::time_point> deadline() const noexcept {
    return deadline_;
  }

 private:
  using G = typename S::G;
  using Sudog = gmp::Sudog<G>;
  using DoneAccess = detail::ChanAccess<std::monostate, S>;

  // with_deadline's: this context's own deadline, kept by its timer.
  void own_deadline() noexcept { deadline_owner_ = this; }

  // done()'s first call: the channel, made under mu_ (a cancel holds it
  // while it reads done_).
  [[gnu::noinline]] DoneChan* make_done() {
    std::lock_guard lk(mu_);
    DoneChan* d = done_.load(std::memory_order_relaxed);  // under mu_
    if (d != nullptr) return d;  // another thread's, or closedchan
    own_done_ = std::make_unique<DoneChan>();
    if (deadline_owner_ != nullptr) DoneAccess::bind(own_done_.get(), this);
    // release: a done() that loads the pointer sees the channel made.
    done_.store(own_done_.get(), std::memory_order_release);
    return own_done_.get();
  }

  // Go's closedchan: the done() of every context cancelled before anyone
  // asked for its channel. Closed at once; never destroyed, so it
  // outlives every context that hands it out.
  static DoneChan* closed_chan() {
    static DoneChan* const closed = [] {
      auto* c = new DoneChan();
      Sudog* none = nullptr;
      DoneAccess::close_now(c, none, none);  // nobody waits on it yet
      return c;
    }();
    return closed;
  }

  // Every receive from this context's own channel (recv, try_recv,
  // select; make_done binds it when the context has a deadline, its own
  // or an ancestor's) keeps the deadline alive: a goroutine that took
  // done() in one run and waits on it in a later one sees it closed when
  // the deadline passes. closedchan has no guard: it is closed already.
  void before_receive(G, const char*) const override {
    deadline_owner_->keep_deadline();
  }

  static CancelFunc cancel_func(const Ptr& c) {
    return [c] { c->cancel(ContextErr::kCanceled); };
  }

  // Go's propagateCancel: joins the parent's children, or is born
  // cancelled if the parent is. background() keeps no list: it is never
  // cancelled.
  void attach() {
    ContextErr parent_err;
    {
      std::lock_guard lk(parent_->mu_);
      parent_err = parent_->err_.load(std::memory_order_relaxed);
      if (parent_err == ContextErr::kNone && parent_->parent_ != nullptr) {
        parent_->link_child(this);
      }
    }
    if (parent_err != ContextErr::kNone) cancel(parent_err);
  }

  // ---- Children: an intrusive list, under the parent's mu_ -------------

  void link_child(BasicContext* c) noexcept {
    c->prev_sibling_ = nullptr;
    c->next_sibling_ = first_child_;
    if (first_child_ != nullptr) first_child_->prev_sibling_ = c;
    first_child_ = c;
    c->linked_ = true;
  }
  void unlink_child(BasicContext* c) noexcept {
    if (!c->linked_) return;
    (c->prev_sibling_ != nullptr ? c->prev_sibling_->next_sibling_
                                 : first_child_) = c->next_sibling_;
    if (c->next_sibling_ != nullptr) {
      c->next_sibling_->prev_sibling_ = c->prev_sibling_;
    }
    c->prev_sibling_ = c->next_sibling_ = nullptr;
    c->linked_ = false;
  }
  void unlink_all_children() noexcept {
    while (first_child_ != nullptr) unlink_child(first_child_);
  }

  // ---- Cancel ----------------------------------------------------------

  // The locks one cancel holds: every context of the subtree (parent
  // first), then the done() channels they have (by address). Released in
  // reverse when it goes, also when a check throws; the contexts stay
  // alive in `nodes`, which outlives it.
  struct Held {
    explicit Held(std::vector<Ptr>& n) : nodes(n) {}
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    ~Held() {
      for (auto it = chans.rbegin(); it != chans.rend(); ++it) {
        (*it)->unlock();
      }
      for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
        (*it)->mu_.unlock();
      }
    }
    std::vector<Ptr>& nodes;          // nodes[0] is the cancelled context
    std::vector<RuntimeLock*> chans;  // their channels' locks, each held
  };

  // Go's cancelCtx.cancel, all or nothing (see the file's comment). The
  // caller keeps this context alive: it holds a Ptr to it, or
  // (keep_deadline on the deadline's owner) to a descendant.
  void cancel(ContextErr why) {
    G g = S::current_g("context cancel");  // a UsageError first
    mu_.lock();
    if (err_.load(std::memory_order_relaxed) != ContextErr::kNone) {
      mu_.unlock();
      return;  // cancelled already
    }
    if (first_child_ == nullptr) {
      cancel_leaf(why, g);  // takes over mu_
      if (deadline_owner_ == this) stop_timer();
    } else {
      mu_.unlock();  // cancel_subtree locks the subtree parent first
      cancel_subtree(why, g);
    }
    if (parent_ != nullptr) {
      std::lock_guard lk(parent_->mu_);
      parent_->unlink_child(this);
    }
  }

  // cancel's common case, a context without children (Go's `defer
  // cancel()` of the request's context): its mu_, held on entry, and its
  // channel's lock if it has a channel, and no lists. Unlocks both, also
  // when the check throws.
  void cancel_leaf(ContextErr why, G g) {
    DoneChan* done = done_.load(std::memory_order_relaxed);  // under mu_
    RuntimeLock* chan = done != nullptr ? DoneAccess::lock(done) : nullptr;
    if (chan != nullptr) {
      chan->lock();
      try {
        DoneAccess::check_close(done, g, "context cancel");
      } catch (...) {
        chan->unlock();
        mu_.unlock();
        throw;
      }
    }
    Sudog* receivers = nullptr;
    Sudog* senders = nullptr;
    const bool closed = mark_cancelled(why, receivers, senders);
    if (chan != nullptr) chan->unlock();
    mu_.unlock();
    if (closed) {
      ready_all<S>(receivers);
      ready_all<S>(senders);
    }
  }

  // One context's part of a cancel, under its mu_ and, if it has a
  // channel, that channel's lock, the close already checked: the channel
  // closed (its waiters into receivers and senders, true if it has any;
  // they are readied once every lock is released), or, if nobody asked
  // for one, the shared closed channel stored; then the reason.
  bool mark_cancelled(ContextErr why, Sudog*& receivers, Sudog*& senders) {
    DoneChan* done = done_.load(std::memory_order_relaxed);  // under mu_
    bool closed = false;
    if (done == nullptr) {  // nobody asked for it: nobody waits
      // release: see done().
      done_.store(closed_chan(), std::memory_order_release);
    } else {
      closed = DoneAccess::close_now(done, receivers, senders);
    }
    err_.store(why, std::memory_order_release);  // release: see err()
    return closed;
  }

  // cancel with descendants: every context of the subtree and every
  // done() channel locked at once (Held), then closed.
  void cancel_subtree(ContextErr why, G g) {
    std::vector<Ptr> nodes;        // the subtree, alive to the end
    std::vector<Sudog*> chains;    // to ready once every lock is released
    {
      Held held(nodes);
      if (!lock_subtree(nodes)) return;  // cancelled already
      // The channels made so far (under the nodes' mu_, none is made
      // meanwhile).
      std::vector<DoneChan*> made;
      for (const Ptr& n : nodes) {
        if (DoneChan* d = n->done_.load(std::memory_order_relaxed)) {
          made.push_back(d);
        }
      }
      std::vector<RuntimeLock*> chans;
      chans.reserve(made.size());
      for (DoneChan* d : made) chans.push_back(DoneAccess::lock(d));
      std::sort(chans.begin(), chans.end());  // select's lock order
      for (RuntimeLock* l : chans) {
        l->lock();
        held.chans.push_back(l);
      }
      for (DoneChan* d : made) {  // throws before anything changed
        DoneAccess::check_close(d, g, "context cancel");
      }
      for (const Ptr& n : nodes) {
        Sudog* receivers = nullptr;
        Sudog* senders = nullptr;
        if (n->mark_cancelled(why, receivers, senders)) {
          chains.push_back(receivers);
          chains.push_back(senders);
        }
        n->unlink_all_children();  // each is in nodes, or cancelled
      }
    }  // every lock released
    for (Sudog* chain : chains) ready_all<S>(chain);
    for (const Ptr& n : nodes) {
      if (n->deadline_owner_ == n.get()) n->stop_timer();
    }
  }

  // A cancelled context's deadline timer, out of its heap. Its function
  // may be what is running: stop() only takes the timer out.
  void stop_timer() {
    if (BasicTimer<S>* t = timer_.load(std::memory_order_acquire)) t->stop();
  }

  // Locks this context and every descendant not yet cancelled, parent
  // before child, into `nodes` (whose Held unlocks them). False, nothing
  // held, if this one is cancelled already.
  bool lock_subtree(std::vector<Ptr>& nodes) {
    mu_.lock();
    if (err_.load(std::memory_order_relaxed) != ContextErr::kNone) {
      mu_.unlock();
      return false;
    }
    nodes.push_back(this->shared_from_this());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      for (BasicContext* c = nodes[i]->first_child_; c != nullptr;
           c = c->next_sibling_) {
        Ptr child = c->weak_from_this().lock();
        if (child == nullptr) continue;  // being destroyed: it waits for us
        child->mu_.lock();
        if (child->err_.load(std::memory_order_relaxed) !=
            ContextErr::kNone) {
          child->mu_.unlock();  // cancelled, on its way out of the list
          continue;
        }
        nodes.push_back(std::move(child));
      }
    }
    return true;
  }

  // ---- Deadlines ---------------------------------------------------------

  // Starts the deadline's timer in the calling goroutine's runtime (an
  // after_func, as Go's timerCtx), or cancels at once if it has passed.
  void arm_deadline() {
    const Clock::time_point now = Clock::now();
    if (*deadline_ <= now) {  // compared, not subtracted: min() - now
      cancel(ContextErr::kDeadlineExceeded);  // would overflow
      return;
    }
    const Clock::duration d = *deadline_ - now;
    std::weak_ptr<BasicContext> weak = this->weak_from_this();
    auto t = std::make_unique<BasicTimer<S>>(BasicTimer<S>::after_func(
        std::chrono::duration_cast<std::chrono::nanoseconds>(d), [weak] {
          if (Ptr self = weak.lock()) self->deadline_fired();
        }));
    std::lock_guard lk(mu_);
    const BasicTimer<S>* now_armed = timer_.load(std::memory_order_relaxed);
    if (err_.load(std::memory_order_relaxed) != ContextErr::kNone ||
        (now_armed != nullptr && now_armed->pending())) {
      return;  // cancelled meanwhile, or re-armed by another goroutine: t
    }          // is destroyed (and so stopped)
    // release: keep_deadline and err() read the pointer without mu_
    // (acquire), then the timer it points to.
    timer_.store(t.get(), std::memory_order_release);
    timers_.push_back(std::move(t));  // freed with the context only
  }

  // The deadline timer's function, on a goroutine of the runtime that armed
  // it. A goroutine of another runtime waiting on done() makes the cancel
  // a UsageError that changed nothing; nobody called it, so the error is
  // said on stderr rather than thrown (it would end the program), and the
  // deadline is kept: the next receive from done(), or err(), by a
  // goroutine of the waiters' runtime cancels
  // (ContextSuite.ADeadlineWithAWaiterOfAnotherRuntimeIsSaidAndKept).
  void deadline_fired() noexcept {
    try {
      cancel(ContextErr::kDeadlineExceeded);
    } catch (const UsageError& e) {
      std::string text = std::string("context deadline not applied: ") +
                         e.what() + "\n";
      std::fputs(text.c_str(), stderr);
    }
  }

  // The check of every receive from done() (before_receive) and of err(),
  // on the context that owns the deadline: while it is not cancelled, its
  // timer must be pending; if none is (its run ended, or it fired and its
  // goroutine has not cancelled yet, or never will because the run ended
  // first), the deadline is kept here.
  void keep_deadline() noexcept {
    if (err_.load(std::memory_order_relaxed) != ContextErr::kNone) return;
    if (deadline_armed()) return;
    rearm();
  }

  // Whether the deadline's timer waits in a runtime's heap (or is firing).
  // acquire: keep_deadline and err() read the pointer without mu_, then
  // the timer.
  bool deadline_armed() const noexcept {
    const BasicTimer<S>* t = timer_.load(std::memory_order_acquire);
    return t != nullptr && t->pending();
  }

  // keep_deadline's slow path, from a goroutine only (a plain thread
  // cannot arm a timer): cancels if the deadline has passed, else arms a
  // timer for the rest of it in this goroutine's runtime.
  [[gnu::cold, gnu::noinline]] void rearm() noexcept {
    try {
      S::current_g("context done");  // a plain thread: nothing to do
      {
        std::lock_guard lk(mu_);
        if (err_.load(std::memory_order_relaxed) != ContextErr::kNone) return;
        const BasicTimer<S>* t = timer_.load(std::memory_order_relaxed);
        if (t != nullptr && t->pending()) return;  // another one re-armed
      }
      arm_deadline();
    } catch (...) {
      // A plain thread, a waiter of another runtime (the cancel changed
      // nothing), or no memory: the deadline is kept by the next receive.
    }
  }

  // ---- Release without recursion -----------------------------------------

  // Drops a reference to `p` (a parent). If it was the last, p's
  // destructor releases p's own parent: rather than recursing (a chain of
  // 100,000 contexts would overflow a goroutine's stack), nested calls on
  // this thread append to the outermost call's list, which releases them
  // one by one. NoPreempt keeps the goroutine on this thread meanwhile
  // (the list is found through a thread_local).
  static void release_chain(Ptr p) noexcept {
    thread_local std::vector<Ptr>* pending = nullptr;
    if (pending != nullptr) {
      pending->push_back(std::move(p));
      return;
    }
    NoPreempt pin;
    std::vector<Ptr> list;  // allocates only if a release nests
    pending = &list;
    p.reset();  // may append p's parent
    while (!list.empty()) {
      Ptr q = std::move(list.back());
      list.pop_back();
      q.reset();  // may append q's parent
    }
    pending = nullptr;
  }

  Ptr parent_;  // null only for background(); released by the destructor
  const std::optional<Clock::time_point> deadline_;  // immutable
  // The context whose timer keeps this one's deadline (itself, or the
  // ancestor with the earliest one), or null; set before it is shared.
  BasicContext* deadline_owner_;
  mutable RuntimeLock mu_;  // protects the fields below, except as said
  // done()'s channel: null until done() or a cancel. Written under mu_
  // (release), read by done() without it (acquire). own_done_ holds it if
  // it is this context's own (made by done(), not closedchan); its lock
  // and its closing are the channel's.
  std::atomic<DoneChan*> done_{nullptr};
  std::unique_ptr<DoneChan> own_done_;
  // Written under mu_ (release), read without it (acquire / relaxed).
  std::atomic<ContextErr> err_{ContextErr::kNone};
  BasicContext* first_child_ = nullptr;  // children not cancelled yet
  // This context's place in its parent's list: under the parent's mu_.
  BasicContext* prev_sibling_ = nullptr;
  BasicContext* next_sibling_ = nullptr;
  bool linked_ = false;
  // The deadline's current timer (null: none armed), written under mu_
  // (release), read by keep_deadline and err() without it (acquire); every
  // timer it ever pointed to stays in timers_ until the context is
  // destroyed.
  std::atomic<BasicTimer<S>*> timer_{nullptr};
  std::vector<std::unique_ptr<BasicTimer<S>>> timers_;
};

}  // namespace gmp
