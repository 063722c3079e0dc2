// The network poller and the net API: many connections, partial reads and
// writes, deadlines, close while waiting, end of file and errors, running
// out of descriptors, misuse, and exit while goroutines wait on I/O.
#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "stage3_gmp/conservation_watch.h"
#include "stage4_syscalls/net.h"
#include "stage4_syscalls/runtime.h"
#include "stage4_syscalls/test_config.h"

namespace gmp::stage4 {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

int open_fds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n - 1;  // the directory's own descriptor
}

// Reads exactly n bytes (or fewer at end of file).
std::string read_n(Conn& c, std::size_t n) {
  std::string out(n, '\0');
  std::size_t got = 0;
  while (got < n) {
    std::size_t r = c.read(out.data() + got, n - got);
    if (r == 0) break;
    got += r;
  }
  out.resize(got);
  return out;
}

// Echo: 200 clients at once, each sends lines and reads them back.
TEST(NetTest, EchoServerWithManyConcurrentConnections) {
  const int fds_before = open_fds();
  Runtime rt(procs(2));
  std::atomic<int> ok{0};
  rt.run([&] {
    Listener l = listen("127.0.0.1:0");
    constexpr int kClients = 200;
    go([&] {
      for (int i = 0; i < kClients; ++i) {
        auto c = std::make_shared<Conn>(l.accept());
        go([c] {
          char buf[512];
          while (std::size_t n = c->read(buf, sizeof buf)) c->write(buf, n);
        });
      }
    });
    WaitGroup wg;
    wg.add(kClients);
    for (int i = 0; i < kClients; ++i) {
      go([&, i] {
        Conn c = dial("127.0.0.1:" + std::to_string(l.port()));
        for (int k = 0; k < 5; ++k) {
          std::string msg = "client " + std::to_string(i) + " line " + std::to_string(k) + "\n";
          c.write(msg);
          if (read_n(c, msg.size()) == msg) ok.fetch_add(1);
        }
        wg.done();
      });
    }
    wg.wait();
  });
  EXPECT_EQ(ok.load(), 200 * 5);
  Stats s = rt.stats();
  EXPECT_GT(s.netpoll_ready, 0u) << "nobody ever waited on the poller?";
  EXPECT_LE(s.threads_created, 4u) << "I/O waits must not need threads";
  EXPECT_EQ(open_fds(), fds_before + 2) << "only the epoll fd and its eventfd remain";
}

TEST(NetTest, Ipv6Loopback) {
  Runtime rt(procs(2));
  std::string got, peer;
  rt.run([&] {
    Listener l;
    try {
      l = listen("[::1]:0");
    } catch (const NetError& e) {
      got = "skip";
      return;
    }
    go([&] {
      Conn c = l.accept();
      peer = c.remote_address();
      c.write("hello over v6");
    });
    Conn c = dial(l.address());
    got = read_n(c, 13);
  });
  if (got == "skip") GTEST_SKIP() << "no IPv6 loopback on this machine";
  EXPECT_EQ(got, "hello over v6");
  EXPECT_EQ(peer.rfind("[::1]:", 0), 0u) << peer;
}

// 4 MiB through a pipe (64 KiB of kernel buffer): the writer parks on a
// full pipe many times, the reader takes odd-sized pieces; every byte
// arrives in order.
TEST(NetTest, PartialReadsAndWritesKeepEveryByte) {
  Runtime rt(procs(2));
  std::string sent(4 << 20, '\0'), received;
  std::mt19937 rng(7);
  for (char& ch : sent) ch = static_cast<char>(rng());
  rt.run([&] {
    auto [r, w0] = pipe();
    auto w = std::make_shared<Conn>(std::move(w0));
    go([&sent, w] {
      w->write(sent);
      w->close();
    });
    char buf[1024];  // steps go up to 1009
    std::size_t step = 1;
    while (std::size_t n = r.read(buf, step)) {
      received.append(buf, n);
      step = step % 997 + 13;
    }
  });
  EXPECT_EQ(received.size(), sent.size());
  EXPECT_TRUE(received == sent);
  EXPECT_GT(rt.stats().netpoll_ready, 0u);
}

