// Exercise 10's tests: the read semaphore by hand, then reads over real
// pipes and epoll (data already there, a park until the poller runs, a
// close), then seeded stress runs where readiness and closes race with
// readers on their way to park.
#include "exercises/10_netpoll_park/netpoll.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "exercises/testing/harness.h"
#include "exercises/testing/skeleton.h"

namespace gmp::exercises::netpoll {
namespace {

// A pipe, both ends non-blocking. The test owns both ends.
struct Pipe {
  int r = -1;
  int w = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) {
      std::perror("pipe2");
      std::abort();
    }
    r = fds[0];
    w = fds[1];
  }
  ~Pipe() {
    ::close(r);
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;

  // Writes all n bytes at once (n <= PIPE_BUF: atomic); false if the pipe
  // took fewer (it never fills in these tests).
  bool write(const void* buf, std::size_t n) {
    return ::write(w, buf, n) == static_cast<ssize_t>(n);
  }
  bool write(const std::string& s) { return write(s.data(), s.size()); }
  void close_write() {
    if (w >= 0) ::close(w);
    w = -1;
  }
};

// One call of the exercise's code that may block, on a thread of its own.
// If the test ends while it is still blocked (a failure), the destructor
// frees it (marks pd closing and unparks `self`), so that a wrong answer
// fails the test instead of hanging it; if even that fails, it ends the
// process with a message.
class Async {
 public:
  Async(PollDesc* pd, Parker& self, std::function<std::size_t()> call)
      : pd_(pd), self_(self), thread_([this, call = std::move(call)] {
          try {
            result_ = call();
          } catch (const ClosedError&) {
            closed_ = true;
          } catch (const std::exception& e) {
            error_ = e.what();
          }
          finished_.store(true, std::memory_order_release);
        }) {}

  ~Async() {
    if (!finished()) {
      ADD_FAILURE() << "the call was still blocked at the end of the test";
      bool freed = eventually([this] {
        pd_->closing.store(true);
        if (self_.parked()) self_.unpark();
        return finished();
      }, 10.0);
      if (!freed) {
        std::fprintf(stderr, "FATAL: a reader thread stays blocked even after "
                             "its PollDesc was closed and it was unparked\n");
        std::_Exit(1);
      }
    }
    thread_.join();
  }

  bool finished() const { return finished_.load(std::memory_order_acquire); }
  // After finished():
  std::size_t result() const { return result_; }
  bool closed() const { return closed_; }
  const std::string& error() const { return error_; }
  std::string describe() const {
    if (!finished()) return "still blocked";
    if (closed_) return "threw ClosedError";
    if (!error_.empty()) return "threw: " + error_;
    return "returned " + std::to_string(result_);
  }

