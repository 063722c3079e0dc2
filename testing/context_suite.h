// Go's own tests of the context package (context/context_test.go), ported
// to the course's API and written once for every stage (common/context.h).
// A stage instantiates it with its Api type:
//
//   INSTANTIATE_TYPED_TEST_SUITE_P(Stage1, ContextSuite, gmp::stage1::Api);
//
// Behaviour only: a deadline never cancels early; no test bounds how late.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "common/context.h"
#include "common/errors.h"
#include "common/select.h"
#include "testing/helpers.h"

namespace gmp::testing {

template <class Api>
class ContextSuite : public ::testing::Test {
 protected:
  using Context = typename Api::Context;
  using Ptr = typename Context::Ptr;
  using Clock = std::chrono::steady_clock;
  using ms = std::chrono::milliseconds;

  // Whether ctx's done() is closed: a receive that does not wait.
  static bool is_done(const Ptr& ctx) {
    auto* d = ctx->done();
    if (d == nullptr) return false;
    std::optional<std::monostate> v;
    return d->try_recv(v) && !v.has_value();
  }
};

TYPED_TEST_SUITE_P(ContextSuite);

// context_test.go TestBackground: never done, no deadline, no error.
TYPED_TEST_P(ContextSuite, BackgroundIsNeverDone) {
  run_procs<TypeParam>(1, 0, [] {
    auto bg = TestFixture::Context::background();
    EXPECT_EQ(bg->done(), nullptr);
    EXPECT_EQ(bg->err(), ContextErr::kNone);
    EXPECT_FALSE(bg->deadline().has_value());
    EXPECT_EQ(select(recv_case(bg->done()), default_case), 1);
  });
}

// context_test.go TestWithCancel and TestParentFinishesChild: cancelling a
// context cancels it and every descendant, with context.Canceled; its
// parent and siblings go on.
TYPED_TEST_P(ContextSuite, CancelReachesEveryDescendant) {
  run_procs<TypeParam>(1, 0, [] {
    using C = typename TestFixture::Context;
    auto [parent, cancel_parent] = C::with_cancel(C::background());
    auto [c1, cancel1] = C::with_cancel(parent);
    auto [c2, cancel2] = C::with_cancel(c1);
    auto [c3, cancel3] = C::with_timeout(c1, std::chrono::hours(1));
    auto [sibling, cancel_sibling] = C::with_cancel(parent);
    for (auto& c : {parent, c1, c2, c3, sibling}) {
      EXPECT_FALSE(TestFixture::is_done(c));
      EXPECT_EQ(c->err(), ContextErr::kNone);
    }
    cancel1();
    for (auto& c : {c1, c2, c3}) {
      EXPECT_TRUE(TestFixture::is_done(c));
      EXPECT_EQ(c->err(), ContextErr::kCanceled);
      EXPECT_EQ(to_string(c->err()), "context canceled");
    }
    EXPECT_FALSE(TestFixture::is_done(parent));
    EXPECT_FALSE(TestFixture::is_done(sibling));
    cancel1();  // idempotent
    cancel2();
    EXPECT_EQ(c2->err(), ContextErr::kCanceled);
    cancel_parent();
    EXPECT_EQ(sibling->err(), ContextErr::kCanceled);
    cancel_sibling();
    cancel3();
  });
}

// context_test.go TestChildFinishesFirst: a child cancelled first leaves
// its parent alone; a child born of a cancelled parent is born cancelled.
TYPED_TEST_P(ContextSuite, ChildFinishesFirstAndBornCancelled) {
  run_procs<TypeParam>(1, 0, [] {
    using C = typename TestFixture::Context;
    auto [parent, cancel_parent] = C::with_cancel(C::background());
    auto [child, cancel_child] = C::with_cancel(parent);
    cancel_child();
    EXPECT_EQ(child->err(), ContextErr::kCanceled);
    EXPECT_EQ(parent->err(), ContextErr::kNone);
    cancel_parent();
    auto [late, cancel_late] = C::with_timeout(parent, std::chrono::hours(1));
    EXPECT_TRUE(TestFixture::is_done(late));
    EXPECT_EQ(late->err(), ContextErr::kCanceled);
    cancel_late();
  });
}

// context_test.go TestDeadline, TestTimeout: done no earlier than the
// deadline, with context.DeadlineExceeded; a deadline already past is done
// at once; a parent's earlier deadline is kept.
TYPED_TEST_P(ContextSuite, DeadlinesCancelWithDeadlineExceeded) {
  using ms = typename TestFixture::ms;
  using Clock = typename TestFixture::Clock;
  run_procs<TypeParam>(2, 1, [] {
    using C = typename TestFixture::Context;
    auto start = Clock::now();
    auto [ctx, cancel] = C::with_timeout(C::background(), ms(20));
    EXPECT_FALSE(ctx->done()->recv().has_value());  // closed
    EXPECT_GE(Clock::now() - start, ms(20));
    EXPECT_EQ(ctx->err(), ContextErr::kDeadlineExceeded);
    EXPECT_EQ(to_string(ctx->err()), "context deadline exceeded");
    cancel();  // after the deadline: changes nothing
    EXPECT_EQ(ctx->err(), ContextErr::kDeadlineExceeded);

    auto [past, cancel_past] =
        C::with_deadline(C::background(), Clock::now() - ms(1));
    EXPECT_TRUE(TestFixture::is_done(past));
    EXPECT_EQ(past->err(), ContextErr::kDeadlineExceeded);

    auto soon = Clock::now() + ms(30);
    auto [p, cancel_p] = C::with_deadline(C::background(), soon);
    auto [c, cancel_c] = C::with_deadline(p, soon + std::chrono::hours(1));
    EXPECT_EQ(c->deadline(), std::optional(soon));
    c->done()->recv();
    EXPECT_EQ(c->err(), ContextErr::kDeadlineExceeded);
    cancel_past();
    cancel_p();
    cancel_c();
  });
}

// context_test.go TestCanceledTimeout: cancelled before its deadline, a
// context reports Canceled, and its timer is gone (it never changes to
// DeadlineExceeded).
TYPED_TEST_P(ContextSuite, CancelBeforeTheDeadlineStopsTheTimer) {
  using ms = typename TestFixture::ms;
  run_procs<TypeParam>(1, 0, [] {
    using C = typename TestFixture::Context;
    auto [ctx, cancel] = C::with_timeout(C::background(), ms(10));
    cancel();
    EXPECT_EQ(ctx->err(), ContextErr::kCanceled);
    TypeParam::sleep_for(ms(30));
    EXPECT_EQ(ctx->err(), ContextErr::kCanceled);
  });
}

// Note 003's (docs/course/notes.md) loop: select on ctx.done() and a ticker,
// until the context's deadline ends it. Many goroutines waiting on one done()
// all wake.
TYPED_TEST_P(ContextSuite, SelectOnDoneAndATicker) {
  using ms = typename TestFixture::ms;
  run_procs<TypeParam>(2, 9, [] {
    using C = typename TestFixture::Context;
    auto [ctx, cancel] = C::with_timeout(C::background(), ms(30));
    typename TypeParam::WaitGroup wg;
    std::atomic<int> woken{0};
    wg.add(8);
    for (int i = 0; i < 8; ++i) {
      TypeParam::go([&, ctx = ctx] {
        ctx->done()->recv();
        woken.fetch_add(1);
        wg.done();
      });
    }
    auto ticker = TypeParam::Timer::new_ticker(ms(2));
    // One tick first, whenever it comes: on a loaded machine this goroutine
    // may first run after the deadline, when select would pick either case.
    ticker.c()->recv();
    for (;;) {
      int r = select(recv_case(ctx->done()), recv_case(ticker.c()));
      if (r == 0) break;
    }
    EXPECT_EQ(ctx->err(), ContextErr::kDeadlineExceeded);
    wg.wait();
    EXPECT_EQ(woken.load(), 8);
    cancel();
  });
}

// A cancel from a plain thread is a UsageError that changes nothing.
TYPED_TEST_P(ContextSuite, CancelOutsideAGoroutineIsAUsageError) {
  using C = typename TestFixture::Context;
  typename TestFixture::Ptr kept;
  typename C::CancelFunc cancel;
  run_procs<TypeParam>(1, 0, [&] {
    auto [ctx, c] = C::with_cancel(C::background());
    kept = ctx;
    cancel = c;
  });
  EXPECT_THROW(cancel(), UsageError);
  EXPECT_EQ(kept->err(), ContextErr::kNone);
}

// Durations and deadlines at the clock's ends, as Go's: with_timeout of
// the largest duration and with_deadline of time_point::max() are never
// cancelled by time (Go saturates the sum); the most negative ones are
// done at once.
TYPED_TEST_P(ContextSuite, DeadlinesAtTheClocksEnds) {
  using Clock = typename TestFixture::Clock;
  run_procs<TypeParam>(1, 0, [] {
    using C = typename TestFixture::Context;
    auto [t_max, cancel1] =
        C::with_timeout(C::background(), std::chrono::nanoseconds::max());
    auto [d_max, cancel2] =
        C::with_deadline(C::background(), Clock::time_point::max());
    auto [child, cancel3] = C::with_timeout(t_max, std::chrono::hours(1));
    EXPECT_EQ(d_max->deadline(), std::optional(Clock::time_point::max()));
    EXPECT_EQ(t_max->deadline(), std::optional(Clock::time_point::max()));
    TypeParam::sleep_for(std::chrono::milliseconds(20));
    for (auto& c : {t_max, d_max, child}) {
      EXPECT_FALSE(TestFixture::is_done(c));
      EXPECT_EQ(c->err(), ContextErr::kNone);
    }
    auto [t_min, cancel4] =
        C::with_timeout(C::background(), std::chrono::nanoseconds::min());
    auto [d_min, cancel5] =
        C::with_deadline(C::background(), Clock::time_point::min());
    EXPECT_EQ(t_min->err(), ContextErr::kDeadlineExceeded);
    EXPECT_EQ(d_min->err(), ContextErr::kDeadlineExceeded);
    cancel1();
    EXPECT_EQ(child->err(), ContextErr::kCanceled);
    cancel2();
    cancel3();
    cancel4();
    cancel5();
  });
}

// A cancel from a goroutine of another runtime, while goroutines of the
// context's own wait on done() (its own or a descendant's), is a
// UsageError that changes nothing: no context of the subtree is
// cancelled, and a later cancel from the right runtime wakes them all.
TYPED_TEST_P(ContextSuite, CancelFromAnotherRuntimeChangesNothing) {
  using Api = TypeParam;
  using C = typename TestFixture::Context;
  using ms = typename TestFixture::ms;
  typename C::Ptr root, leaf;
  typename C::CancelFunc cancel_root;
  std::atomic<int> step{0};
  std::string error;
  typename Api::Config config;
  config.procs = procs_for<Api>(2, 3);
  typename Api::Runtime a(config);
  std::thread other([&] {
    a.run([&] {
      std::tie(root, cancel_root) = C::with_cancel(C::background());
      auto [mid, cancel_mid] = C::with_cancel(root);
      auto [l, cancel_leaf] = C::with_timeout(mid, std::chrono::hours(1));
      leaf = l;
      typename Api::WaitGroup wg;
      wg.add(2);
      Api::go([&, leaf = leaf] {
        leaf->done()->recv();
        wg.done();
      });
      Api::go([&, mid = mid] {
        select(recv_case(mid->done()));
        wg.done();
      });
      wait_until_blocked<Api>(a, 2);
      step.store(1);
      while (step.load() != 2) Api::sleep_for(ms(1));
      EXPECT_EQ(root->err(), ContextErr::kNone);  // unchanged
      EXPECT_EQ(leaf->err(), ContextErr::kNone);
      cancel_root();
      wg.wait();
      EXPECT_EQ(leaf->err(), ContextErr::kCanceled);
      cancel_mid();
      cancel_leaf();
    });
  });
  run_procs<Api>(1, 0, [&] {
    while (step.load() != 1) Api::sleep_for(ms(1));
    try {
      cancel_root();
      ADD_FAILURE() << "a goroutine of another runtime was woken";
    } catch (const UsageError& e) {
      error = e.what();
    }
    EXPECT_EQ(root->err(), ContextErr::kNone);
    EXPECT_FALSE(TestFixture::is_done(root));
    step.store(2);
  });
  other.join();
  EXPECT_NE(error.find("belongs to another runtime"), std::string::npos)
      << error;
  EXPECT_EQ(error.rfind("context cancel: goroutine", 0), 0u) << error;
}

// The same, for a childless context (cancel's leaf path) and for a
// subtree where only some contexts have made done(), the waiter of another
// runtime deep in it: each cancel throws and changes nothing, neither an
// error nor a channel (a context without one still has none to close); the
// owner's cancel later closes every one and wakes both waiters.
TYPED_TEST_P(ContextSuite, ACancelThatThrowsLeavesEveryContextAsItWas) {
  using Api = TypeParam;
  using C = typename TestFixture::Context;
  using ms = typename TestFixture::ms;
  typename C::Ptr lone, root, mid, deep, side, side_kid;
  typename C::CancelFunc cancel_lone, cancel_root;
  std::atomic<int> step{0};
  std::vector<std::string> errors;
  typename Api::Config config;
  config.procs = procs_for<Api>(2, 3);
  typename Api::Runtime a(config);
  std::thread other([&] {
    a.run([&] {
      std::tie(lone, cancel_lone) = C::with_cancel(C::background());
      std::tie(root, cancel_root) = C::with_cancel(C::background());
      mid = C::with_cancel(root).first;                          // no done()
      side = C::with_timeout(root, std::chrono::hours(1)).first;  // no done()
      side_kid = C::with_cancel(side).first;
      side_kid->done();  // made, nobody waiting
      deep = C::with_cancel(C::with_cancel(mid).first).first;
      typename Api::WaitGroup wg;
      wg.add(2);
      Api::go([&, lone = lone] {
        lone->done()->recv();
        wg.done();
      });
      Api::go([&, deep = deep] {
        deep->done()->recv();
        wg.done();
      });
      wait_until_blocked<Api>(a, 2);
      step.store(1);
      while (step.load() != 2) Api::sleep_for(ms(1));
      cancel_lone();
      cancel_root();
      wg.wait();
      for (const auto& c : {lone, root, mid, deep, side, side_kid}) {
        EXPECT_EQ(c->err(), ContextErr::kCanceled);
        EXPECT_TRUE(TestFixture::is_done(c));
      }
    });
  });
  run_procs<Api>(1, 0, [&] {
    while (step.load() != 1) Api::sleep_for(ms(1));
    for (auto* cancel : {&cancel_lone, &cancel_root}) {
      try {
        (*cancel)();
        ADD_FAILURE() << "a goroutine of another runtime was woken";
      } catch (const UsageError& e) {
        errors.push_back(e.what());
      }
    }
    // Each error still unset, and each done() open, made by the check
    // itself where the failed cancel left none.
    for (const auto& c : {lone, root, mid, deep, side, side_kid}) {
      EXPECT_EQ(c->err(), ContextErr::kNone);
      EXPECT_FALSE(TestFixture::is_done(c));
    }
    step.store(2);
  });
  other.join();
  ASSERT_EQ(errors.size(), 2u);
  for (const auto& error : errors) {
    EXPECT_NE(error.find("belongs to another runtime"), std::string::npos)
        << error;
  }
}

// A context whose deadline timer died with its run (the runtime's timers
// end with run()) keeps its deadline in a later run, of another runtime
// or of the same one: a receive from done() re-arms it there, or cancels
// at once if the deadline has passed.
TYPED_TEST_P(ContextSuite, DeadlinesOutliveTheirRun) {
  using Api = TypeParam;
  using C = typename TestFixture::Context;
  using ms = typename TestFixture::ms;
  typename C::Ptr soon, passed, child;
  typename C::CancelFunc c1, c2, c3;
  typename Api::Config config;
  config.procs = procs_for<Api>(1, 1);
  typename Api::Runtime rt(config);
  rt.run([&] {
    std::tie(soon, c1) = C::with_timeout(C::background(), ms(40));
    std::tie(child, c3) = C::with_cancel(soon);
    std::tie(passed, c2) = C::with_timeout(C::background(), ms(1));
  });
  std::this_thread::sleep_for(ms(5));  // `passed` is due between the runs
  run_procs<Api>(1, 1, [&] {  // another runtime
    auto guard = Api::Timer::after(std::chrono::seconds(30));
    EXPECT_EQ(select(recv_case(child->done()), recv_case(guard.c())), 0);
    EXPECT_EQ(soon->err(), ContextErr::kDeadlineExceeded);
    EXPECT_EQ(select(recv_case(passed->done()), recv_case(guard.c())), 0);
    EXPECT_EQ(passed->err(), ContextErr::kDeadlineExceeded);
  });
  typename C::Ptr again;
  typename C::CancelFunc c4;
  rt.run([&] { std::tie(again, c4) = C::with_timeout(C::background(), ms(30)); });
  rt.run([&] {  // the same runtime, in a later run
    auto guard = Api::Timer::after(std::chrono::seconds(30));
    EXPECT_EQ(select(recv_case(again->done()), recv_case(guard.c())), 0);
    EXPECT_EQ(again->err(), ContextErr::kDeadlineExceeded);
  });
}

// Go's `done := ctx.Done()`, kept past the run that made the context: a
// receive from that channel in a later run, of another runtime, keeps the
// deadline as done() does (a select's case, or a recv), and finds the
// channel closed once the deadline has passed.
TYPED_TEST_P(ContextSuite, ADoneChannelKeptFromAnEarlierRunClosesInALaterOne) {
  using Api = TypeParam;
  using C = typename TestFixture::Context;
  struct Kept {  // a context, its cancel, its done() taken in the first run
    typename C::Ptr ctx;
    typename C::CancelFunc cancel;
    typename C::DoneChan* done = nullptr;
  };
  Kept root, child, other;
  run_procs<Api>(1, 1, [&] {
    const auto d = typename TestFixture::ms(40);
    std::tie(root.ctx, root.cancel) = C::with_timeout(C::background(), d);
    std::tie(child.ctx, child.cancel) = C::with_cancel(root.ctx);
    std::tie(other.ctx, other.cancel) = C::with_timeout(C::background(), d);
    for (Kept* k : {&root, &child, &other}) k->done = k->ctx->done();
  });
  // Outlives the run: the goroutine below may still send when main ends.
  typename Api::template Chan<bool> closed(1);
  // Two blocked at once (main, the receiver) while a deadline's timer
  // function runs: on stage 1 each holds a thread.
  run_procs<Api>(1, 2, [&] {  // another runtime; done() is not called
    auto guard = Api::Timer::after(std::chrono::seconds(30));
    EXPECT_EQ(select(recv_case(child.done), recv_case(guard.c())), 0);
    EXPECT_EQ(root.ctx->err(), ContextErr::kDeadlineExceeded);
    Api::go([&] { closed.send(!other.done->recv().has_value()); });
    std::optional<bool> got;
    EXPECT_EQ(select(recv_case(&closed, got), recv_case(guard.c())), 0);
    EXPECT_EQ(got, std::optional<bool>(true)) << "recv() saw it closed";
    EXPECT_EQ(other.ctx->err(), ContextErr::kDeadlineExceeded);
  });
}

// A deadline that fires while a goroutine of another runtime waits on
// done(): the cancel would wake it from the wrong runtime, so nothing is
// cancelled (as a CancelFunc's UsageError), the error is said on stderr
// (nobody called, nobody could catch it) and the program goes on. The
// deadline is kept: once the waiter has gone, err() from a goroutine of
// either runtime cancels the context.
TYPED_TEST_P(ContextSuite, ADeadlineWithAWaiterOfAnotherRuntimeIsSaidAndKept) {
  using Api = TypeParam;
  using C = typename TestFixture::Context;
  using ms = typename TestFixture::ms;
  typename C::Ptr ctx;
  typename C::CancelFunc cancel;
  std::atomic<int> step{0};
  typename Api::Config config;
  config.procs = procs_for<Api>(2, 1);
  typename Api::Runtime a(config);
  ::testing::internal::CaptureStderr();
  std::thread other([&] {
    a.run([&] {
      // 200 ms: B's goroutine must be waiting on done() before the
      // deadline, also on a loaded machine under ThreadSanitizer (at 50 ms
      // it once was not: the deadline cancelled with no waiter, and done()
      // was closed when B came to select).
      std::tie(ctx, cancel) = C::with_timeout(C::background(), ms(200));
      step.store(1);
      while (step.load() != 2) Api::sleep_for(ms(1));
      // B's waiter has gone: whichever runtime asks first cancels.
      EXPECT_EQ(ctx->err(), ContextErr::kDeadlineExceeded);
    });
  });
  run_procs<Api>(1, 0, [&] {
    while (step.load() != 1) Api::sleep_for(ms(1));
    auto guard = Api::Timer::after(ms(700));  // well after the deadline
    EXPECT_EQ(select(recv_case(ctx->done()), recv_case(guard.c())), 1);
    step.store(2);
    EXPECT_EQ(ctx->err(), ContextErr::kDeadlineExceeded);
    std::optional<std::monostate> got;
    EXPECT_TRUE(ctx->done()->try_recv(got));
  });
  other.join();
  std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("context deadline not applied: context cancel: "
                      "goroutine"),
            std::string::npos)
      << said;
}