TEST(NetTest, ReadDeadlineTimesOut) {
  Runtime rt(procs(1));
  bool timed_out = false, past_at_once = false, cleared_ok = false;
  std::string msg;
  rt.run([&] {
    auto [r, w] = pipe();
    r.set_read_deadline(Clock::now() + milliseconds(20));
    char c;
    try {
      r.read(&c, 1);
    } catch (const NetError& e) {
      timed_out = e.timeout();
      msg = e.what();
    }
    r.set_read_deadline(Clock::now() - milliseconds(1));  // already passed
    w.write("x");
    try {
      r.read(&c, 1);
    } catch (const NetError& e) {
      past_at_once = e.timeout();
    }
    r.set_read_deadline(Clock::time_point::max());  // cleared
    cleared_ok = r.read(&c, 1) == 1 && c == 'x';
  });
  EXPECT_TRUE(timed_out);
  EXPECT_EQ(msg, "read pipe: i/o timeout");
  EXPECT_TRUE(past_at_once);
  EXPECT_TRUE(cleared_ok);
  EXPECT_EQ(rt.stats().netpoll_timeouts, 1u);
}

// A deadline set while a goroutine waits applies to that wait.
TEST(NetTest, DeadlineSetWhileWaitingWakesTheWaiter) {
  Runtime rt(procs(2));
  bool timed_out = false;
  rt.run([&] {
    Conn r, w;  // not a structured binding: clang 14 (clangd) cannot
    std::tie(r, w) = pipe();  // capture one in a lambda, as C++20 allows
    WaitGroup wg;
    wg.add(1);
    go([&] {
      char c;
      try {
        r.read(&c, 1);
      } catch (const NetError& e) {
        timed_out = e.timeout();
      }
      wg.done();
    });
    sleep_for(milliseconds(10));  // the reader is parked by now
    r.set_read_deadline(Clock::now() + milliseconds(10));
    wg.wait();
  });
  EXPECT_TRUE(timed_out);
}

// Go's netpollBreak for timers: the idle M on duty blocks in epoll_wait
// until the next timer (here an hour away: one goroutine waits to read, one
// sleeps for the hour). A timer set now, earlier, must break that wait: main
// keeps its P busy (no call into the runtime) until the timer's function has
// run, so only an idle M can run it, and the one on duty is in epoll_wait.
// Go's netpollBreak is meant for the M waiting in epoll: a non-blocking
// poll (another M's look in findRunnable) that sees it must leave it for
// the next blocking poll, which returns at once. Before this was so, the
// non-blocking poll drained it, and the M on duty slept past an earlier
// timer (the test below hung once in a few hundred runs).
TEST(NetTest, AnInterruptOutlivesANonBlockingPoll) {
  Netpoller poller;
  std::vector<G*> ready;
  poller.interrupt();
  poller.poll(Clock::time_point::min(), ready);  // does not wait
  const auto deadline = Clock::now() + std::chrono::minutes(2);
  poller.poll(deadline, ready);  // returns at once, woken: not at deadline
  EXPECT_LT(Clock::now(), deadline) << "the interrupt was lost";
  EXPECT_TRUE(ready.empty());
}

