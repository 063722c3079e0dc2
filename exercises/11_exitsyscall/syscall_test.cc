// Exercise 11's tests: each of exitsyscall's paths set up by hand, retake's
// refusals, then Ms doing system calls on seeded, randomized interleavings
// with and without a sysmon that retakes their Ps.
#include "exercises/11_exitsyscall/syscall.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "exercises/testing/harness.h"

namespace gmp::exercises::syscall {
namespace {

// What an M does when it finds work (Go's findRunnable, reduced): an idle
// P and the GRQ's first G, both taken under the lock, or nothing.
bool findrunnable(Sched& s, M& m) {
  P* pp;
  G* gp;
  {
    std::lock_guard lk(s.lock);
    if (s.grq_size() == 0) return false;
    pp = s.pidleget();
    if (pp == nullptr) return false;
    gp = s.globrunqget();
  }
  s.acquirep(&m, pp);
  s.casgstatus(gp, GStatus::kRunnable, GStatus::kRunning);
  m.curg = gp;
  return true;
}

// m runs gp on an idle P (set up by hand, with the provided functions).
void start_running(Sched& s, M& m, G& gp) {
  {
    std::lock_guard lk(s.lock);
    s.globrunqput(&gp);
  }
  ASSERT_TRUE(findrunnable(s, m)) << "test setup: no idle P";
}

int npidle(Sched& s) {
  std::lock_guard lk(s.lock);
  return s.npidle();
}

bool is_idle(Sched& s, P* pp) {
  std::lock_guard lk(s.lock);
  std::vector<P*> idle = s.idle_ps();
  return std::find(idle.begin(), idle.end(), pp) != idle.end();
}

const char* name(ExitPath e) {
  switch (e) {
    case ExitPath::kFast: return "kFast";
    case ExitPath::kIdleP: return "kIdleP";
    case ExitPath::kParked: return "kParked";
  }
  return "?";
}

// m runs gp on its P: the P is kRunning and m's, the G kRunning.
void expect_running(const M& m, const G& gp) {
  ASSERT_NE(m.p, nullptr) << "M " << m.id << " must hold a P";
  EXPECT_EQ(m.p->status.load(), PStatus::kRunning);
  EXPECT_EQ(m.p->m.load(), &m) << "the P's owner must be the M";
  EXPECT_EQ(m.curg, &gp);
  EXPECT_EQ(gp.status.load(), GStatus::kRunning);
  EXPECT_EQ(m.oldp, nullptr) << "oldp is for the time of a call only";
}

// ---- Each path by hand -----------------------------------------------------------

TEST(Exitsyscall, FastPathKeepsTheOldP) {
  Sched s(2);
  M m;
  m.id = 1;
  G g;
  g.id = 1;
  start_running(s, m, g);
  P* p = m.p;
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(::testing::Message() << "call " << round);
    s.entersyscall(&m);
    EXPECT_EQ(m.p, nullptr) << "in a call, the M holds no P";
    EXPECT_EQ(m.oldp, p) << "... but remembers it as oldp";
    EXPECT_EQ(p->status.load(), PStatus::kSyscall);
    EXPECT_EQ(p->m.load(), nullptr) << "a P in a call belongs to nobody";
    EXPECT_EQ(g.status.load(), GStatus::kSyscall);
    EXPECT_EQ(npidle(s), 1) << "entersyscall hands nothing off (lazy)";
    EXPECT_EQ(m.curg, &g);

    EXPECT_STREQ(name(s.exitsyscall(&m)), "kFast");
    expect_running(m, g);
    EXPECT_EQ(m.p, p) << "the fast path takes the old P back";
    EXPECT_EQ(npidle(s), 1);
  }
}

TEST(Exitsyscall, RetakenPMeansAnIdleP) {
  // The old P was retaken and is idle: any idle P will do.
  {
    Sched s(2);
    M m;
    m.id = 1;
    G g;
    g.id = 1;
    start_running(s, m, g);
    P* old = m.p;
    s.entersyscall(&m);
    ASSERT_TRUE(s.retake(old));
    EXPECT_STREQ(name(s.exitsyscall(&m)), "kIdleP");
    expect_running(m, g);
    EXPECT_EQ(npidle(s), 1) << "of 2 Ps, the M holds 1; the other stays idle";
  }
  // The old P was retaken and another M runs on it now: the returning M
  // takes the other, idle P.
  {
    Sched s(2);
    M m1, m2;
    m1.id = 1;
    m2.id = 2;
    G g1, g2;
    g1.id = 1;
    g2.id = 2;
    start_running(s, m1, g1);
    P* old = m1.p;
    s.entersyscall(&m1);
    ASSERT_TRUE(s.retake(old));
    {
      std::lock_guard lk(s.lock);
      s.globrunqput(&g2);
    }
    // m2 takes idle Ps until it holds the old one (retake put it there).
    for (int tries = 0; m2.p != old && tries < 3; ++tries) {
      if (m2.p != nullptr) {
        std::lock_guard lk(s.lock);
        P* other = s.releasep(&m2);
        other->status.store(PStatus::kIdle);
        s.pidleput(other);
        s.casgstatus(&g2, GStatus::kRunning, GStatus::kRunnable);
        s.globrunqput(&g2);
      }
      ASSERT_TRUE(findrunnable(s, m2));
    }
    ASSERT_EQ(m2.p, old) << "retake must put the old P on the idle list";
    EXPECT_STREQ(name(s.exitsyscall(&m1)), "kIdleP");
    expect_running(m1, g1);
    EXPECT_NE(m1.p, old) << "the old P is M 2's now";
    expect_running(m2, g2);
    EXPECT_EQ(npidle(s), 0);
  }
}

// One P. M 1 runs G 1 into a system call; sysmon retakes the P, and M 2
// runs G 2 on it: M 1's return will find no P.
struct TakenOver {
  Sched s{1};
  M m1{1}, m2{2};
  G g1, g2;
  P* p = nullptr;
};

void take_over(TakenOver& t) {
  t.g1.id = 1;
  t.g2.id = 2;
  start_running(t.s, t.m1, t.g1);
  t.p = t.m1.p;
  t.s.entersyscall(&t.m1);
  ASSERT_TRUE(t.s.retake(t.p));
  start_running(t.s, t.m2, t.g2);
  ASSERT_EQ(t.m2.p, t.p);
}

TEST(Exitsyscall, NoIdlePMeansTheGrqAndPark) {
  TakenOver t;
  ASSERT_NO_FATAL_FAILURE(take_over(t));
  auto& [s, m1, m2, g1, g2, p] = t;
  EXPECT_STREQ(name(s.exitsyscall(&m1)), "kParked");
  EXPECT_EQ(m1.p, nullptr) << "a parking M holds no P";
  EXPECT_EQ(m1.curg, nullptr) << "a parking M runs no G";
  EXPECT_EQ(m1.oldp, nullptr);
  EXPECT_EQ(g1.status.load(), GStatus::kRunnable);
  {
    std::lock_guard lk(s.lock);
    EXPECT_EQ(s.grq_size(), 1u);
    EXPECT_EQ(s.globrunqget(), &g1) << "the G waits on the GRQ";
    EXPECT_EQ(s.npidle(), 0);
  }
  expect_running(m2, g2);
}

// Every moment M 1 lets go of the lock while it leaves its call, in turn:
// right then, M 2, which holds the only P, runs out of work; it looks at
// the GRQ and, finding it empty, puts the P on the idle list (Go's
// findRunnable, then stopm). Go's exitsyscall0 looks for an idle P and
// queues its G in one hold of the lock, so either M 1 finds the P idle or
// M 2 finds the G queued. Queued in a second hold, the G waits on the GRQ
// with the P idle and no M to run it.
TEST(Exitsyscall, NoGoroutineIsLeftOnTheGrqWithEveryPIdle) {
  for (int n = 1; n <= 4; ++n) {
    TakenOver t;
    ASSERT_NO_FATAL_FAILURE(take_over(t));
    Sched& s = t.s;
    M &m1 = t.m1, &m2 = t.m2;
    G& g1 = t.g1;
    int unlocks = 0;
    bool m2_took_g1 = false;
    SchedLock::unlock_hook = [&] {
      if (++unlocks != n) return;  // M 2's own unlock below counts past n
      std::lock_guard lk(s.lock);
      m2.curg = nullptr;  // g2 is done
      if (G* gp = s.globrunqget()) {
        m2_took_g1 = gp == &g1;
        return;  // M 2 keeps its P for g1
      }
      P* pp = s.releasep(&m2);
      pp->status.store(PStatus::kIdle);
      s.pidleput(pp);
    };
    ExitPath path = s.exitsyscall(&m1);
    SchedLock::unlock_hook = nullptr;
    SCOPED_TRACE("M 2 idles its P after M 1's unlock number " + std::to_string(n) +
                 "; exitsyscall took " + name(path));
    std::lock_guard lk(s.lock);
    bool stranded = s.grq_size() > 0 && s.npidle() == s.nprocs();
    EXPECT_FALSE(stranded)
        << "G 1 waits on the GRQ while every P is idle: no M will run it. "
           "Look for an idle P and queue the G in the same hold of the lock "
           "(exitsyscall0)";
    EXPECT_TRUE(path != ExitPath::kParked || m2_took_g1 || s.grq_size() == 1)
        << "M 1 parked: G 1 must be on the GRQ, or run by M 2";
    EXPECT_TRUE(path == ExitPath::kParked || (m1.curg == &g1 && !g1.queued))
        << "M 1 runs G 1: G 1 must not be on the GRQ as well";
  }
}

TEST(Retake, OnlyTakesAPInASyscall) {
  Sched s(2);
  M m;
  m.id = 1;
  G g;
  g.id = 1;
  start_running(s, m, g);
  P* mine = m.p;
  P* other = mine == s.allp(0) ? s.allp(1) : s.allp(0);
  EXPECT_FALSE(s.retake(mine)) << "a running P is not retaken";
  EXPECT_FALSE(s.retake(other)) << "an idle P is not retaken";
  expect_running(m, g);
  EXPECT_EQ(npidle(s), 1);
  EXPECT_TRUE(is_idle(s, other));

  s.entersyscall(&m);
  EXPECT_TRUE(s.retake(mine)) << "a P in a call is retaken";
  EXPECT_EQ(mine->status.load(), PStatus::kIdle);
  EXPECT_EQ(mine->m.load(), nullptr);
  EXPECT_TRUE(is_idle(s, mine)) << "retake hands the P off to the idle list";
  EXPECT_EQ(npidle(s), 2);
  EXPECT_FALSE(s.retake(mine)) << "retaken once only";
  EXPECT_EQ(npidle(s), 2);
  EXPECT_STREQ(name(s.exitsyscall(&m)), "kIdleP");
  expect_running(m, g);
}

// ---- Stress ----------------------------------------------------------------------

// What a stress run's threads share: the scheduler and the score.
struct World {
  explicit World(int nprocs) : s(nprocs) {}
  Sched s;
  std::atomic<long> calls_left{0};      // system calls still to make
  std::atomic<bool> abort{false};       // a failure or the deadline
  std::atomic<int> ms_done{0};
  std::atomic<long> paths[3] = {};      // by ExitPath
  std::atomic<long> retakes{0};
  std::mutex mu;
  std::vector<std::string> failures;    // protected by mu