// err() after a deadline that passed once its run had ended, asked
// without done(): the deadline's timer died with the run, yet Go's Err
// says kDeadlineExceeded once the deadline has passed. A plain thread is
// told so; a goroutine of a later run cancels the context as it asks, so
// done() is closed too, and a child sees it.
TYPED_TEST_P(ContextSuite, ErrAfterADeadlineItsRunDidNotSee) {
  using Api = TypeParam;
  using C = typename TestFixture::Context;
  using ms = typename TestFixture::ms;
  typename C::Ptr ctx, child, ahead;
  typename C::CancelFunc c1, c2, c3;
  std::chrono::steady_clock::time_point made;
  run_procs<Api>(1, 1, [&] {
    made = std::chrono::steady_clock::now();
    std::tie(ctx, c1) = C::with_timeout(C::background(), ms(100));
    std::tie(child, c2) = C::with_cancel(ctx);
    std::tie(ahead, c3) = C::with_timeout(C::background(), std::chrono::hours(1));
  });
  // (Checked only while it is ahead: on a loaded machine the run's end
  // alone can take longer.)
  if (std::chrono::steady_clock::now() < made + ms(50)) {
    EXPECT_EQ(ctx->err(), ContextErr::kNone) << "the deadline is ahead";
  }
  std::this_thread::sleep_until(made + ms(140));
  EXPECT_EQ(ctx->err(), ContextErr::kDeadlineExceeded) << "a plain thread";
  EXPECT_EQ(child->err(), ContextErr::kDeadlineExceeded) << "its child";
  EXPECT_EQ(ahead->err(), ContextErr::kNone) << "a deadline still ahead";
  run_procs<Api>(1, 1, [&] {
    EXPECT_EQ(child->err(), ContextErr::kDeadlineExceeded) << "a later run";
    std::optional<std::monostate> got;
    EXPECT_TRUE(child->done()->try_recv(got)) << "closed, as err() says";
    EXPECT_EQ(ahead->err(), ContextErr::kNone);
  });
}