TEST(NetTest, AnEarlierTimerBreaksTheIdleMOutOfEpollWait) {
  Runtime rt(procs(2));
  rt.run([&] {
    Conn r, w;  // not a structured binding: clang 14 (clangd) cannot
    std::tie(r, w) = pipe();  // capture one in a lambda, as C++20 allows
    WaitGroup reader;
    reader.add(1);
    go([&r, &reader] {
      char c;
      r.read(&c, 1);  // an I/O waiter: the M on duty polls, until...
      reader.done();
    });
    go([] { sleep_for(std::chrono::hours(1)); });  // ...this one's time
    for (int i = 0; i < 10; ++i) {
      // main blocks, and is readied by a goroutine (not by a timer of its
      // own): the M running it afterwards was not the one on duty.
      Chan<int> wake;
      go([&wake] {
        sleep_for(milliseconds(1));
        wake.send(1);
      });
      wake.recv();
      std::atomic<bool> fired{false};
      auto t = Timer::after_func(milliseconds(1), [&] { fired.store(true); });
      auto give_up = Clock::now() + std::chrono::minutes(1);
      while (!fired.load() && Clock::now() < give_up) {
      }
      if (!fired.load()) {  // (the reader must still be let go below)
        ADD_FAILURE() << "round " << i << ": the timer never fired";
        break;
      }
    }
    w.write("x");
    reader.wait();
  });
  EXPECT_GT(rt.stats().netpoll_blocking, 0u);
}

TEST(NetTest, CloseWhileAnotherGoroutineWaitsWakesItAndLeaksNothing) {
  const int fds_before = open_fds();
  Runtime rt(procs(2));
  std::string err;
  bool closed = false;
  rt.run([&] {
    Listener l = listen("127.0.0.1:0");
    Conn client = dial(l.address());
    Conn server = l.accept();
    WaitGroup wg;
    wg.add(2);
    go([&] {
      char c;
      try {
        server.read(&c, 1);
      } catch (const NetError& e) {
        closed = e.closed();
        err = e.what();
      }
      wg.done();
    });
    bool accept_closed = false;
    go([&] {
      try {
        l.accept();
      } catch (const NetError& e) {
        accept_closed = e.closed();
      }
      EXPECT_TRUE(accept_closed);
      wg.done();
    });
    sleep_for(milliseconds(10));
    server.close();
    l.close();
    wg.wait();
    EXPECT_THROW(server.close(), NetError);  // a second close is an error
  });
  EXPECT_TRUE(closed);
  EXPECT_NE(err.find(": use of closed network connection"), std::string::npos) << err;
  EXPECT_EQ(open_fds(), fds_before + 2);
}

// Move assignment over an open Conn closes the old descriptor (its peer
// sees end of file) and takes the other one whole: its addresses, and a
// descriptor that still works. The moved-from Conn is empty.
TEST(NetTest, MoveAssignmentClosesTheOldConnAndKeepsTheNewOne) {
  const int fds_before = open_fds();
  {
    Runtime rt(procs(2));
    rt.run([&] {
      Listener l = listen("127.0.0.1:0");
      Conn a = dial(l.address());
      Conn a_peer = l.accept();
      Conn b = dial(l.address());
      Conn b_peer = l.accept();
      const std::string b_local = b.local_address();
      a = std::move(b);
      EXPECT_FALSE(b.valid());
      EXPECT_TRUE(a.valid());
      EXPECT_EQ(a.local_address(), b_local);
      char c;
      EXPECT_EQ(a_peer.read(&c, 1), 0u);  // the old descriptor was closed
      a.write("y");
      EXPECT_EQ(read_n(b_peer, 1), "y");
      Listener l2 = listen("127.0.0.1:0");
      const int port2 = l2.port();
      l = std::move(l2);  // the same for a Listener
      EXPECT_EQ(l.port(), port2);
      Conn d = dial(l.address());
      Conn d_peer = l.accept();
      d.write("z");
      EXPECT_EQ(read_n(d_peer, 1), "z");
    });
  }  // the runtime's own descriptors (epoll, eventfd) go with it
  EXPECT_EQ(open_fds(), fds_before);  // nothing leaked, nothing closed twice
}