 private:
  PollDesc* pd_;
  Parker& self_;
  std::size_t result_ = 0;
  bool closed_ = false;
  std::string error_;
  std::atomic<bool> finished_{false};
  std::thread thread_;  // last: starts once the fields above exist
};

// Waits until the call has parked (or ended, which the caller reports).
bool parks(const Async& a, const Parker& self) {
  return eventually([&] { return self.parked() || a.finished(); }, 10.0) &&
         !a.finished();
}

// ---- The read semaphore by hand ----------------------------------------------------

TEST(Netpoll, ReadySemaphoreByHand) {
  int stray = Parker::stray_wakes();
  PollDesc pd;  // no descriptor: the state machine alone
  Parker self;
  EXPECT_EQ(netpollunblock(&pd, true), nullptr) << "nobody waits: nobody to wake";
  EXPECT_EQ(netpollunblock(&pd, true), nullptr) << "two edges, still one token";
  {
    Async a(&pd, self, [&] { return netpollblock(&pd, self) ? 1 : 0; });
    ASSERT_TRUE(eventually([&] { return a.finished(); }, 10.0))
        << "a pending token must be consumed without parking";
    EXPECT_EQ(a.describe(), "returned 1") << "a consumed token: true";
  }
  EXPECT_EQ(self.parks(), 0) << "consuming a token must not park";
  EXPECT_EQ(netpollunblock(&pd, false), nullptr)
      << "an unblock without readiness, with nobody waiting, leaves nothing";

  // No token now: the next netpollblock parks until netpollunblock hands
  // its Parker out; woken with readiness, it returns true.
  {
    Async a(&pd, self, [&] { return netpollblock(&pd, self) ? 1 : 0; });
    ASSERT_TRUE(parks(a, self))
        << "with no token pending, netpollblock must park; it " << a.describe();
    Parker* w = netpollunblock(&pd, true);
    EXPECT_EQ(w, &self) << "netpollunblock must return the parked reader";
    if (w != nullptr) w->unpark();
    ASSERT_TRUE(eventually([&] { return a.finished(); }, 10.0));
    EXPECT_EQ(a.describe(), "returned 1") << "woken by readiness: true";
  }
  // Woken without readiness (a close), it returns false.
  {
    Async a(&pd, self, [&] { return netpollblock(&pd, self) ? 1 : 0; });
    ASSERT_TRUE(parks(a, self))
        << "the readiness was consumed by the wake: this one must park; it "
        << a.describe();
    Parker* w = netpollunblock(&pd, false);
    EXPECT_EQ(w, &self) << "netpollunblock(pd, false) must return the parked reader";
    if (w != nullptr) w->unpark();
    ASSERT_TRUE(eventually([&] { return a.finished(); }, 10.0));
    EXPECT_EQ(a.describe(), "returned 0") << "woken without readiness: false";
  }
  EXPECT_EQ(self.parks(), 2);
  EXPECT_EQ(Parker::stray_wakes(), stray);
}

// ---- Reads over a pipe ----------------------------------------------------------

TEST(Netpoll, DataAlreadyPresentIsReadWithoutParking) {
  Netpoller np;
  Pipe p;
  PollDesc* pd = np.open(p.r);
  Parker self;
  char buf[16] = {};
  ASSERT_TRUE(p.write("hello"));
  {
    Async a(pd, self, [&] { return fd_read(pd, buf, sizeof buf, self); });
    ASSERT_TRUE(eventually([&] { return a.finished(); }, 10.0))
        << "data is there: fd_read must return it at once, without the poller";
    ASSERT_EQ(a.describe(), "returned 5");
    EXPECT_EQ(std::string(buf, 5), "hello");
  }
  ASSERT_TRUE(p.write("ab"));
  p.close_write();
  std::string got;
  for (int i = 0; i < 3; ++i) {  // 1 byte at a time, then end of file
    Async a(pd, self, [&] { return fd_read(pd, buf, 1, self); });
    ASSERT_TRUE(eventually([&] { return a.finished(); }, 10.0))
        << "read " << i << " must not wait: data or end of file is there";
    ASSERT_EQ(a.describe(), i < 2 ? "returned 1" : "returned 0") << "read " << i;
    if (i < 2) got += buf[0];
  }
  EXPECT_EQ(got, "ab");
  EXPECT_EQ(self.parks(), 0) << "nothing had to wait: nothing may park";
}

TEST(Netpoll, ReaderParksUntilWriteAndPoll) {
  int stray = Parker::stray_wakes();
  Netpoller np;
  Pipe p;
  PollDesc* pd = np.open(p.r);
  Parker self;
  char buf[64] = {};
  {
    Async a(pd, self, [&] { return fd_read(pd, buf, sizeof buf, self); });
    ASSERT_TRUE(parks(a, self))
        << "an empty pipe: fd_read must park; it " << a.describe();
    ASSERT_TRUE(p.write("ping"));
    EXPECT_EQ(np.netpoll(5000), 1) << "the poller must wake the parked reader";
    ASSERT_TRUE(eventually([&] { return a.finished(); }, 10.0));
    ASSERT_EQ(a.describe(), "returned 4");
    EXPECT_EQ(std::string(buf, 4), "ping");
  }
  // The writer goes away: a hang-up, which must wake the reader too.
  {
    Async a(pd, self, [&] { return fd_read(pd, buf, sizeof buf, self); });
    ASSERT_TRUE(parks(a, self))
        << "the pipe is empty again: fd_read must park; it " << a.describe();
    p.close_write();
    EXPECT_EQ(np.netpoll(5000), 1)
        << "a hang-up (the write end closed) makes the descriptor readable";
    ASSERT_TRUE(eventually([&] { return a.finished(); }, 10.0));
    EXPECT_EQ(a.describe(), "returned 0") << "end of file";
  }
  EXPECT_EQ(self.parks(), 2);
  EXPECT_EQ(Parker::stray_wakes(), stray);
}

TEST(Netpoll, CloseWakesAParkedReader) {
  int stray = Parker::stray_wakes();
  Netpoller np;
  Pipe p;
  PollDesc* pd = np.open(p.r);
  Parker self;
  char buf[64] = {};
  {
    Async a(pd, self, [&] { return fd_read(pd, buf, sizeof buf, self); });
    ASSERT_TRUE(parks(a, self))
        << "an empty pipe: fd_read must park; it " << a.describe();
    pollunblock(pd);
    ASSERT_TRUE(eventually([&] { return a.finished(); }, 10.0))
        << "pollunblock must wake the parked reader";
    EXPECT_TRUE(a.closed()) << "the woken read must throw ClosedError; it "
                            << a.describe();
  }
  // Closed stays closed: even with data there, reads fail at once, and
  // netpollblock returns false without parking.
  ASSERT_TRUE(p.write("late"));
  Parker other;
  {
    Async a(pd, other, [&] { return fd_read(pd, buf, sizeof buf, other); });
    ASSERT_TRUE(eventually([&] { return a.finished(); }, 10.0));
    EXPECT_TRUE(a.closed()) << "a read of a closing descriptor must throw "
                               "ClosedError; it " << a.describe();
  }
  {
    Async a(pd, other, [&] { return netpollblock(pd, other) ? 1 : 0; });
    ASSERT_TRUE(eventually([&] { return a.finished(); }, 10.0))
        << "netpollblock must not park on a closing descriptor";
    EXPECT_EQ(a.describe(), "returned 0");
  }
  EXPECT_NO_THROW(pollunblock(pd)) << "a second close is harmless";
  EXPECT_EQ(other.parks(), 0);
  // A close hands out the parked reader with rg back to nil, not a token:
  // netpollblock, woken by it, returns false (fd_read's retry alone would
  // not tell).
  {
    PollDesc bare;  // no descriptor: the state machine alone
    Parker third;
    Async a(&bare, third, [&] { return netpollblock(&bare, third) ? 1 : 0; });
    ASSERT_TRUE(parks(a, third))
        << "no token pending: netpollblock must park; it " << a.describe();
    pollunblock(&bare);
    ASSERT_TRUE(eventually([&] { return a.finished(); }, 10.0))
        << "pollunblock must wake the parked reader";
    EXPECT_EQ(a.describe(), "returned 0")
        << "woken by a close, not by readiness: false (a close leaves no "
           "token)";
  }
  EXPECT_EQ(Parker::stray_wakes(), stray);
}

// ---- Stress: many pipes, writers, readers and a poller -----------------------------

// What the threads of one stress run report.
class Failures {
 public:
  void add(const std::string& what) {
    std::lock_guard lk(mu_);
    if (messages_.size() < 10) messages_.push_back(what);
    any_.store(true, std::memory_order_release);
  }
  bool any() const { return any_.load(std::memory_order_acquire); }
  std::vector<std::string> messages() {
    std::lock_guard lk(mu_);
    return messages_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> messages_;  // protected by mu_
  std::atomic<bool> any_{false};
};

// One pipe and its reader.
struct Lane {
  Pipe pipe;
  PollDesc* pd = nullptr;
  Parker parker;                          // the reader's
  std::atomic<std::uint32_t> received{0};  // messages the reader checked
  std::atomic<bool> done{false};          // the reader has returned
  std::atomic<bool> closed{false};        // pollunblock was called on it
};

std::vector<std::unique_ptr<Lane>> make_lanes(Netpoller& np, int n) {
  std::vector<std::unique_ptr<Lane>> lanes;
  for (int i = 0; i < n; ++i) {
    lanes.push_back(std::make_unique<Lane>());
    lanes.back()->pd = np.open(lanes.back()->pipe.r);
  }
  return lanes;
}

// The reader of lane `i`: reads 4-byte sequence numbers, in pieces of
// random sizes, and checks that they come in order, each once. Ends with
// a ClosedError (expected if `closes_expected`) or after `count` messages.
void read_lane(int i, Lane& lane, std::uint32_t count, bool closes_expected,
               Chaos& chaos, Failures& failures, const std::atomic<bool>& stop) {
  std::uint32_t expect = 0;
  unsigned char part[4];
  std::size_t have = 0;
  try {
    while (closes_expected || expect < count) {
      unsigned char buf[16];
      std::size_t want = 1 + chaos.below(sizeof buf);
      std::size_t n = fd_read(lane.pd, buf, want, lane.parker);
      if (n == 0 || n > want) {
        failures.add("lane " + std::to_string(i) + ": fd_read returned " +
                     std::to_string(n) + " of " + std::to_string(want) +
                     " bytes (the pipe is open and the writer has more)");
        break;
      }
      for (std::size_t k = 0; k < n; ++k) {
        part[have++] = buf[k];
        if (have < sizeof part) continue;
        have = 0;
        std::uint32_t seq;
        std::memcpy(&seq, part, sizeof seq);
        if (seq != expect) {
          throw std::runtime_error("message " + std::to_string(seq) + " where " +
                                   std::to_string(expect) +
                                   " was due: a read returned bytes twice, or lost some");
        }
        ++expect;
      }
      // release: the writer may send more once it sees this (acquire).
      lane.received.store(expect, std::memory_order_release);
      chaos.point();
    }
  } catch (const ClosedError&) {
    if (!lane.closed.load() && !stop.load()) {
      failures.add("lane " + std::to_string(i) + ": ClosedError, but nobody closed it");
    }
  } catch (const std::exception& e) {
    failures.add("lane " + std::to_string(i) + " (reader): " + e.what());
  }
  lane.done.store(true, std::memory_order_release);
}

// Writes messages [from, from + k) to the lane's pipe in one write.
bool write_messages(Lane& lane, std::uint32_t from, std::uint32_t k) {
  std::uint32_t msg[4];
  for (std::uint32_t j = 0; j < k; ++j) msg[j] = from + j;
  return lane.pipe.write(msg, k * sizeof msg[0]);
}

// The watchdog of a stress run: waits for the readers (a liveness
// deadline, not a speed goal), reports the stuck ones through `stuck`,
// then stops the run and frees any reader still blocked: first the
// exercise's own pollunblock, then by force (closing + unpark). Ends the
// process if even that cannot free them.
void watch(std::vector<std::unique_ptr<Lane>>& lanes, Failures& failures,
           std::atomic<bool>& stop,
           const std::function<std::string(int, const Lane&)>& stuck) {
  auto all_done = [&] {
    return std::all_of(lanes.begin(), lanes.end(),
                       [](const auto& l) { return l->done.load(); });
  };
  bool ok = eventually([&] { return all_done() || failures.any(); }, 20.0);
  if (!ok) {
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      if (!lanes[i]->done.load()) {
        failures.add("lane " + std::to_string(i) + ": " + stuck(static_cast<int>(i), *lanes[i]));
      }
    }
  }
  stop.store(true);
  for (auto& l : lanes) {
    if (l->done.load()) continue;
    try {
      pollunblock(l->pd);
    } catch (const std::exception&) {  // not written yet, or broken
    }
  }
  bool freed = eventually([&] {
    for (auto& l : lanes) {
      if (l->done.load() || !l->parker.parked()) continue;
      l->pd->closing.store(true);
      l->parker.unpark();
    }
    return all_done();
  }, 10.0);
  if (!freed) {
    std::fprintf(stderr, "FATAL: reader threads stay blocked even after their "
                         "PollDescs were closed and they were unparked\n");
    std::_Exit(1);
  }
}

// The run's body on every thread: Chaos in the provided code too, and an
// exception becomes a failure.
void guarded(Chaos& chaos, Failures& failures, const char* who,
             const std::function<void()>& body) {
  chaos_hook = [&chaos] { chaos.point(); };
  try {
    body();
  } catch (const std::exception& e) {
    failures.add(std::string(who) + ": " + e.what());
  }
  chaos_hook = nullptr;
}

// The poller thread: polls with short timeouts until the run stops.
void poll_until(Netpoller& np, Chaos& chaos, const std::atomic<bool>& stop) {
  while (!stop.load()) {
    np.netpoll(static_cast<int>(1 + chaos.below(4)));
    chaos.point();
  }
}

std::string parked_or_not(const Lane& l) {
  return l.parker.parked() ? "it is parked" : "it is not parked";
}

// kLanes pipes, a reader each, kWriters writers and one poller. A writer
// sends a lane's next messages only once its reader has checked all the
// earlier ones: each write is then the last one for a while, so a
// readiness edge that the reader misses is never made up for by a later
// write, and the reader stays asleep for good: the watchdog reports it.
void no_lost_wakeups(std::uint64_t seed) {
  constexpr int kLanes = 6;
  constexpr int kWriters = 2;
  constexpr std::uint32_t kMessages = 150;
  int stray = Parker::stray_wakes();
  Netpoller np;
  auto lanes = make_lanes(np, kLanes);
  Failures failures;
  std::atomic<bool> stop{false};
  run_threads(2 + kWriters + kLanes, seed, [&](int who, Chaos& chaos) {
    if (who == 0) {
      watch(lanes, failures, stop, [&](int, const Lane& l) {
        return "the reader is stuck after " + std::to_string(l.received.load()) +
               " of " + std::to_string(kMessages) + " messages and " +
               parked_or_not(l) +
               ": a wake-up was lost (readiness came between its EAGAIN "
               "and its park, and nobody woke it)";
      });
    } else if (who == 1) {
      guarded(chaos, failures, "poller", [&] { poll_until(np, chaos, stop); });
    } else if (who < 2 + kWriters) {
      int w = who - 2;
      guarded(chaos, failures, "writer", [&] {
        std::vector<std::uint32_t> sent(kLanes, 0);
        for (bool all = false; !all && !stop.load();) {
          all = true;
          for (int i = w; i < kLanes; i += kWriters) {
            Lane& l = *lanes[i];
            if (sent[i] == kMessages) continue;
            all = false;
            // acquire: pairs with the reader's release of its count.
            if (l.received.load(std::memory_order_acquire) != sent[i]) continue;
            std::uint32_t k = chaos.below(4) == 0 ? 1 + chaos.below(3) : 1;
            k = std::min(k, kMessages - sent[i]);
            if (!write_messages(l, sent[i], k)) throw std::runtime_error("pipe full");
            sent[i] += k;
            chaos.point();
          }
          std::this_thread::yield();
        }
      });
    } else {
      int i = who - 2 - kWriters;
      guarded(chaos, failures, "reader", [&] {
        read_lane(i, *lanes[i], kMessages, false, chaos, failures, stop);
      });
    }
  });
  for (const std::string& m : failures.messages()) ADD_FAILURE() << m;
  for (int i = 0; i < kLanes; ++i) {
    EXPECT_EQ(lanes[i]->received.load(), kMessages) << "lane " << i;
  }
  EXPECT_EQ(Parker::stray_wakes(), stray)
      << "unpark() of a reader that had not parked, or twice";
}

TEST(NetpollStress, NoWakeupIsLost) {
  for (std::uint64_t seed : stress_seeds(8, "netpoll.no_lost_wakeups")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    no_lost_wakeups(seed);
    if (HasFailure()) return;
  }
}

// Free-running writers, a poller, and a closer that closes each lane at a
// random moment: mostly once the reader has everything (it is then on its
// way to park, or parked, with nothing more to come), else mid-stream.
// Every reader must end with ClosedError, having read its messages in
// order, each once.
void close_races_with_parking(std::uint64_t seed) {
  constexpr int kLanes = 8;
  constexpr int kWriters = 2;
  constexpr std::uint32_t kMessages = 60;
  int stray = Parker::stray_wakes();
  Netpoller np;
  auto lanes = make_lanes(np, kLanes);
  Failures failures;
  std::atomic<bool> stop{false};
  run_threads(3 + kWriters + kLanes, seed, [&](int who, Chaos& chaos) {
    if (who == 0) {
      watch(lanes, failures, stop, [&](int, const Lane& l) {
        if (!l.closed.load()) {
          return "the reader is stuck after " + std::to_string(l.received.load()) +
                 " of " + std::to_string(kMessages) + " messages, before its close, and " +
                 parked_or_not(l) + ": a readiness wake-up was lost";
        }
        return "closed after " + std::to_string(l.received.load()) +
               " messages, but the reader never returned, and " + parked_or_not(l) +
               ": the close's wake-up was lost (a close between its EAGAIN and "
               "its park must stop the park)";
      });
    } else if (who == 1) {
      guarded(chaos, failures, "poller", [&] { poll_until(np, chaos, stop); });
    } else if (who == 2) {
      guarded(chaos, failures, "closer", [&] {
        std::vector<int> order(kLanes);
        for (int i = 0; i < kLanes; ++i) order[i] = i;
        for (int i = kLanes - 1; i > 0; --i) std::swap(order[i], order[chaos.below(i + 1)]);
        for (int i : order) {
          Lane& l = *lanes[i];
          std::uint32_t at = chaos.below(4) != 0 ? kMessages : chaos.below(kMessages);
          while (l.received.load() < at && !stop.load()) std::this_thread::yield();
          if (stop.load()) return;
          chaos.point();
          l.closed.store(true);
          pollunblock(l.pd);
        }
      });
    } else if (who < 3 + kWriters) {
      int w = who - 3;
      guarded(chaos, failures, "writer", [&] {
        for (std::uint32_t sent = 0; sent < kMessages && !stop.load();) {
          std::uint32_t k = std::min<std::uint32_t>(1 + chaos.below(4), kMessages - sent);
          for (int i = w; i < kLanes; i += kWriters) {
            if (!write_messages(*lanes[i], sent, k)) throw std::runtime_error("pipe full");
          }
          sent += k;
          chaos.point();
        }
      });
    } else {
      int i = who - 3 - kWriters;
      guarded(chaos, failures, "reader", [&] {
        read_lane(i, *lanes[i], kMessages, true, chaos, failures, stop);
      });
    }
  });
  for (const std::string& m : failures.messages()) ADD_FAILURE() << m;
  EXPECT_EQ(Parker::stray_wakes(), stray)
      << "unpark() of a reader that had not parked, or twice";
}

TEST(NetpollStress, CloseRacesWithParking) {
  for (std::uint64_t seed : stress_seeds(16, "netpoll.close_races")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    close_races_with_parking(seed);
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace gmp::exercises::netpoll