// Go's `defer cancel()` on 100,000 children of one context, each cancelled
// on its own: each leaves its parent's list in O(1) (benchmark: context
// cancel children, beside Go), and the parent goes on.
TYPED_TEST_P(ContextSuite, ManyChildrenCancelledOneByOne) {
  constexpr int kChildren = 100'000;
  run_procs<TypeParam>(1, 0, [] {
    using C = typename TestFixture::Context;
    auto [parent, cancel_parent] = C::with_cancel(C::background());
    std::vector<typename C::Ptr> kids;
    std::vector<typename C::CancelFunc> cancels;
    kids.reserve(kChildren);
    cancels.reserve(kChildren);
    for (int i = 0; i < kChildren; ++i) {
      auto [c, cancel] = C::with_cancel(parent);
      kids.push_back(std::move(c));
      cancels.push_back(std::move(cancel));
    }
    for (int i = kChildren - 1; i >= 0; i -= 2) cancels[i]();  // in any order
    for (int i = 0; i < kChildren; i += 2) cancels[i]();
    for (const auto& c : kids) EXPECT_EQ(c->err(), ContextErr::kCanceled);
    EXPECT_EQ(parent->err(), ContextErr::kNone);
    kids.clear();  // dropped after their cancel: nothing left to unlink
    cancels.clear();
    auto [late, cancel_late] = C::with_cancel(parent);
    cancel_parent();
    EXPECT_EQ(late->err(), ContextErr::kCanceled);
    cancel_late();
  });
}