// Destroying a Conn while a goroutine is parked reading it, or a Listener
// while one is parked in accept, is the mistake a destroyed Chan with
// waiters is: a clear fatal error naming them, not a reader running on in
// freed memory.
TEST(NetDeathTest, DestroyingAConnAGoroutineReadsIsFatal) {
  auto program = [] {
    Runtime rt(procs(2));
    rt.run([&] {
      auto [r, w] = pipe();
      auto reader = std::make_unique<Conn>(std::move(r));
      go([&reader] {
        char c;
        (void)reader->read(&c, 1);
      });
      while (rt.netpoller()->waiters() == 0) sleep_for(milliseconds(1));
      reader.reset();  // goroutine 2 waits in read
    });
  };
  EXPECT_EXIT(program(), ::testing::ExitedWithCode(2),
              "fatal error: Conn destroyed while goroutines wait on it: "
              "goroutine 2 \\[IO wait\\]");
}

TEST(NetDeathTest, DestroyingAListenerAGoroutineAcceptsOnIsFatal) {
  auto program = [] {
    Runtime rt(procs(2));
    rt.run([&] {
      auto l = std::make_unique<Listener>(listen("127.0.0.1:0"));
      go([&l] { (void)l->accept(); });
      while (rt.netpoller()->waiters() == 0) sleep_for(milliseconds(1));
      l.reset();  // goroutine 2 waits in accept
    });
  };
  EXPECT_EXIT(program(), ::testing::ExitedWithCode(2),
              "fatal error: Listener destroyed while goroutines wait on it: "
              "goroutine 2 \\[IO wait\\]");
}

TEST(NetTest, EndOfFileResetAndBrokenPipe) {
  Runtime rt(procs(2));
  std::size_t eof = 99;
  int reset = 0, broken = 0;
  std::string reset_msg;
  rt.run([&] {
    Listener l = listen("127.0.0.1:0");
    {  // orderly close: end of file
      Conn c = dial(l.address());
      Conn s = l.accept();
      c.close();
      char b;
      eof = s.read(&b, 1);
    }
    {  // abortive close (SO_LINGER 0): the peer sees a reset
      Conn c = dial(l.address());
      Conn s = l.accept();
      s.write("x");
      char b;
      c.read(&b, 1);
      // Reach the socket under the Conn: find it by its local port.
      int port = std::stoi(c.local_address().substr(c.local_address().rfind(':') + 1));
      for (int fd = 3; fd < 1024; ++fd) {
        sockaddr_in a{};
        socklen_t len = sizeof a;
        if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0 &&
            a.sin_family == AF_INET && ntohs(a.sin_port) == port) {
          linger lg{1, 0};
          setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        }
      }
      c.close();
      try {
        s.read(&b, 1);
      } catch (const NetError& e) {
        reset = e.code().value();
        reset_msg = e.what();
      }
    }
    {  // writing to a pipe with no reader
      auto [r, w] = pipe();
      r.close();
      try {
        w.write("x");
      } catch (const NetError& e) {
        broken = e.code().value();
      }
    }
  });
  EXPECT_EQ(eof, 0u);
  EXPECT_EQ(reset, ECONNRESET) << reset_msg;
  EXPECT_NE(reset_msg.find("read tcp 127.0.0.1:"), std::string::npos) << reset_msg;
  EXPECT_NE(reset_msg.find("connection reset by peer"), std::string::npos) << reset_msg;
  EXPECT_EQ(broken, EPIPE);
}

