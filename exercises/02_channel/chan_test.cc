// Exercise 02's tests: the buffer, the blocking rules (checked by what the
// other side has done when a call returns, never by how long it took),
// close and its two errors, then many senders and receivers, and close
// racing them, on seeded, randomized interleavings.
#include "exercises/02_channel/chan.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "exercises/testing/harness.h"

namespace gmp::exercises::chan {
namespace {

// Gives a wrong channel time to do what a correct one never does (return
// from a call that must block). Never fails by itself: a correct channel
// passes however long or short this is.
void let_a_wrong_channel_misbehave() {
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

// The message of the ChanError that fn throws, or a description of what
// happened instead.
template <class F>
std::string chan_error_of(F fn) {
  try {
    fn();
  } catch (const ChanError& e) {
    return e.what();
  }
  return "(no ChanError thrown)";
}

// A value of the stress tests: sender s's j-th value.
constexpr int kStride = 1000000;
int value_of(int sender, int j) { return sender * kStride + j; }

// What the receivers got must be: each value that sender s sent
// successfully (its j < sent[s]) exactly once, nothing else, and each
// receiver must have seen each sender's values in the order they were sent.
void check_received(const std::vector<std::vector<int>>& got,
                    const std::vector<int>& sent) {
  const int senders = static_cast<int>(sent.size());
  std::vector<std::vector<int>> times(senders);
  for (int s = 0; s < senders; ++s) times[s].assign(sent[s], 0);
  for (std::size_t r = 0; r < got.size(); ++r) {
    std::vector<int> last(senders, -1);
    for (int v : got[r]) {
      const int s = v / kStride, j = v % kStride;
      ASSERT_TRUE(v >= 0 && s < senders && j < sent[s])
          << "receiver " << r << " got " << v << ", which was never sent"
          << " (or whose send threw)";
      ASSERT_GT(j, last[s]) << "receiver " << r << " got sender " << s
                            << "'s value " << j << " after its value "
                            << last[s] << ": out of order";
      last[s] = j;
      ++times[s][j];
    }
  }
  for (int s = 0; s < senders; ++s) {
    for (int j = 0; j < sent[s]; ++j) {
      ASSERT_EQ(times[s][j], 1) << "sender " << s << "'s value " << j
                                << " was received " << times[s][j] << " times";
    }
  }
}

TEST(Chan, BufferedIsFifoAndCountsLen) {
  Watchdog dog("BufferedIsFifoAndCountsLen", 30);
  Chan unbuffered(0);
  EXPECT_EQ(unbuffered.cap(), 0u);
  EXPECT_EQ(unbuffered.len(), 0u);

  Chan ch(4);
  EXPECT_EQ(ch.cap(), 4u);
  EXPECT_EQ(ch.len(), 0u);
  for (int v = 1; v <= 4; ++v) ch.send(v);  // room for all: none blocks
  EXPECT_EQ(ch.len(), 4u);
  EXPECT_EQ(ch.recv(), 1);
  EXPECT_EQ(ch.recv(), 2);
  EXPECT_EQ(ch.len(), 2u);
  ch.send(5);
  ch.send(6);  // these two wrap around the ring
  EXPECT_EQ(ch.len(), 4u);
  for (int v = 3; v <= 6; ++v) EXPECT_EQ(ch.recv(), v);
  EXPECT_EQ(ch.len(), 0u);
  for (int round = 0; round < 50; ++round) {  // 150 values through 4 slots
    for (int i = 0; i < 3; ++i) ch.send(round * 3 + i);
    for (int i = 0; i < 3; ++i) ASSERT_EQ(ch.recv(), round * 3 + i);
  }
  EXPECT_EQ(ch.cap(), 4u);
}

TEST(Chan, FullBufferBlocksTheNextSendUntilARecv) {
  Watchdog dog("FullBufferBlocksTheNextSendUntilARecv", 30);
  Chan ch(3);
  for (int v = 1; v <= 3; ++v) ch.send(v);
  std::atomic<int> phase{0};  // 1: about to send, 2: send returned
  std::atomic<bool> recv_begun{false};
  bool recv_had_begun = false;  // when the 4th send returned
  std::thread sender([&] {
    phase = 1;
    ch.send(4);
    recv_had_begun = recv_begun.load();
    phase = 2;
  });
  ASSERT_TRUE(eventually([&] { return phase.load() >= 1; }, 10));
  let_a_wrong_channel_misbehave();
  EXPECT_NE(phase.load(), 2)
      << "the 4th send on a full channel of capacity 3 returned, and "
         "nobody has received";
  EXPECT_EQ(ch.len(), 3u)
      << "a full buffer holds cap values; a blocked sender keeps its own";

  recv_begun = true;
  EXPECT_EQ(ch.recv(), 1);
  sender.join();
  EXPECT_TRUE(recv_had_begun)
      << "the blocked send returned before any receive had begun";
  EXPECT_EQ(ch.len(), 3u) << "the blocked sender's value is buffered now";
  for (int v = 2; v <= 4; ++v) EXPECT_EQ(ch.recv(), v);
  EXPECT_EQ(ch.len(), 0u);
}

// A sender and a receiver, each doing `n` operations on an unbuffered
// channel with random delays between them: when send #k returns, receive
// #k must have begun (the value is taken, not parked in a hidden slot).
// Each thread goes on to the end after a violation (the other would block
// for ever otherwise) and the first one is reported.
void rendezvous(std::uint64_t seed, int n) {
  Chan ch(0);
  std::atomic<int> recvs_begun{0};
  std::string early;   // the sender's first violation
  std::string wrong;   // the receiver's first wrong value
  run_threads(2, seed, [&](int who, Chaos& chaos) {
    for (int k = 1; k <= n; ++k) {
      if (who == 0) {
        ch.send(k);
        const int begun = recvs_begun.load();
        if (begun < k && early.empty()) {
          early = "unbuffered send #" + std::to_string(k) + " returned when " +
                  "only " + std::to_string(begun) + " receives had begun";
        }
      } else {
        recvs_begun.fetch_add(1);
        const std::optional<int> v = ch.recv();
        if (v != k && wrong.empty()) {
          wrong = "receive #" + std::to_string(k) + " got " +
                  (v ? std::to_string(*v) : "nullopt");
        }
      }
      chaos.point();
    }
  });
  EXPECT_EQ(early, "");
  EXPECT_EQ(wrong, "");
}

TEST(Chan, UnbufferedSendWaitsForItsReceiver) {
  Watchdog dog("UnbufferedSendWaitsForItsReceiver", 30);
  {  // the sender comes first: it must wait for the receiver
    Chan ch(0);
    std::atomic<int> phase{0};  // 1: about to send, 2: send returned
    std::atomic<bool> receiving{false};
    bool receiver_was_there = false;  // when send returned
    std::thread sender([&] {
      phase = 1;
      ch.send(42);
      receiver_was_there = receiving.load();
      phase = 2;
    });
    ASSERT_TRUE(eventually([&] { return phase.load() >= 1; }, 10));
    let_a_wrong_channel_misbehave();
    EXPECT_NE(phase.load(), 2)
        << "send on an unbuffered channel returned with no receiver";
    EXPECT_EQ(ch.len(), 0u) << "an unbuffered channel buffers nothing";
    receiving = true;
    EXPECT_EQ(ch.recv(), 42);
    sender.join();
    EXPECT_TRUE(receiver_was_there)
        << "send returned before the receiver came";
  }
  {  // the receiver comes first: it must wait for the sender
    Chan ch(0);
    std::atomic<int> phase{0};  // 1: about to receive, 2: recv returned
    std::optional<int> got;
    std::thread receiver([&] {
      phase = 1;
      got = ch.recv();
      phase = 2;
    });
    ASSERT_TRUE(eventually([&] { return phase.load() >= 1; }, 10));
    let_a_wrong_channel_misbehave();
    EXPECT_NE(phase.load(), 2)
        << "recv on an empty channel returned with no sender";
    ch.send(7);
    receiver.join();
    EXPECT_EQ(got, 7);
  }
  for (std::uint64_t seed : stress_seeds(4, "chan.rendezvous")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    rendezvous(seed, 500);
    if (HasFailure()) return;
  }
}

TEST(Chan, CloseDrainsTheBufferThenReportsClosed) {
  Watchdog dog("CloseDrainsTheBufferThenReportsClosed", 30);
  Chan ch(3);
  ch.send(1);
  ch.send(2);
  ch.close();
  EXPECT_EQ(chan_error_of([&] { ch.send(3); }), "send on closed channel");
  EXPECT_EQ(ch.len(), 2u) << "a refused send must not add its value";
  EXPECT_EQ(chan_error_of([&] { ch.close(); }), "close of closed channel");
  EXPECT_EQ(ch.recv(), 1) << "values buffered before close are received";
  EXPECT_EQ(ch.recv(), 2);
  EXPECT_EQ(ch.recv(), std::nullopt) << "closed and drained";
  EXPECT_EQ(ch.recv(), std::nullopt) << "and every time after";
  EXPECT_EQ(ch.len(), 0u);
  EXPECT_EQ(ch.cap(), 3u);

  Chan unbuffered(0);
  unbuffered.close();
  EXPECT_EQ(unbuffered.recv(), std::nullopt);
  EXPECT_EQ(chan_error_of([&] { unbuffered.send(1); }),
            "send on closed channel");
  EXPECT_EQ(chan_error_of([&] { unbuffered.close(); }),
            "close of closed channel");
}

TEST(Chan, CloseWakesBlockedReceiversAndSenders) {
  Watchdog dog("CloseWakesBlockedReceiversAndSenders", 30);
  constexpr int kWaiters = 3;
  for (std::size_t cap : {0, 2}) {
    SCOPED_TRACE(::testing::Message() << "capacity " << cap);
    {  // receivers block on an empty channel; close wakes them
      Chan ch(cap);
      std::atomic<int> about{0};
      std::atomic<int> returned{0};
      std::vector<std::optional<int>> got(kWaiters, -1);
      std::vector<std::thread> receivers;
      for (int i = 0; i < kWaiters; ++i) {
        receivers.emplace_back([&, i] {
          about.fetch_add(1);
          got[i] = ch.recv();
          returned.fetch_add(1);
        });
      }
      ASSERT_TRUE(eventually([&] { return about.load() == kWaiters; }, 10));
      let_a_wrong_channel_misbehave();
      EXPECT_EQ(returned.load(), 0)
          << "recv on an empty channel returned with no sender";
      ch.close();
      for (std::thread& t : receivers) t.join();
      for (int i = 0; i < kWaiters; ++i) {
        EXPECT_EQ(got[i], std::nullopt) << "receiver " << i;
      }
    }
    {  // senders block on a full channel; close makes them fail
      Chan ch(cap);
      for (std::size_t i = 0; i < cap; ++i) ch.send(10 + static_cast<int>(i));
      std::atomic<int> about{0};
      std::atomic<int> returned{0};
      std::vector<std::string> error(kWaiters);
      std::vector<std::thread> senders;
      for (int i = 0; i < kWaiters; ++i) {
        senders.emplace_back([&, i] {
          about.fetch_add(1);
          error[i] = chan_error_of([&] { ch.send(100 + i); });
          returned.fetch_add(1);
        });
      }
      ASSERT_TRUE(eventually([&] { return about.load() == kWaiters; }, 10));
      let_a_wrong_channel_misbehave();
      EXPECT_EQ(returned.load(), 0)
          << "send on a full channel returned with no receiver";
      ch.close();
      for (std::thread& t : senders) t.join();
      for (int i = 0; i < kWaiters; ++i) {
        EXPECT_EQ(error[i], "send on closed channel") << "sender " << i;
      }
      for (std::size_t i = 0; i < cap; ++i) {
        EXPECT_EQ(ch.recv(), 10 + static_cast<int>(i))
            << "buffered values stay after close";
      }
      EXPECT_EQ(ch.recv(), std::nullopt)
          << "the blocked senders' values were never sent";
    }
  }
}

// Blocked threads are served oldest first (Go's waitq is a FIFO queue).
// kQueued threads block one after the other, each given time to queue
// before the next starts; then the test serves them and each records what
// it got. Whether a thread has queued cannot be seen from outside, so a
// round whose order is wrong is retried with longer gaps: a correct channel
// needs one round in which each thread queued within its gap, a channel
// that serves the newest first fails every round.
constexpr int kQueued = 3;

// One round: receivers (serve_senders false) or senders block on `cap`
// slots, started `gap` apart. Returns true if the i-th to block got the
// i-th value sent (receivers), or the i-th to block had its value received
// i-th after the buffered ones (senders).
bool served_in_order(std::size_t cap, bool serve_senders,
                     std::chrono::milliseconds gap) {
  Chan ch(cap);
  for (std::size_t i = 0; serve_senders && i < cap; ++i) {
    ch.send(-1 - static_cast<int>(i));  // fill the buffer
  }
  std::vector<std::optional<int>> got(kQueued);
  std::atomic<int> about{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < kQueued; ++i) {
    waiters.emplace_back([&, i] {
      about.fetch_add(1);
      if (serve_senders) {
        ch.send(i);
      } else {
        got[i] = ch.recv();
      }
    });
    EXPECT_TRUE(eventually([&] { return about.load() == i + 1; }, 10));
    std::this_thread::sleep_for(gap);  // time to queue, before the next
  }
  bool in_order = true;
  if (serve_senders) {
    for (std::size_t i = 0; i < cap; ++i) {
      EXPECT_EQ(ch.recv(), -1 - static_cast<int>(i)) << "buffered values first";
    }
    for (int i = 0; i < kQueued; ++i) in_order &= ch.recv() == i;
  } else {
    for (int i = 0; i < kQueued; ++i) ch.send(100 + i);
  }
  for (std::thread& t : waiters) t.join();
  for (int i = 0; !serve_senders && i < kQueued; ++i) {
    in_order &= got[i] == 100 + i;
  }
  return in_order;
}

TEST(Chan, BlockedThreadsAreServedOldestFirst) {
  Watchdog dog("BlockedThreadsAreServedOldestFirst", 30);
  for (std::size_t cap : {0, 2}) {
    for (bool senders : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "capacity " << cap << ", blocked "
                                        << (senders ? "senders" : "receivers"));
      bool in_order = false;
      for (int gap_ms = 20; gap_ms <= 160 && !in_order; gap_ms *= 2) {
        in_order = served_in_order(cap, senders,
                                   std::chrono::milliseconds(gap_ms));
      }
      EXPECT_TRUE(in_order)
          << kQueued << " threads blocked one after the other, and were "
          << "not served in that order (four rounds): recvq_ and sendq_ "
          << "are FIFO queues, the oldest waiter first";
    }
  }
}

// Three senders send kPerSender values each; three receivers receive until
// the channel is closed, which the last sender to finish does.
void many_senders_many_receivers(std::uint64_t seed, std::size_t cap) {
  constexpr int kSenders = 3, kReceivers = 3, kPerSender = 300;
  Chan ch(cap);
  std::atomic<int> senders_left{kSenders};
  std::vector<std::vector<int>> got(kReceivers);  // each by its receiver
  run_threads(kSenders + kReceivers, seed, [&](int who, Chaos& chaos) {
    if (who < kSenders) {
      for (int j = 0; j < kPerSender; ++j) {
        ch.send(value_of(who, j));
        chaos.point();
      }
      if (senders_left.fetch_sub(1) == 1) ch.close();
      return;
    }
    std::vector<int>& mine = got[who - kSenders];
    while (std::optional<int> v = ch.recv()) {
      mine.push_back(*v);
      chaos.point();
    }
  });
  check_received(got, std::vector<int>(kSenders, kPerSender));
}

TEST(ChanStress, ManySendersManyReceiversEachValueOnce) {
  const std::size_t caps[] = {0, 1, 3, 16};
  int i = 0;
  for (std::uint64_t seed : stress_seeds(24, "chan.mpmc")) {
    const std::size_t cap = caps[i++ % 4];
    SCOPED_TRACE(::testing::Message() << "seed " << seed << ", capacity "
                                      << cap);
    Watchdog dog("one iteration of ManySendersManyReceiversEachValueOnce", 30);
    many_senders_many_receivers(seed, cap);
    if (HasFailure()) return;
  }
}

// Two senders send until their send throws; two receivers receive until
// they see "closed"; two closers close at once after a random number of
// values went across. Exactly one close succeeds; what was received is
// exactly what was sent without an error.
void close_races(std::uint64_t seed, std::size_t cap) {
  constexpr int kSenders = 2, kReceivers = 2, kClosers = 2;
  Chaos pick(seed);
  const int close_after = static_cast<int>(pick.below(200));
  Chan ch(cap);
  std::atomic<int> received{0};
  std::atomic<int> closes{0};
  std::vector<int> sent(kSenders, 0);                // each by its sender
  std::vector<std::vector<int>> got(kReceivers);     // each by its receiver
  std::vector<std::string> close_error(kClosers);    // each by its closer
  run_threads(kSenders + kReceivers + kClosers, seed,
              [&](int who, Chaos& chaos) {
    if (who < kSenders) {
      for (int j = 0;; ++j) {
        try {
          ch.send(value_of(who, j));
        } catch (const ChanError& e) {
          EXPECT_STREQ(e.what(), "send on closed channel");
          sent[who] = j;
          return;
        }
        chaos.point();
      }
    }
    if (who < kSenders + kReceivers) {
      std::vector<int>& mine = got[who - kSenders];
      while (std::optional<int> v = ch.recv()) {
        mine.push_back(*v);
        received.fetch_add(1);
        chaos.point();
      }
      return;
    }
    while (received.load() < close_after) chaos.point();
    try {
      ch.close();
      closes.fetch_add(1);
    } catch (const ChanError& e) {
      close_error[who - kSenders - kReceivers] = e.what();
    }
  });
  ASSERT_EQ(closes.load(), 1) << "exactly one of two racing closes succeeds";
  for (const std::string& e : close_error) {
    if (!e.empty()) {
      EXPECT_EQ(e, "close of closed channel");
    }
  }
  check_received(got, sent);
}

TEST(ChanStress, CloseRacesBlockedSendersAndReceivers) {
  int i = 0;
  for (std::uint64_t seed : stress_seeds(40, "chan.close_races")) {
    const std::size_t cap = i++ % 2 == 0 ? 0 : 2;
    SCOPED_TRACE(::testing::Message() << "seed " << seed << ", capacity "
                                      << cap);
    Watchdog dog("one iteration of CloseRacesBlockedSendersAndReceivers", 30);
    close_races(seed, cap);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace gmp::exercises::chan