// A chain of 100,000 nested contexts, on a goroutine's stack: cancelled
// from its root, and dropped from its leaf, without recursion (a few
// hundred frames of it overflowed the stack).
TYPED_TEST_P(ContextSuite, DeepChainsCancelAndDropWithoutRecursion) {
  constexpr int kDepth = 100'000;
  run_procs<TypeParam>(1, 0, [] {
    using C = typename TestFixture::Context;
    for (bool cancel_first : {true, false}) {
      auto [root, cancel_root] = C::with_cancel(C::background());
      typename C::Ptr leaf = root;
      for (int i = 0; i < kDepth; ++i) {
        leaf = i % 2 ? C::with_cancel(leaf).first
                     : C::with_timeout(leaf, std::chrono::hours(1)).first;
      }
      if (cancel_first) {
        cancel_root();
        EXPECT_EQ(leaf->err(), ContextErr::kCanceled);
        EXPECT_TRUE(TestFixture::is_done(leaf));
      }
      leaf.reset();  // the chain's last reference: all of it goes
      root.reset();
      cancel_root();
    }
  });
}

// done() is made by its first call, as Go's (common/context.h): a context
// cancelled before anyone asked hands out a closed channel (Go's
// closedchan), and a subtree whose contexts have channels or not is
// closed whole; a goroutine waiting on the one channel made is woken.
TYPED_TEST_P(ContextSuite, ADoneAskedForAfterTheCancelIsClosed) {
  run_procs<TypeParam>(2, 1, [] {
    using Api = TypeParam;
    using C = typename TestFixture::Context;
    auto [early, cancel_early] = C::with_cancel(C::background());
    cancel_early();
    EXPECT_EQ(early->err(), ContextErr::kCanceled);
    EXPECT_TRUE(TestFixture::is_done(early));
    EXPECT_EQ(select(recv_case(early->done()), default_case), 0);

    auto [root, cancel_root] = C::with_cancel(C::background());
    auto [mid, cancel_mid] = C::with_cancel(root);  // no done() asked
    auto [leaf, cancel_leaf] = C::with_timeout(mid, std::chrono::hours(1));
    auto [side, cancel_side] = C::with_cancel(root);  // no done() asked
    auto* leaf_done = leaf->done();  // the subtree's one channel
    typename Api::WaitGroup wg;
    wg.add(1);
    Api::go([&wg, leaf_done] {
      leaf_done->recv();  // waits, or finds it closed
      wg.done();
    });
    Api::sleep_for(std::chrono::milliseconds(1));  // most often waits
    cancel_root();
    wg.wait();
    for (const auto& c : {root, mid, leaf, side}) {
      EXPECT_EQ(c->err(), ContextErr::kCanceled);
      EXPECT_TRUE(TestFixture::is_done(c));
    }
    cancel_mid();
    cancel_leaf();
    cancel_side();
  });
}