TEST(NetTest, DialRefusedAndBadAddresses) {
  addrinfo* ai = nullptr;
  const bool localhost_resolves = getaddrinfo("localhost", "80", nullptr, &ai) == 0;
  if (ai != nullptr) freeaddrinfo(ai);
  Runtime rt(procs(1));
  int refused = 0;
  rt.run([&] {
    int port;
    {
      Listener l = listen("127.0.0.1:0");
      port = l.port();
    }  // closed: nobody listens there now
    try {
      dial("127.0.0.1:" + std::to_string(port));
    } catch (const NetError& e) {
      refused = e.code().value();
    }
    EXPECT_THROW(dial("127.0.0.1"), UsageError);          // no port
    EXPECT_THROW(dial("::1:80"), UsageError);             // v6 without []
    EXPECT_THROW(listen("127.0.0.1:70000"), UsageError);  // port range
    // A name goes through the resolver, in a blocking call.
    EXPECT_THROW(dial("no-such-host.invalid:80"), NetError);
    if (localhost_resolves) {  // not in every minimal system (no /etc/hosts)
      Listener named = listen("localhost:0");
      Conn c = dial("localhost:" + std::to_string(named.port()));
      Conn s = named.accept();
      c.write("hi");
      EXPECT_EQ(read_n(s, 2), "hi");
    }
  });
  EXPECT_EQ(refused, ECONNREFUSED);
  EXPECT_GE(rt.stats().syscalls, localhost_resolves ? 3u : 1u)
      << "names were not resolved in blocking calls";
}

// Out of descriptors: accept fails with EMFILE, clearly; the connection
// waits in the backlog and is accepted once a descriptor is free.
TEST(NetTest, RunningOutOfDescriptorsIsAClearErrorAndRecoverable) {
  rlimit old{};
  getrlimit(RLIMIT_NOFILE, &old);
  Runtime rt(procs(1));
  std::string err;
  bool recovered = false;
  rt.run([&] {
    Listener l = listen("127.0.0.1:0");
    Conn client = dial(l.address());
    rlimit low = old;
    low.rlim_cur = static_cast<rlim_t>(open_fds() + 1);
    setrlimit(RLIMIT_NOFILE, &low);
    std::vector<int> fillers;  // use every descriptor left
    for (int fd; (fd = ::dup(0)) >= 0;) fillers.push_back(fd);
    try {
      l.accept();
    } catch (const NetError& e) {
      err = e.what();
    }
    for (int fd : fillers) ::close(fd);
    setrlimit(RLIMIT_NOFILE, &old);
    Conn s = l.accept();  // the same connection, still queued
    client.write("ok");
    recovered = read_n(s, 2) == "ok";
  });
  setrlimit(RLIMIT_NOFILE, &old);
  EXPECT_NE(err.find("accept tcp 127.0.0.1:"), std::string::npos) << err;
  EXPECT_NE(err.find("too many open files"), std::string::npos) << err;
  EXPECT_TRUE(recovered);
}

TEST(NetTest, NetCallsOutsideAGoroutineAreUsageErrors) {
  EXPECT_THROW(listen("127.0.0.1:0"), UsageError);
  EXPECT_THROW(dial("127.0.0.1:1"), UsageError);
  EXPECT_THROW(pipe(), UsageError);
  Runtime rt(procs(1));
  Conn r, w;
  rt.run([&] { std::tie(r, w) = pipe(); });
  char c;
  EXPECT_THROW(r.read(&c, 1), UsageError);  // from a plain thread
  EXPECT_THROW(w.write("x"), UsageError);
  Runtime other(procs(1));
  other.run([&] { EXPECT_THROW(r.read(&c, 1), UsageError); });  // wrong runtime
  w.close();  // close works anywhere
  EXPECT_THROW(w.close(), NetError);
}

// Every goroutine waits on I/O from outside the runtime (a plain thread's
// client): every M is idle, one blocked in epoll_wait. That is no
// deadlock, and the client's bytes wake the server.
TEST(NetTest, GoroutinesWaitingOnlyForTheOutsideWorldAreNoDeadlock) {
  Runtime rt(procs(2));
  std::string got;
  std::atomic<int> port{0};
  std::thread client([&] {
    while (port.load() == 0) std::this_thread::sleep_for(milliseconds(1));
    std::this_thread::sleep_for(milliseconds(30));  // let every M go idle
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port.load()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    std::this_thread::sleep_for(milliseconds(30));
    ASSERT_EQ(::write(fd, "from outside", 12), 12);
    ::close(fd);
  });
  rt.run([&] {
    Listener l = listen("127.0.0.1:0");
    port.store(l.port());
    Conn s = l.accept();
    got = read_n(s, 12);
  });
  client.join();
  EXPECT_EQ(got, "from outside");
  EXPECT_GT(rt.stats().netpoll_blocking, 0u) << "no M waited in epoll";
}

