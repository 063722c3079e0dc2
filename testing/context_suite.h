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

// Note 003's loop: select on ctx.done() and a ticker, until the context's
// deadline ends it. Many goroutines waiting on one done() all wake.
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
    int ticks = 0;
    for (;;) {
      int r = select(recv_case(ctx->done()), recv_case(ticker.c()));
      if (r == 0) break;
      ++ticks;
    }
    EXPECT_GE(ticks, 1);
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

REGISTER_TYPED_TEST_SUITE_P(ContextSuite, BackgroundIsNeverDone,
                            CancelReachesEveryDescendant,
                            ChildFinishesFirstAndBornCancelled,
                            DeadlinesCancelWithDeadlineExceeded,
                            CancelBeforeTheDeadlineStopsTheTimer,
                            SelectOnDoneAndATicker,
                            CancelOutsideAGoroutineIsAUsageError);

}  // namespace gmp::testing
