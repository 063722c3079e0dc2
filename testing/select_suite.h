// Go's own tests of select and of non-blocking channel operations, ported
// to the course's API and written once for every stage (common/select.h,
// Chan::try_send / try_recv). A stage instantiates it with its Api type:
//
//   INSTANTIATE_TYPED_TEST_SUITE_P(Stage1, SelectSuite, gmp::stage1::Api);
//
// Each test names the Go test it ports (runtime/chan_test.go, test/chan/).
// Behaviour only, never timing: a wait is a channel or wait_until_blocked.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <queue>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/errors.h"
#include "common/select.h"
#include "testing/helpers.h"

namespace gmp::testing {

template <class Api>
class SelectSuite : public ::testing::Test {
 protected:
  template <class T>
  using Chan = typename Api::template Chan<T>;

  static typename Api::Config config(int procs) {
    typename Api::Config c;
    c.procs = procs;
    return c;
  }

};

TYPED_TEST_SUITE_P(SelectSuite);

// chan_test.go TestChan: a non-blocking receive from an empty channel and
// a non-blocking send to a full one do not block, on every capacity; both
// succeed when they can.
TYPED_TEST_P(SelectSuite, NonBlockingOperationsNeverBlock) {
  run_procs<TypeParam>(1, 0, [] {
    for (std::size_t cap : {0u, 1u, 10u}) {
      typename TestFixture::template Chan<int> c(cap);
      std::optional<int> v;
      EXPECT_FALSE(c.try_recv(v)) << "cap " << cap;
      for (std::size_t i = 0; i < cap; ++i) EXPECT_TRUE(c.try_send(int(i)));
      EXPECT_FALSE(c.try_send(99)) << "cap " << cap;
      for (std::size_t i = 0; i < cap; ++i) {
        ASSERT_TRUE(c.try_recv(v));
        EXPECT_EQ(v, std::optional<int>(int(i)));
      }
      EXPECT_EQ(select(recv_case(c, v), default_case), 1);
      EXPECT_EQ(select(send_case(c, 5), default_case),
                cap == 0 ? 1 : 0);
    }
  });
}

// A failed try_send leaves the caller's value where it was (a move-only
// value is not lost); a successful one moves it.
TYPED_TEST_P(SelectSuite, TrySendMovesOnlyWhatItSends) {
  run_procs<TypeParam>(1, 0, [] {
    typename TestFixture::template Chan<std::unique_ptr<int>> c(1);
    auto a = std::make_unique<int>(1);
    auto b = std::make_unique<int>(2);
    EXPECT_TRUE(c.try_send(a));
    EXPECT_EQ(a, nullptr);
    EXPECT_FALSE(c.try_send(b));
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(*b, 2);
    std::optional<std::unique_ptr<int>> got;
    ASSERT_TRUE(c.try_recv(got));
    EXPECT_EQ(**got, 1);
  });
}

// test/chan/nonblock.go: non-blocking operations against a partner that
// blocks, on unbuffered and buffered channels: retried until they go, the
// values arrive in order.
TYPED_TEST_P(SelectSuite, NonBlockingOperationsMeetBlockingPartners) {
  run_procs<TypeParam>(2, 1, [] {
    for (std::size_t cap : {0u, 1u, 16u}) {
      typename TestFixture::template Chan<int> c(cap);
      typename TestFixture::template Chan<bool> done;
      TypeParam::go([&] {
        for (int i = 0; i < 100; ++i) c.send(i);  // blocks as it must
        done.send(true);
      });
      for (int i = 0; i < 100; ++i) {
        std::optional<int> v;
        while (!c.try_recv(v)) TypeParam::yield();
        ASSERT_EQ(v, std::optional<int>(i));
      }
      done.recv();
      TypeParam::go([&] {
        for (int i = 0; i < 100; ++i) ASSERT_EQ(c.recv(), std::optional<int>(i));
        done.send(true);
      });
      for (int i = 0; i < 100; ++i) {
        while (!c.try_send(i)) TypeParam::yield();
      }
      done.recv();
    }
  });
}

// chan_test.go TestNonblockRecvRace, at Go's full size: a non-blocking
// receive on a channel that holds a value, or was closed, must see it.
// As in Go, main does not wait for each goroutine: up to 10,000 are alive
// at once (under ThreadSanitizer each needs a fiber, which TSan counts as
// a thread: stage 2 used to keep a dead goroutine's, past TSan's 8,128).
TYPED_TEST_P(SelectSuite, NonBlockingReceiveSeesAReadyChannel) {
  constexpr int kRounds = 10'000;
  run_procs<TypeParam>(2, 1, [] {
    using Chan = typename TestFixture::template Chan<int>;
    std::vector<std::unique_ptr<Chan>> chans;  // outlive their goroutines
    chans.reserve(kRounds);
    typename TypeParam::WaitGroup wg;
    wg.add(kRounds);
    for (int i = 0; i < kRounds; ++i) {
      Chan& c = *chans.emplace_back(std::make_unique<Chan>(1));
      c.send(1);
      TypeParam::go([&c, &wg] {
        std::optional<int> v;
        if (select(recv_case(c, v), default_case) != 0) {
          ADD_FAILURE() << "chan is not ready";
        }
        wg.done();
      });
      c.close();
      c.recv();
    }
    wg.wait();
  });
}

// chan_test.go TestNonblockSelectRace: of two channels, one holds a value
// at every moment (c2 is filled before c1 is drained): a select with a
// default must take one of them.
TYPED_TEST_P(SelectSuite, NonBlockingSelectSeesOneOfTwoReadyChannels) {
  run_procs<TypeParam>(2, 1, [] {
    for (int i = 0; i < 500; ++i) {
      typename TestFixture::template Chan<int> c1(1), c2(1);
      typename TestFixture::template Chan<bool> done;
      c1.send(1);
      TypeParam::go([&] {
        int r = select(recv_case(c1), recv_case(c2), default_case);
        done.send(r != 2);
      });
      c2.send(1);
      select(recv_case(c1), default_case);
      EXPECT_EQ(done.recv(), std::optional<bool>(true)) << "no chan is ready";
    }
  });
}

// chan_test.go TestNonblockSelectRace2: as above, with close for c2.
TYPED_TEST_P(SelectSuite, NonBlockingSelectSeesAClosedChannel) {
  run_procs<TypeParam>(2, 1, [] {
    for (int i = 0; i < 500; ++i) {
      typename TestFixture::template Chan<int> c1(1), c2;
      typename TestFixture::template Chan<bool> done;
      c1.send(1);
      TypeParam::go([&] {
        int r = select(recv_case(c1), recv_case(c2), default_case);
        done.send(r != 2);
      });
      c2.close();
      select(recv_case(c1), default_case);
      EXPECT_EQ(done.recv(), std::optional<bool>(true)) << "no chan is ready";
    }
  });
}

// chan_test.go TestSelfSelect: two goroutines each select between sending
// to and receiving from the same channel; a goroutine never receives its
// own send (on an unbuffered channel it cannot: the send needs a partner).
TYPED_TEST_P(SelectSuite, SelfSelectNeverReceivesItsOwnSend) {
  run_procs<TypeParam>(2, 2, [] {
    for (std::size_t cap : {0u, 10u}) {
      typename TestFixture::template Chan<int> c(cap);
      typename TypeParam::WaitGroup wg;
      wg.add(2);
      std::atomic<int> self_receives{0};
      for (int p = 0; p < 2; ++p) {
        TypeParam::go([&, p] {
          for (int i = 0; i < 1000; ++i) {
            std::optional<int> v;
            if (select(send_case(c, p), recv_case(c, v)) == 1 && cap == 0 &&
                v == p) {
              self_receives.fetch_add(1);
            }
          }
          wg.done();
        });
      }
      wg.wait();
      EXPECT_EQ(self_receives.load(), 0) << "self receive, cap " << cap;
      std::optional<int> v;
      while (c.try_recv(v)) {
      }
    }
  });
}

// chan_test.go TestSelectStress: four channels, senders and receivers that
// select over all of them, a case set to null (Go's nil channel) once its
// count is done. Every value arrives exactly once.
TYPED_TEST_P(SelectSuite, SelectStressEveryValueArrivesOnce) {
  static constexpr int kN = 2000;
  run_procs<TypeParam>(2, 8, [] {
    using C = typename TestFixture::template Chan<int>;
    C c0, c1, c2(2), c3(3);
    std::vector<std::atomic<int>> seen(4 * kN);
    typename TypeParam::WaitGroup wg;
    wg.add(2);
    TypeParam::go([&] {  // selects over all four until each sent kN
      C* cs[4] = {&c0, &c1, &c2, &c3};
      int sent[4] = {0, 0, 0, 0};
      for (int n = 0; n < 4 * kN; ++n) {
        int r = select(send_case(cs[0], sent[0]), send_case(cs[1], kN + sent[1]),
                       send_case(cs[2], 2 * kN + sent[2]),
                       send_case(cs[3], 3 * kN + sent[3]));
        if (++sent[r] == kN) cs[r] = nullptr;
      }
      wg.done();
    });
    TypeParam::go([&] {  // receives from all four until each gave kN
      C* cs[4] = {&c0, &c1, &c2, &c3};
      int got[4] = {0, 0, 0, 0};
      for (int n = 0; n < 4 * kN; ++n) {
        std::optional<int> v0, v1, v2, v3;
        int r = select(recv_case(cs[0], v0), recv_case(cs[1], v1),
                       recv_case(cs[2], v2), recv_case(cs[3], v3));
        std::optional<int>* vs[4] = {&v0, &v1, &v2, &v3};
        ASSERT_TRUE(vs[r]->has_value());
        int v = **vs[r];
        EXPECT_EQ(v / kN, r);
        EXPECT_EQ(v % kN, got[r]) << "out of order on channel " << r;
        seen[static_cast<std::size_t>(v)].fetch_add(1);
        if (++got[r] == kN) cs[r] = nullptr;
      }
      wg.done();
    });
    wg.wait();
    for (std::size_t i = 0; i < seen.size(); ++i) {
      ASSERT_EQ(seen[i].load(), 1) << "value " << i;
    }
  });
}

// chan_test.go TestSelectFairness: with two ready channels (and two empty
// ones) select picks each about half of the time: within 4.5 sigma of a
// fair coin (the test fails by chance about once in 150,000 runs).
TYPED_TEST_P(SelectSuite, SelectChoosesUniformlyAmongReadyCases) {
  static constexpr int kTrials = 10000;
  run_procs<TypeParam>(1, 0, [] {
    typename TestFixture::template Chan<std::uint8_t> c1(kTrials + 1),
        c2(kTrials + 1), c3, c4;
    for (int i = 0; i < kTrials + 1; ++i) {
      c1.send(1);
      c2.send(2);
    }
    int cnt1 = 0, cnt2 = 0;
    for (int i = 0; i < kTrials; ++i) {
      switch (select(recv_case(c1), recv_case(c2), recv_case(c3),
                     recv_case(c4))) {
        case 0: ++cnt1; break;
        case 1: ++cnt2; break;
        default: ADD_FAILURE() << "an empty channel was chosen";
      }
    }
    double r = double(cnt1) / kTrials;
    EXPECT_LE(std::abs(r - 0.5), 4.5 / std::sqrt(double(kTrials)))
        << "unfair select: in " << kTrials << " trials, results were "
        << cnt1 << ", " << cnt2;
  });
}

// chan_test.go TestSelectDuplicateChannel: a select with two cases on the
// same channel parks on it twice; woken by one, it takes both cases off
// the queue (a later sender on that channel must not find a stale one).
TYPED_TEST_P(SelectSuite, DuplicateChannelCasesLeaveNoStaleWaiter) {
  run_procs<TypeParam>(2, 3, [] {
    using C = typename TestFixture::template Chan<int>;
    C c, d, e;
    TypeParam::go([&] {
      int r = select(recv_case(c), recv_case(d), recv_case(d), recv_case(e));
      EXPECT_TRUE(r == 1 || r == 2) << r;
      e.send(9);
    });
    TypeParam::go([&] { c.recv(); });  // will wait for c's one send
    d.send(7);  // wakes the select through one of its d cases
    EXPECT_EQ(e.recv(), std::optional<int>(9));
    c.send(8);  // must reach the plain receiver, not the done select
  });
}

// test/chan/doubleselect.go: four goroutines each select-receive from the
// same four channels and forward to one; a sender selects over the four.
// Every value arrives exactly once (a select is woken by one case only).
TYPED_TEST_P(SelectSuite, DoubleSelectDeliversEachValueOnce) {
  static constexpr int kIterations = 4000;
  run_procs<TypeParam>(2, 6, [] {
    using C = typename TestFixture::template Chan<int>;
    C c1, c2, c3, c4, out;
    // The multiplexers and the sender: out closes when all are done, so
    // the channels outlive the sender's last close (the multiplexers may
    // all stop at c1's, before it closes c2).
    typename TypeParam::WaitGroup wg;
    wg.add(5);
    TypeParam::go([&] {  // the sender
      for (int i = 1; i <= kIterations; ++i) {
        select(send_case(c1, i), send_case(c2, i), send_case(c3, i),
               send_case(c4, i));
      }
      c1.close();
      c2.close();
      c3.close();
      c4.close();
      wg.done();
    });
    for (int k = 0; k < 4; ++k) {
      TypeParam::go([&] {  // a multiplexer
        for (;;) {
          std::optional<int> v;
          select(recv_case(c1, v), recv_case(c2, v), recv_case(c3, v),
                 recv_case(c4, v));
          if (!v) break;  // closed
          out.send(*v);
        }
        wg.done();
      });
    }
    TypeParam::go([&] {
      wg.wait();
      out.close();
    });
    std::vector<int> seen(kIterations + 1);
    while (auto v = out.recv()) {
      ASSERT_GE(*v, 1);
      ASSERT_LE(*v, kIterations);
      ASSERT_EQ(seen[static_cast<std::size_t>(*v)]++, 0) << "duplicate " << *v;
    }
    for (int i = 1; i <= kIterations; ++i) ASSERT_EQ(seen[i], 1) << i;
  });
}

// test/chan/select3.go: a case on a null channel never fires; a receive
// case on a closed channel always can (ok == false); a send case on a
// closed channel panics, whether closed before or during the wait.
TYPED_TEST_P(SelectSuite, NullClosedAndPanickingCasesBehaveAsGo) {
  run_procs<TypeParam>(2, 1, [] {
    using C = typename TestFixture::template Chan<int>;
    C* nil = nullptr;
    C open, closed;
    closed.close();
    std::optional<int> v = 5;
    EXPECT_EQ(select(recv_case(nil), send_case(nil, 1), default_case), 2);
    EXPECT_EQ(select(recv_case(nil), recv_case(closed, v)), 1);
    EXPECT_EQ(v, std::nullopt);
    EXPECT_THROW(select(send_case(closed, 1), recv_case(open)), Panic);
    C later;
    TypeParam::go([&] { later.close(); });
    try {
      select(send_case(later, 1), recv_case(nil));
      ADD_FAILURE() << "a send case woken by close did not panic";
    } catch (const Panic& p) {
      EXPECT_STREQ(p.what(), "send on closed channel");
    }
  });
}

// test/chan/select.go: a select whose every case waits hands a value to
// the first partner, from either side, and reports the case.
TYPED_TEST_P(SelectSuite, ABlockedSelectIsWokenByEitherSide) {
  run_procs<TypeParam>(2, 1, [] {
    using C = typename TestFixture::template Chan<int>;
    C a, b;
    TypeParam::go([&] { a.send(1); });
    std::optional<int> v;
    std::optional<int> w;
    EXPECT_EQ(select(recv_case(a, v), recv_case(b, w)), 0);
    EXPECT_EQ(v, std::optional<int>(1));
    TypeParam::go([&] { EXPECT_EQ(b.recv(), std::optional<int>(2)); a.send(0); });
    EXPECT_EQ(select(send_case(b, 2), recv_case(b, w)), 0);
    a.recv();
  });
}

// Cases of different element types, and a move-only value: the value a
// send case does not send is dropped with the case, never half-sent.
TYPED_TEST_P(SelectSuite, CasesOfDifferentTypesAndMoveOnlyValues) {
  run_procs<TypeParam>(2, 1, [] {
    typename TestFixture::template Chan<std::string> s;
    typename TestFixture::template Chan<std::unique_ptr<int>> p;
    TypeParam::go([&] { s.send("hello"); });
    std::optional<std::string> got;
    int r = select(recv_case(s, got), send_case(p, std::make_unique<int>(3)));
    EXPECT_EQ(r, 0);
    EXPECT_EQ(got, std::optional<std::string>("hello"));
    TypeParam::go([&] { EXPECT_EQ(**p.recv(), 4); });
    EXPECT_EQ(select(recv_case(s), send_case(p, std::make_unique<int>(4))), 1);
  });
}

// Two goroutines selecting over the same two channels in opposite orders,
// with partners that send to both: no deadlock (lockorder), every value
// arrives once.
TYPED_TEST_P(SelectSuite, OppositeOrdersDoNotDeadlock) {
  static constexpr int kN = 3000;
  run_procs<TypeParam>(2, 4, [] {
    using C = typename TestFixture::template Chan<int>;
    C a, b;
    typename TypeParam::WaitGroup wg;
    std::atomic<int> total{0};
    wg.add(4);
    TypeParam::go([&] {
      for (int i = 0; i < kN; ++i) {
        std::optional<int> v, w;
        select(recv_case(a, v), recv_case(b, w));
        total.fetch_add(v ? *v : *w);
      }
      wg.done();
    });
    TypeParam::go([&] {
      for (int i = 0; i < kN; ++i) {
        std::optional<int> v, w;
        select(recv_case(b, w), recv_case(a, v));
        total.fetch_add(v ? *v : *w);
      }
      wg.done();
    });
    for (int k = 0; k < 2; ++k) {
      TypeParam::go([&] {
        for (int i = 0; i < kN; ++i) select(send_case(a, 1), send_case(b, 1));
        wg.done();
      });
    }
    wg.wait();
    EXPECT_EQ(total.load(), 2 * kN);
  });
}

// Main returning while goroutines wait in selects (and in a select with no
// cases): they unwind, and every queue they waited in is left clean (the
// channels are destroyed after run() without a fatal error).
TYPED_TEST_P(SelectSuite, SelectsWaitingWhenMainReturnsUnwind) {
  using C = typename TestFixture::template Chan<int>;
  C a, b;
  std::atomic<int> unwound{0};
  struct Count {
    std::atomic<int>* n;
    ~Count() { n->fetch_add(1); }
  };
  typename TypeParam::Runtime rt(TestFixture::config(procs_for<TypeParam>(2, 3)));
  rt.run([&] {
    TypeParam::go([&] {
      Count c{&unwound};
      select(recv_case(a), send_case(b, 1), recv_case(b));
    });
    TypeParam::go([&] {
      Count c{&unwound};
      select(recv_case(a), recv_case(a));
    });
    TypeParam::go([&] {
      Count c{&unwound};
      TypeParam::block();
    });
    wait_until_blocked<TypeParam>(rt, 3);
  });
  EXPECT_EQ(unwound.load(), 3);
  EXPECT_EQ(rt.stats().goroutines_exited, 3u);
  EXPECT_TRUE(conserved(rt.stats()));
}

// Stress: many goroutines selecting over shared channels (random cases,
// sends and receives, sometimes a default) while another closes them one
// by one, seeded. Sends on a closed channel panic and are caught; every
// value sent is received once, in a select or when the buffers are
// drained at the end.
TYPED_TEST_P(SelectSuite, StressSelectsWhileChannelsClose) {
  constexpr int kChans = 8;
  // Stage 1's blocked goroutines hold threads: fewer of them there.
  constexpr int kGoroutines = TypeParam::kBlockingHoldsThread ? 100 : 1000;
  constexpr int kRounds = 20;
  for (unsigned seed : {1u, 2u, 3u}) {
    std::atomic<std::int64_t> sent{0}, received{0};
    run_procs<TypeParam>(2, kGoroutines, [&] {
      using C = typename TestFixture::template Chan<int>;
      std::vector<std::unique_ptr<C>> chans;
      constexpr std::size_t kCaps[] = {0, 1, 4};
      for (int i = 0; i < kChans; ++i) {
        chans.push_back(std::make_unique<C>(kCaps[i % 3]));
      }
      typename TypeParam::WaitGroup wg;
      wg.add(kGoroutines);
      for (int g = 0; g < kGoroutines; ++g) {
        TypeParam::go([&, g] {
          std::mt19937 rng(seed * 7919u + static_cast<unsigned>(g));
          for (int r = 0; r < kRounds; ++r) {
            C* a = chans[rng() % kChans].get();
            C* b = chans[rng() % kChans].get();
            C* c = chans[rng() % kChans].get();
            std::optional<int> va, vc;
            try {
              int got = rng() % 4 == 0
                            ? select(recv_case(a, va), send_case(b, 1),
                                     recv_case(c, vc), default_case)
                            : select(recv_case(a, va), send_case(b, 1),
                                     recv_case(c, vc));
              if (got == 1) sent.fetch_add(1);
              if (got == 0 && va) received.fetch_add(*va);
              if (got == 2 && vc) received.fetch_add(*vc);
            } catch (const Panic&) {
              // a send case on a closed channel
            }
          }
          wg.done();
        });
      }
      std::mt19937 rng(seed);
      for (int i = 0; i < kChans; ++i) {  // close them one by one
        TypeParam::sleep_for(std::chrono::microseconds(rng() % 2000));
        chans[static_cast<std::size_t>(i)]->close();
      }
      wg.wait();
      for (auto& ch : chans) {
        while (auto v = ch->recv()) received.fetch_add(*v);
      }
    });
    EXPECT_EQ(sent.load(), received.load()) << "seed " << seed;
  }
}

// A select from a plain thread is a UsageError naming select; one from a
// goroutine of a runtime, on a channel another runtime's goroutine waits
// on, too (a Chan belongs to one runtime at a time).
TYPED_TEST_P(SelectSuite, SelectOutsideAGoroutineIsAUsageError) {
  typename TestFixture::template Chan<int> c(1);
  try {
    select(recv_case(c), default_case);
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("select"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(c.try_send(1), UsageError);
  std::optional<int> v;
  EXPECT_THROW(c.try_recv(v), UsageError);
}

// test/chan/fifo.go: a buffered channel returns values in the order they
// were sent (AsynchFifo); so does an unbuffered one whose senders take
// turns, each goroutine of a daisy chain receiving its own value once the
// one before it has (SynchFifo).
TYPED_TEST_P(SelectSuite, ChannelsArePureFifos) {
  static constexpr int kN = 10;
  using C = typename TestFixture::template Chan<int>;
  run_procs<TypeParam>(2, kN + 1, [] {
    C asynch(kN);
    for (int i = 0; i < kN; ++i) asynch.send(i);
    for (int i = 0; i < kN; ++i) EXPECT_EQ(asynch.recv(), std::optional(i));

    C ch;
    std::vector<std::unique_ptr<C>> links;  // links[i] starts goroutine i
    for (int i = 0; i <= kN; ++i) links.push_back(std::make_unique<C>());
    for (int i = 0; i < kN; ++i) {
      TypeParam::go([&ch, in = links[i].get(), out = links[i + 1].get(), i] {
        in->recv();  // Go's Chain(ch, val, in, out)
        EXPECT_EQ(ch.recv(), std::optional(i));
        out->send(1);
      });
    }
    links[0]->send(0);
    for (int i = 0; i < kN; ++i) ch.send(i);
    links[kN]->recv();
  });
}

// test/chan/sieve2.go: the primes below 100 from an Eratosthenes sieve of
// goroutines over odd candidates: a goroutine per prime sends its odd
// multiples, a heap merges them into one stream of composites, and a proxy
// buffers the primes fed back without bound, through a select whose send
// case is a nil channel while its buffer is empty. The generators run
// forever; main's return unwinds them (each holds the channels it uses).
TYPED_TEST_P(SelectSuite, Sieve2FindsThePrimesBelow100) {
  using C = typename TestFixture::template Chan<int>;
  using CP = std::shared_ptr<C>;
  run_procs<TypeParam>(2, 16, [] {
    // odds() and multiples(p): n, n + step, ... on a buffered channel.
    auto counter = [](int n, int step, std::size_t cap) {
      auto out = std::make_shared<C>(cap);
      TypeParam::go([out, n, step]() mutable {
        for (;; n += step) out->send(n);
      });
      return out;
    };
    auto sendproxy = [](CP out) {
      auto proxy = std::make_shared<C>(10);
      TypeParam::go([out, proxy] {
        std::deque<int> buf;  // Go's expanding ring
        for (;;) {
          C* c = buf.empty() ? nullptr : out.get();  // nil: output off
          std::optional<int> in;
          if (select(recv_case(*proxy, in),
                     send_case(c, buf.empty() ? 0 : buf.front())) == 0) {
            buf.push_back(*in);
          } else {
            buf.pop_front();
          }
        }
      });
      return proxy;
    };
    auto out = std::make_shared<C>(10);
    out->send(2);
    out->send(3);
    auto composites = std::make_shared<C>(50);
    auto primes = std::make_shared<C>(10);
    primes->send(3);
    TypeParam::go([=] {  // merge the multiples into the composites
      struct Peek {
        int head;
        CP ch;
      };
      auto later = [](const Peek& a, const Peek& b) { return a.head > b.head; };
      std::priority_queue<Peek, std::vector<Peek>, decltype(later)> h(later);
      auto next = [&h] {  // Go's heap.Pop, take the next head, heap.Push
        Peek p = h.top();
        h.pop();
        int min = p.head;
        p.head = *p.ch->recv();
        h.push(p);
        return min;
      };
      int min = 15;
      for (;;) {
        int p = *primes->recv();
        CP m = counter(p * p, 2 * p, 10);
        int head = *m->recv();
        while (min < head) {
          composites->send(min);
          min = next();
        }
        while (min == head) min = next();
        composites->send(head);
        h.push({*m->recv(), m});
      }
    });
    TypeParam::go([=] {  // sieve the composites out of the candidates
      CP fed_back = sendproxy(primes);
      CP candidates = counter(5, 2, 50);
      int p = *candidates->recv();
      for (;;) {
        int c = *composites->recv();
        for (; p < c; p = *candidates->recv()) {
          fed_back->send(p);
          out->send(p);
        }
        if (p == c) p = *candidates->recv();
      }
    });
    for (int want : {2,  3,  5,  7,  11, 13, 17, 19, 23, 29, 31, 37, 41,
                     43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97}) {
      EXPECT_EQ(out->recv(), std::optional(want));
    }
  });
}

REGISTER_TYPED_TEST_SUITE_P(
    SelectSuite, NonBlockingOperationsNeverBlock, TrySendMovesOnlyWhatItSends,
    NonBlockingOperationsMeetBlockingPartners,
    NonBlockingReceiveSeesAReadyChannel,
    NonBlockingSelectSeesOneOfTwoReadyChannels,
    NonBlockingSelectSeesAClosedChannel, SelfSelectNeverReceivesItsOwnSend,
    SelectStressEveryValueArrivesOnce, SelectChoosesUniformlyAmongReadyCases,
    DuplicateChannelCasesLeaveNoStaleWaiter, DoubleSelectDeliversEachValueOnce,
    NullClosedAndPanickingCasesBehaveAsGo, ABlockedSelectIsWokenByEitherSide,
    CasesOfDifferentTypesAndMoveOnlyValues, OppositeOrdersDoNotDeadlock,
    SelectsWaitingWhenMainReturnsUnwind, StressSelectsWhileChannelsClose,
    SelectOutsideAGoroutineIsAUsageError, ChannelsArePureFifos,
    Sieve2FindsThePrimesBelow100);

// Death tests of select (gtest runs them first: the name ends in
// DeathTest).
template <class Api>
class SelectDeathTest : public ::testing::Test {};
TYPED_TEST_SUITE_P(SelectDeathTest);

// Goroutines that wait in selects no partner can ever satisfy, one of them
// in `select {}`, one in a select whose every channel is nil: checkdead's
// deadlock, each listed with Go's wait reason ("select (no cases)" only
// for `select {}`: Go's selectgo parks a select of nil channels as
// "select").
TYPED_TEST_P(SelectDeathTest, AllGoroutinesAsleepInSelectsIsADeadlock) {
  auto program = [] {
    run_with<TypeParam>(procs_for<TypeParam>(2, 2), [] {
      typename TypeParam::template Chan<int> a, b;
      typename TypeParam::template Chan<int>* nil = nullptr;
      TypeParam::go([] { TypeParam::block(); });
      TypeParam::go([nil] { select(recv_case(nil), send_case(nil, 2)); });
      select(recv_case(a), send_case(b, 1), recv_case(nil));
    });
  };
  EXPECT_EXIT(program(), ::testing::ExitedWithCode(2),
              "fatal error: all goroutines are asleep - deadlock!\n\n"
              "(.|\n)*goroutine 1 \\[select(, [0-9]+ ms)?\\]"
              "(.|\n)*goroutine 2 \\[select \\(no cases\\)(, [0-9]+ ms)?\\]"
              "(.|\n)*goroutine 3 \\[select(, [0-9]+ ms)?\\]");
}

REGISTER_TYPED_TEST_SUITE_P(SelectDeathTest,
                            AllGoroutinesAsleepInSelectsIsADeadlock);

}  // namespace gmp::testing