// main returns while goroutines are parked in read and accept: they end
// (Goexit), their Conns close, run() returns.
TEST(NetTest, ExitWhileGoroutinesWaitOnIo) {
  const int fds_before = open_fds();
  {
    Runtime rt(procs(2));
    rt.run([] {
      auto l = std::make_shared<Listener>(listen("127.0.0.1:0"));
      auto p = std::make_shared<std::pair<Conn, Conn>>(pipe());
      go([l] { l->accept(); });
      go([p] {
        char c;
        p->first.read(&c, 1);
      });
      sleep_for(milliseconds(5));
    });
    Stats s = rt.stats();
    EXPECT_EQ(s.goroutines_exited, 2u);
  }
  EXPECT_EQ(open_fds(), fds_before);
}

// Stress: one connection, thousands of round trips, many runs. Every
// round trip parks both sides on the poller, so the idle M on duty is woken
// to poll again and again; a goroutine it readied while being woken must
// still run (a lost wake-up once left it in the GRQ with every P idle).
TEST(NetTest, StressPingPongOverOneConnection) {
  for (int run = 0; run < 30; ++run) {
    Runtime rt(procs(1 + run % 2));
    int trips = 0;
    rt.run([&] {
      Listener l = listen("127.0.0.1:0");
      go([&] {
        Conn s = l.accept();
        char b[64];
        while (std::size_t n = s.read(b, sizeof b)) s.write(b, n);
      });
      Conn c = dial(l.address());
      char b[64] = {};
      for (; trips < 1000; ++trips) {
        c.write(b, sizeof b);
        if (read_n(c, sizeof b).size() != sizeof b) break;
      }
    });
    ASSERT_EQ(trips, 1000) << "run " << run;
  }
}

// Stress over seeds: pairs of goroutines exchange random-sized messages
// through TCP and pipes, with GOMAXPROCS changes; every byte checked.
TEST(NetTest, StressRandomTrafficOverSeeds) {
  for (unsigned seed = 1; seed <= 5; ++seed) {
    Runtime rt(procs(1 + static_cast<int>(seed % 2)));
    std::atomic<int> good{0};
    rt.run([&] {
      Listener l = listen("127.0.0.1:0");
      constexpr int kPairs = 20;
      WaitGroup wg;
      wg.add(2 * kPairs);
      for (int i = 0; i < kPairs; ++i) {
        std::shared_ptr<Conn> a, b;
        if ((i + seed) % 2 == 0) {
          auto [r, w] = pipe();
          a = std::make_shared<Conn>(std::move(w));
          b = std::make_shared<Conn>(std::move(r));
        } else {
          a = std::make_shared<Conn>(dial(l.address()));
          b = std::make_shared<Conn>(l.accept());
        }
        unsigned s = seed * 1000 + static_cast<unsigned>(i);
        go([a, s, &wg] {
          std::mt19937 rng(s);
          for (int k = 0; k < 20; ++k) {
            std::string msg(rng() % 70000 + 1, static_cast<char>('a' + k));
            a->write(msg);
          }
          a->close();
          wg.done();
        });
        go([b, s, &wg, &good] {
          std::mt19937 rng(s);
          std::string expect;
          for (int k = 0; k < 20; ++k) {
            expect += std::string(rng() % 70000 + 1, static_cast<char>('a' + k));
          }
          std::string got = read_n(*b, expect.size() + 1);
          if (got == expect) good.fetch_add(1);
          wg.done();
        });
      }
      go([seed] {
        for (int i = 0; i < 4; ++i) {
          sleep_for(milliseconds(1));
          gomaxprocs(1 + (i + static_cast<int>(seed)) % 2);
        }
      });
      wg.wait();
    });
    EXPECT_EQ(good.load(), 20) << "seed " << seed;
  }
}