// done() asked for by many at once, goroutines and plain threads: one
// channel, which the cancel closes for all of them.
TYPED_TEST_P(ContextSuite, DoneAskedForByManyAtOnceIsOneChannel) {
  constexpr int kGoroutines = 8;
  constexpr int kThreads = 2;
  for (int round = 0; round < 50; ++round) {
    using Api = TypeParam;
    using C = typename TestFixture::Context;
    auto [ctx, cancel] = C::with_cancel(C::background());
    std::vector<typename C::DoneChan*> seen(kGoroutines + kThreads);
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t, ctx = ctx] {
        while (!go.load()) {}
        seen[kGoroutines + t] = ctx->done();
      });
    }
    run_procs<Api>(2, 1, [&, ctx = ctx, cancel = cancel] {
      typename Api::WaitGroup wg;
      wg.add(kGoroutines);
      for (int i = 0; i < kGoroutines; ++i) {
        Api::go([&, i] {
          if (i == 0) go.store(true);
          seen[i] = ctx->done();
          wg.done();
        });
      }
      wg.wait();
      for (auto& t : threads) t.join();
      cancel();
      EXPECT_TRUE(TestFixture::is_done(ctx));
    });
    for (auto* d : seen) EXPECT_EQ(d, seen[0]);
    if (::testing::Test::HasFailure()) return;
  }
}

REGISTER_TYPED_TEST_SUITE_P(ContextSuite, BackgroundIsNeverDone,
                            CancelReachesEveryDescendant,
                            ChildFinishesFirstAndBornCancelled,
                            DeadlinesCancelWithDeadlineExceeded,
                            CancelBeforeTheDeadlineStopsTheTimer,
                            SelectOnDoneAndATicker,
                            CancelOutsideAGoroutineIsAUsageError,
                            DeadlinesAtTheClocksEnds,
                            CancelFromAnotherRuntimeChangesNothing,
                            ACancelThatThrowsLeavesEveryContextAsItWas,
                            DeadlinesOutliveTheirRun,
                            ErrAfterADeadlineItsRunDidNotSee,
                            ADoneChannelKeptFromAnEarlierRunClosesInALaterOne,
                            ADeadlineWithAWaiterOfAnotherRuntimeIsSaidAndKept,
                            ManyChildrenCancelledOneByOne,
                            DeepChainsCancelAndDropWithoutRecursion,
                            ADoneAskedForAfterTheCancelIsClosed,
                            DoneAskedForByManyAtOnceIsOneChannel);

}  // namespace gmp::testing