  void fail(const std::string& what) {
    {
      std::lock_guard lk(mu);
      if (failures.size() < 10) failures.push_back(what);
    }
    abort.store(true);
  }
};

// One M's life: find work, run it (checking it owns its P), make a system
// call, come back by whichever path; until the calls run out.
void m_loop(World& run, M& m, Chaos& chaos) {
  Sched& s = run.s;
  while (!run.abort.load()) {
    if (m.p == nullptr) {  // parked, or never started: look for work
      if (run.calls_left.load() <= 0) return;
      if (!findrunnable(s, m)) std::this_thread::yield();
      continue;
    }
    // Running m.curg on m.p: nobody else may own the P meanwhile.
    for (int i = 0; i < 2; ++i) {
      if (m.p->m.load() != &m || m.p->status.load() != PStatus::kRunning) {
        run.fail("M " + std::to_string(m.id) + " runs on P " + std::to_string(m.p->id) +
                 ", which is not its own running P any more");
        return;
      }
      chaos.point();
    }
    if (run.calls_left.fetch_sub(1) <= 0) return;  // done: keeps P and G
    P* before = m.p;
    G* gp = m.curg;
    s.entersyscall(&m);
    chaos.point();  // in the kernel
    ExitPath path = s.exitsyscall(&m);
    run.paths[static_cast<int>(path)].fetch_add(1);
    std::string who = "M " + std::to_string(m.id) + " after " + name(path);
    if (m.oldp != nullptr) run.fail(who + ": oldp not cleared");
    if (path == ExitPath::kParked) {
      if (m.p != nullptr || m.curg != nullptr) run.fail(who + ": holds a P or a G");
    } else if (m.p == nullptr || m.curg != gp) {
      run.fail(who + ": must hold a P and run its G");
    } else if (path == ExitPath::kFast && m.p != before) {
      run.fail(who + ": the fast path must keep the old P");
    }
  }
}

// Sysmon: retakes Ps in calls, at random, until every M is done. (The
// stress runs two: the second stands in for a stop of the world, which in
// Go also takes Ps out of _Psyscall with a compare-and-swap.)
void sysmon(World& run, int nms, Chaos& chaos) {
  while (run.ms_done.load() < nms && !run.abort.load()) {
    for (int i = 0; i < run.s.nprocs(); ++i) {
      P* pp = run.s.allp(i);
      if (pp->status.load(std::memory_order_relaxed) == PStatus::kSyscall &&
          chaos.below(2) == 0 && run.s.retake(pp)) {
        run.retakes.fetch_add(1);
      }
      chaos.point();
    }
    std::this_thread::yield();
  }
}

// At the end every P is accounted for (running with exactly its M, or
// idle on the list exactly once; none left in a call), and every G is
// either running on exactly one M or on the GRQ exactly once.
void check_accounting(World& run, const std::vector<M>& ms, const std::vector<G>& gs) {
  Sched& s = run.s;
  std::lock_guard lk(s.lock);
  std::map<const P*, int> held, listed;
  std::map<const G*, int> seen;
  for (const M& m : ms) {
    if (m.oldp != nullptr) ADD_FAILURE() << "M " << m.id << " ended in a call";
    if ((m.p == nullptr) != (m.curg == nullptr)) {
      ADD_FAILURE() << "M " << m.id << " ended with a P but no G, or a G but no P";
    }
    if (m.p != nullptr) ++held[m.p];
    if (m.curg != nullptr) {
      ++seen[m.curg];
      EXPECT_EQ(m.curg->status.load(), GStatus::kRunning) << "G " << m.curg->id;
    }
    if (m.p != nullptr) {
      EXPECT_EQ(m.p->m.load(), &m) << "P " << m.p->id;
    }
  }
  for (P* pp : s.idle_ps()) ++listed[pp];
  EXPECT_EQ(s.npidle(), static_cast<int>(s.idle_ps().size()));
  for (int i = 0; i < s.nprocs(); ++i) {
    P* pp = s.allp(i);
    SCOPED_TRACE(::testing::Message() << "P " << i);
    PStatus st = pp->status.load();
    EXPECT_NE(st, PStatus::kSyscall) << "no call is under way at the end";
    EXPECT_EQ(held[pp] + listed[pp], 1) << "held by " << held[pp] << " Ms, on the idle list "
                                         << listed[pp] << " times";
    if (listed[pp] == 1) {
      EXPECT_EQ(st, PStatus::kIdle);
      EXPECT_EQ(pp->m.load(), nullptr);
    }
    if (held[pp] == 1) {
      EXPECT_EQ(st, PStatus::kRunning);
    }
  }
  while (G* gp = s.globrunqget()) {
    ++seen[gp];
    EXPECT_EQ(gp->status.load(), GStatus::kRunnable) << "G " << gp->id;
  }
  for (const G& g : gs) {
    EXPECT_EQ(seen[&g], 1) << "G " << g.id << " is running or queued " << seen[&g]
                           << " times";
  }
}

// nms Ms and ngs Gs (all on the GRQ at first) on the World's Ps; `calls`
// system calls in all; `retakers` sysmon threads (0: none); a watchdog that
// ends a run that stops making progress (a P lost: neither held nor idle).
void run_ms(std::uint64_t seed, int nms, int ngs, long calls,
            int retakers, World& run) {
  std::vector<M> ms(nms);
  std::vector<G> gs(ngs);
  for (int i = 0; i < nms; ++i) ms[i].id = i + 1;
  for (int i = 0; i < ngs; ++i) gs[i].id = i + 1;
  {
    std::lock_guard lk(run.s.lock);
    for (G& g : gs) run.s.globrunqput(&g);
  }
  run.calls_left.store(calls);
  run_threads(nms + 1 + retakers, seed, [&](int who, Chaos& chaos) {
    chaos_hook = [&chaos] { chaos.point(); };
    try {
      if (who < nms) {
        m_loop(run, ms[who], chaos);
        run.ms_done.fetch_add(1);
      } else if (who == nms) {
        bool done = eventually([&] { return run.ms_done.load() == nms || run.abort.load(); },
                               20.0);
        if (!done) {
          run.fail("no progress for 20 s with " + std::to_string(run.calls_left.load()) +
                   " calls left: a P was lost (neither held by an M nor idle)?");
        }
      } else {
        sysmon(run, nms, chaos);
      }
    } catch (const std::exception& e) {
      run.fail(std::string(who < nms ? "an M" : "sysmon") + ": " + e.what());
      if (who < nms) run.ms_done.fetch_add(1);
    }
    chaos_hook = nullptr;
  });
  for (const std::string& f : run.failures) ADD_FAILURE() << f;
  if (run.failures.empty()) check_accounting(run, ms, gs);
}

// The M writes `payload` as its P's owner, then enters a call; sysmon
// retakes the P and reads it. Only entersyscall's release of kSyscall and
// retake's acquire order that write before that read: without either,
// ThreadSanitizer reports a data race on `payload`, on any machine. (The
// other way, sysmon's release of `taken` orders its read before the M's
// next write.)
void retake_publication(std::uint64_t seed, int rounds) {
  Sched s(1);
  M m;
  m.id = 1;
  G g;
  g.id = 1;
  start_running(s, m, g);
  if (::testing::Test::HasFatalFailure()) return;
  int payload = 0;  // plain: written by the P's owner, read by its retaker
  std::atomic<int> taken{0};  // rounds sysmon has finished with
  std::atomic<int> bad_payload{0}, bad_path{0};
  run_threads(2, seed, [&](int who, Chaos& chaos) {
    if (who == 0) {  // the M
      for (int r = 1; r <= rounds; ++r) {
        payload = r;
        s.entersyscall(&m);
        while (taken.load(std::memory_order_acquire) < r) chaos.point();
        if (s.exitsyscall(&m) != ExitPath::kIdleP) {
          bad_path.fetch_add(1, std::memory_order_relaxed);
        }
      }
      return;
    }
    for (int r = 1; r <= rounds; ++r) {  // sysmon
      while (!s.retake(s.allp(0))) chaos.point();
      if (payload != r) bad_payload.fetch_add(1, std::memory_order_relaxed);
      taken.store(r, std::memory_order_release);
    }
  });
  EXPECT_EQ(bad_payload.load(), 0)
      << "sysmon retook the P before it saw what the M wrote as its owner "
         "(a missing release/acquire on the P's status)";
  EXPECT_EQ(bad_path.load(), 0)
      << "returns that did not take the idle P (kIdleP) after a retake";
}

TEST(ExitsyscallStress, WhatTheMWroteBeforeTheCallIsSeenByTheRetaker) {
  for (std::uint64_t seed : stress_seeds(4, "exitsyscall.publication")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    retake_publication(seed, 2000);
    if (HasFailure()) return;
  }
}

TEST(ExitsyscallStress, FastPathWhenNobodyRetakes) {
  for (std::uint64_t seed : stress_seeds(6, "exitsyscall.fast_only")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    World run(3);
    run_ms(seed, 3, 3, 3000, /*retakers=*/0, run);
    EXPECT_GT(run.paths[0].load(), 0) << "the fast path must be taken";
    EXPECT_EQ(run.paths[0].load(), 3000)
        << "with nobody retaking, every call returns by the fast path (kIdleP: "
        << run.paths[1].load() << ", kParked: " << run.paths[2].load() << ")";
    if (HasFailure()) return;
  }
}

TEST(ExitsyscallStress, SysmonRetakesAtRandom) {
  long retakes = 0, slow = 0;
  for (std::uint64_t seed : stress_seeds(10, "exitsyscall.sysmon")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    World run(3);
    run_ms(seed, 5, 5, 4000, /*retakers=*/2, run);
    EXPECT_EQ(run.paths[0] + run.paths[1] + run.paths[2], 4000)
        << "every call returns by one path";
    retakes += run.retakes.load();
    slow += run.paths[1].load() + run.paths[2].load();
    if (HasFailure()) return;
  }
  EXPECT_GT(retakes, 0) << "sysmon never retook a P: is retake's CAS right?";
  EXPECT_GT(slow, 0) << "no call came back to a retaken P";
}

}  // namespace
}  // namespace gmp::exercises::syscall