void spin_for(std::chrono::nanoseconds d) {
  const auto until = Clock::now() + d;
  while (Clock::now() < until) {
  }
}

// A goroutine that holds a P closes a pipe three readers wait on: they go
// to its P's queue (injectglist) while the other P's goroutine ends. Then
// the closer spins without calling the runtime until every reader ran:
// only another P can run them, so the put must wake one (Go 1.22's wakep
// at the end of injectglist). Lost, the readers wait with a P idle, which
// the conservation watch makes fatal within 300 ms.
TEST(NetTest, StressReadersReadiedOnABusyPWakeAnIdleOne) {
  stage3::WatchedRuntime<Runtime> rt(procs(2));
  int lost = 0;
  rt.run(
      [&] {
        std::mt19937 rng(42);
        for (int it = 0; it < 2000; ++it) {
          auto [r, w] = pipe();
          constexpr int kReaders = 3;
          std::atomic<int> parked{0}, done{0};
          for (int i = 0; i < kReaders; ++i) {
            go([&, rr = &r] {
              parked.fetch_add(1);
              char b;
              try {
                rr->read(&b, 1);
              } catch (const NetError&) {
              }
              done.fetch_add(1);
            });
          }
          while (parked.load() < kReaders) yield();
          sleep_for(std::chrono::microseconds(50));  // they park
          std::atomic<bool> start{false};
          auto busy = std::chrono::nanoseconds(rng() % 4000);
          go([&start, busy] {  // holds the other P, then ends
            while (!start.load()) {
            }
            spin_for(busy);
          });
          sleep_for(std::chrono::microseconds(20));
          start.store(true);
          spin_for(std::chrono::microseconds(2));
          r.close();  // the readers go to this P's queue
          const auto until = Clock::now() + milliseconds(500);
          while (done.load() < kReaders && Clock::now() < until) {
          }
          if (done.load() < kReaders) {
            ++lost;
            while (done.load() < kReaders) yield();
          }
          w.close();
        }
      },
      milliseconds(300), 7);
  EXPECT_EQ(lost, 0) << "readers waited 500 ms with a P idle";
}

// main returns while a plain thread closes pipes 128 goroutines wait on:
// the close readies them (injectglist without a P) as exit after main
// cancels every parked goroutine. Both read a G's sudog; the readying
// clears it under the sched lock, or the cancel read a null one (SIGSEGV).
TEST(NetTest, StressMainReturnsWhileAPlainThreadClosesConns) {
  for (int round = 0; round < 300; ++round) {
    Runtime rt(procs(2));
    std::vector<std::pair<Conn, Conn>> ps;
    std::atomic<bool> go_close{false};
    std::thread closer;
    rt.run([&] {
      for (int i = 0; i < 32; ++i) ps.push_back(pipe());
      std::atomic<int> parked{0};
      for (int i = 0; i < 32; ++i) {
        for (int k = 0; k < 4; ++k) {
          go([&, i] {
            parked.fetch_add(1);
            char b;
            try {
              ps[static_cast<std::size_t>(i)].first.read(&b, 1);
            } catch (const NetError&) {
            }
          });
        }
      }
      while (parked.load() < 128) yield();
      sleep_for(std::chrono::microseconds(200));
      closer = std::thread([&] {
        while (!go_close.load()) {
        }
        for (auto& p : ps) p.first.close();
      });
      go_close.store(true);
      spin_for(std::chrono::microseconds(round % 7));
    });
    closer.join();
  }
}

}  // namespace
}  // namespace gmp::stage4
