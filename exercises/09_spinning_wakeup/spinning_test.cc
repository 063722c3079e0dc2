// Exercise 09's tests: every task runs (a lost wake-up shows as tasks that
// never run: the test waits 10 s, then says how many and where they sit);
// bursts that need every worker at once; tasks that submit tasks; the
// nmspinning count; a hook that queues work exactly inside the windows of
// a worker going idle; and seeded stress with Chaos points at every window.
#include "exercises/09_spinning_wakeup/spinning.h"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <condition_variable>
#include <mutex>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "exercises/testing/harness.h"

namespace gmp::exercises::spinning {
namespace {

// Liveness deadline: a correct pool finishes in milliseconds; a lost
// wake-up never does.
constexpr double kDeadline = 10.0;

// What a test says when tasks did not run in time: where they are, and
// which part of the protocol that points to.
std::string lost(const Pool& pool, int missing) {
  int queued = pool.queued(), idle = pool.npidle(), n = pool.nworkers();
  int spinning = pool.nmspinning();
  std::ostringstream s;
  s << missing << " task(s) never ran within " << kDeadline
    << " s: a lost wake-up. Now: " << queued << " queued, " << idle << " of "
    << n << " workers idle, nmspinning " << spinning << ". ";
  if (idle == n && spinning > 0) {
    s << "Every worker sleeps but nmspinning is not 0: wakep believes "
         "someone is spinning (a spinning count not given back?)";
  } else if (idle == n) {
    s << "Work is queued and every worker sleeps: a submitter saw a "
         "spinning (or no idle) worker and woke nobody, and that worker "
         "went to sleep without seeing the work (the re-check, and its "
         "place after pidleput and the decrement)";
  } else {
    s << "Work is queued while some workers sleep and the others are busy: "
         "nobody woke the sleepers (does a spinning worker that finds work "
         "wake another, in resetspinning?)";
  }
  return s.str();
}

// With no work left, a correct pool goes quiet: every worker stops
// spinning and sleeps. A worker that never parks (a find_runnable that
// busy-loops) would find every task without any wake-up protocol at all;
// this is what tells the two apart.
::testing::AssertionResult goes_quiet(const Pool& pool) {
  if (eventually([&] {
        return pool.nmspinning() == 0 && pool.npidle() == pool.nworkers();
      }, kDeadline)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "with no work left, every worker must stop spinning and sleep "
            "(pidleput, then notesleep); after "
         << kDeadline << " s nmspinning is " << pool.nmspinning() << " and "
         << pool.npidle() << " of " << pool.nworkers() << " workers are idle";
}

// n tasks that can only finish together: each arrives, then waits until all
// n have arrived, so all n must be running on n workers at once. Abort
// releases them when a test gives up.
class Rendezvous {
 public:
  explicit Rendezvous(int n) : n_(n) {}
  void arrive_and_wait() {
    arrived_.fetch_add(1, std::memory_order_acq_rel);
    while (arrived_.load(std::memory_order_acquire) < n_ &&
           !abort_.load(std::memory_order_acquire)) {
      std::this_thread::yield();
    }
    left_.fetch_add(1, std::memory_order_acq_rel);
  }
  bool done() const { return left_.load(std::memory_order_acquire) == n_; }
  int arrived() const { return arrived_.load(std::memory_order_acquire); }
  void abort() { abort_.store(true, std::memory_order_release); }

 private:
  const int n_;
  std::atomic<int> arrived_{0};
  std::atomic<int> left_{0};
  std::atomic<bool> abort_{false};
};

TEST(SpinningPool, EveryTaskRunsExactlyOnce) {
  const int kBatch = 5000, kRounds = 200;
  std::vector<std::atomic<int>> ran(kBatch + kRounds * 6);
  std::atomic<int> total{0};
  int submitted = 0;
  Pool pool(4);
  auto task = [&](int i) {
    return [&, i] {
      ran[i].fetch_add(1, std::memory_order_relaxed);
      total.fetch_add(1, std::memory_order_acq_rel);
    };
  };
  // One big batch, then small rounds that each start from idle workers.
  for (; submitted < kBatch; ++submitted) pool.submit(task(submitted));
  Chaos rnd(base_seed());
  for (int round = 0; round < kRounds; ++round) {
    ASSERT_TRUE(
        eventually([&] { return total.load() == submitted; }, kDeadline))
        << "round " << round << ": " << lost(pool, submitted - total.load());
    ASSERT_TRUE(goes_quiet(pool)) << "round " << round;
    for (int k = 1 + static_cast<int>(rnd.below(6)); k > 0; --k) {
      pool.submit(task(submitted++));
    }
  }
  ASSERT_TRUE(eventually([&] { return total.load() == submitted; }, kDeadline))
      << lost(pool, submitted - total.load());
  pool.shutdown();
  for (int i = 0; i < submitted; ++i) {
    ASSERT_EQ(ran[i].load(), 1)
        << "task " << i << " ran " << ran[i].load() << " times";
  }
}

// Bursts of n tasks from outside that need all n workers at once, each
// after the workers went idle: every burst needs every worker woken.
void bursts(int workers, int rounds) {
  std::vector<std::unique_ptr<Rendezvous>> all;  // outlives the pool's tasks
  Pool pool(workers);
  for (int round = 0; round < rounds; ++round) {
    ASSERT_TRUE(goes_quiet(pool)) << workers << " workers, before burst "
                                  << round;
    all.push_back(std::make_unique<Rendezvous>(workers));
    Rendezvous* r = all.back().get();
    for (int i = 0; i < workers; ++i)
      pool.submit([r] { r->arrive_and_wait(); });
    if (!eventually([&] { return r->done(); }, kDeadline)) {
      int arrived = r->arrived();
      std::string why = lost(pool, workers - arrived);
      r->abort();
      FAIL() << workers << " workers, burst " << round << ": only " << arrived
             << " of its " << workers << " tasks started. " << why;
    }
  }
  // Sleeping workers ran every burst, so somebody woke them.
  EXPECT_GT(pool.wakeups(), 0u)
      << workers << " workers ran " << rounds << " bursts from sleep, and "
      << "startm never woke one";
}

TEST(SpinningPool, BurstsFromOutsideWhileWorkersGoIdle) {
  for (int workers : {2, 3, 4}) {
    bursts(workers, 150);
    if (HasFatalFailure()) return;
  }
}

// A root task from outside submits n-1 children (to its own worker's
// queue) and waits until all n run at once: the other workers must be
// woken to steal them. Each child then submits leaves.
TEST(SpinningPool, TasksThatSubmitTasks) {
  const int kWorkers = 3, kRounds = 100, kLeaves = 5;
  std::atomic<int> leaves{0};
  std::vector<std::unique_ptr<Rendezvous>> all;  // outlives the pool's tasks
  Pool pool(kWorkers);
  for (int round = 0; round < kRounds; ++round) {
    all.push_back(std::make_unique<Rendezvous>(kWorkers));
    Rendezvous* r = all.back().get();
    pool.submit([&pool, &leaves, r] {
      for (int c = 1; c < kWorkers; ++c) {
        pool.submit([&pool, &leaves, r] {
          r->arrive_and_wait();
          for (int l = 0; l < kLeaves; ++l) {
            pool.submit(
                [&leaves] { leaves.fetch_add(1, std::memory_order_relaxed); });
          }
        });
      }
      r->arrive_and_wait();
    });
    int want = (round + 1) * (kWorkers - 1) * kLeaves;
    if (!eventually([&] { return r->done() && leaves.load() == want; },
                    kDeadline)) {
      int arrived = r->arrived();
      std::string why = lost(pool, kWorkers - arrived + want - leaves.load());
      r->abort();
      FAIL() << "round " << round << ": " << arrived << " of " << kWorkers
             << " tasks of the family started, " << leaves.load() << " of "
             << want << " leaves ran. " << why;
    }
    ASSERT_TRUE(goes_quiet(pool)) << "after round " << round;
  }
}

TEST(SpinningPool, NmspinningStaysInRangeAndReturnsToZero) {
  const int kWorkers = 4;
  std::atomic<int> worst_spinning{0}, worst_idle{0};
  std::atomic<bool> below_zero{false};
  Hooks hooks;
  std::atomic<Pool*> seen{nullptr};
  hooks.at = [&](Window, int) {
    Pool* p = seen.load(std::memory_order_acquire);
    if (p == nullptr) return;
    int s = p->nmspinning(), i = p->npidle();
    if (s < 0 || i < 0) below_zero.store(true);
    int w = worst_spinning.load();
    while (s > w && !worst_spinning.compare_exchange_weak(w, s)) {
    }
    w = worst_idle.load();
    while (i > w && !worst_idle.compare_exchange_weak(w, i)) {
    }
  };
  Pool pool(kWorkers, hooks);
  seen.store(&pool, std::memory_order_release);
  std::atomic<int> ran{0};
  int submitted = 0;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 20; ++i, ++submitted) {
      pool.submit([&pool, &ran] {
        pool.submit([&ran] { ran.fetch_add(1); });  // a child, counted below
        ran.fetch_add(1);
      });
      ++submitted;  // the child
    }
    ASSERT_TRUE(eventually([&] { return ran.load() == submitted; }, kDeadline))
        << lost(pool, submitted - ran.load());
    ASSERT_TRUE(eventually(
        [&] { return pool.nmspinning() == 0 && pool.npidle() == kWorkers; },
        kDeadline))
        << "round " << round << ": with no work left, every worker "
        << "must stop spinning and sleep; now nmspinning " << pool.nmspinning()
        << ", idle " << pool.npidle() << " of " << kWorkers;
  }
  EXPECT_FALSE(below_zero.load()) << "nmspinning or npidle went below zero";
  EXPECT_LE(worst_spinning.load(), kWorkers) << "more spinning than workers";
  EXPECT_LE(worst_idle.load(), kWorkers);
}

// Two wakeps at once, round after round, with every worker idle: Go's wakep
// claims the one spinning place with a compare-and-swap, so of two
// submitters that both find nmspinning 0, one wakes a worker and the other
// backs off. A load and then a store lets both through when they meet: two
// workers wake spinning for a count of one, and when both stop spinning
// nmspinning goes below zero. The kQueued hook lines the two submitters up
// (each waits there for the other), so that their wakeps run together.
TEST(SpinningPool, TwoWakepsAtOnceClaimOneSpinningPlace) {
  const int kWorkers = 4, kRounds = 3000;
  std::atomic<int> waiting{0};
  std::atomic<int> released{0};
  std::atomic<bool> below_zero{false};
  std::atomic<Pool*> seen{nullptr};
  Hooks hooks;
  hooks.at = [&](Window w, int worker) {
    if (Pool* p = seen.load(std::memory_order_acquire);
        p != nullptr && p->nmspinning() < 0) {
      below_zero.store(true);
    }
    if (w != Window::kQueued || worker != -1) return;
    // A barrier for the two submitters: the second to arrive lets both go.
    int gen = released.load();
    if (waiting.fetch_add(1) == 1) {
      waiting.store(0);
      released.fetch_add(1);
      return;
    }
    for (int spins = 0; released.load() == gen; ++spins) {
      if (spins > 1000) std::this_thread::yield();
    }
  };
  Pool pool(kWorkers, hooks);
  seen.store(&pool, std::memory_order_release);
  std::atomic<int> ran{0};
  std::atomic<int> round{0};
  std::atomic<bool> quit{false};
  auto submitter = [&] {
    for (int r = 1; r <= kRounds; ++r) {
      while (round.load() < r) {
        if (quit.load()) return;
        std::this_thread::yield();
      }
      pool.inject([&ran] { ran.fetch_add(1); });
    }
  };
  std::thread a(submitter), b(submitter);
  for (int r = 1; r <= kRounds && !below_zero.load(); ++r) {
    bool idle = eventually(
        [&] { return pool.nmspinning() == 0 && pool.npidle() == kWorkers; },
        kDeadline);
    if (!idle) {
      ADD_FAILURE() << "round " << r << ": nmspinning " << pool.nmspinning()
                    << ", idle " << pool.npidle() << " of " << kWorkers;
      break;
    }
    round.store(r);
    if (!eventually([&] { return ran.load() == 2 * r; }, kDeadline)) {
      ADD_FAILURE() << lost(pool, 2 * r - ran.load());
      break;
    }
  }
  quit.store(true);
  a.join();
  b.join();
  EXPECT_FALSE(below_zero.load())
      << "nmspinning went below zero: two wakeps both woke a spinner";
}

// ---- Conservative waking: none while a worker spins ------------------------

// Go's wakep wakes nobody while an M spins: the spinner will find the work
// (and wakes the next in resetspinning). Here one worker is held spinning,
// just before it publishes itself idle, while the other sleeps; tasks
// queued from outside then must wake nobody. A wakep that ignores
// nmspinning wakes the sleeper for each one (a futex call per task: the
// cost the protocol exists to avoid). Released, the spinner finds them.
TEST(SpinningPool, NoWakeupWhileAWorkerSpins) {
  std::mutex mu;
  std::condition_variable cv;
  bool armed = false, released = false;  // guarded by mu
  int held = -1;                         // guarded by mu: the held worker
  Hooks hooks;
  hooks.at = [&](Window where, int worker) {
    if (where != Window::kBeforePidleput || worker < 0) return;
    std::unique_lock lk(mu);
    if (!armed || held >= 0) return;  // only the first to get here
    held = worker;
    cv.notify_all();
    cv.wait(lk, [&] { return released; });
  };
  Pool pool(2, hooks);
  auto release = [&] {
    std::lock_guard lk(mu);
    released = true;
    cv.notify_all();
  };
  ASSERT_TRUE(goes_quiet(pool));
  { std::lock_guard lk(mu); armed = true; }
  std::atomic<int> ran{0};
  pool.inject([&ran] { ran.fetch_add(1); });  // wakes one, which wakes one
  // One worker held spinning at its pidleput; the other ran the task and
  // went back to sleep.
  bool ready = eventually([&] {
    std::lock_guard lk(mu);
    return held >= 0 && ran.load() == 1 && pool.npidle() == 1 &&
           pool.nmspinning() == 1;
  }, kDeadline);
  if (!ready) {
    release();
    FAIL() << "setup: wanted one worker spinning (held) and one idle; now "
           << "nmspinning " << pool.nmspinning() << ", idle " << pool.npidle()
           << ", tasks run " << ran.load() << " of 1";
  }
  const std::uint64_t before = pool.wakeups();
  constexpr int kTasks = 5;
  for (int i = 0; i < kTasks; ++i) pool.inject([&ran] { ran.fetch_add(1); });
  const std::uint64_t woken = pool.wakeups() - before;
  release();
  EXPECT_EQ(woken, 0u)
      << kTasks << " tasks queued while a worker spun (nmspinning 1) woke "
      << woken << " sleeping worker(s): wakep must wake nobody while one "
         "spins (the spinner finds the work, then resetspinning wakes the "
         "next)";
  ASSERT_TRUE(eventually([&] { return ran.load() == 1 + kTasks; }, kDeadline))
      << lost(pool, 1 + kTasks - ran.load());
}

// ---- The windows: work queued exactly while a worker goes idle --------------

bool idle_window(Window w) {
  return w == Window::kStealFailed || w == Window::kBeforePidleput ||
         w == Window::kAfterPidleput || w == Window::kBeforeRecheck ||
         w == Window::kRecheckFailed || w == Window::kBeforeSleep;
}

// A hook that, at random idle windows of the workers, queues a task from
// "outside" (inject) right there: the interleaving where a submission
// lands between a worker's last look at the queues and its sleep.
void window_run(int workers, std::uint64_t seed) {
  std::vector<Chaos> chaos;
  for (int i = 0; i < workers; ++i) chaos.emplace_back(seed + 977 * (i + 1));
  std::atomic<Pool*> target{nullptr};
  std::atomic<int> injected{0}, ran{0}, chain{0};
  Hooks hooks;
  hooks.at = [&](Window where, int worker) {
    Pool* p = target.load(std::memory_order_acquire);
    if (p == nullptr || worker < 0 || !idle_window(where)) return;
    Chaos& c = chaos[worker];  // this worker's thread only
    if (c.below(3) != 0 || chain.fetch_add(1) >= 50) return;
    injected.fetch_add(1);
    p->inject([&ran] { ran.fetch_add(1); });
  };
  Pool pool(workers, hooks, seed);
  target.store(&pool, std::memory_order_release);
  for (int kick = 0; kick < 20; ++kick) {
    chain.store(0);
    injected.fetch_add(1);
    pool.inject([&ran] { ran.fetch_add(1); });  // starts a chain of windows
    if (!eventually([&] { return ran.load() == injected.load(); }, kDeadline)) {
      target.store(nullptr);
      FAIL() << workers << " worker(s), kick " << kick << ": "
             << lost(pool, injected.load() - ran.load());
    }
    if (kick % 5 == 4) {  // the chain of windows ends within 50 injections
      ASSERT_TRUE(goes_quiet(pool)) << workers << " worker(s), kick " << kick;
    }
  }
  target.store(nullptr);
}

TEST(SpinningWindow, WorkQueuedWhileAWorkerGoesIdleIsFound) {
  for (std::uint64_t seed : stress_seeds(6, "spinning.window")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    for (int workers : {1, 2, 3}) {
      window_run(workers, seed);
      if (HasFatalFailure()) return;
    }
  }
}

// ---- Seeded stress: Chaos points at every window --------------------------

thread_local Chaos* tl_chaos = nullptr;  // an outside thread's Chaos

void stress_run(std::uint64_t seed) {
  Chaos setup(seed);
  const int workers = 1 + static_cast<int>(setup.below(4));
  std::vector<Chaos> chaos;
  for (int i = 0; i < workers; ++i) chaos.emplace_back(seed + 31 * (i + 1));
  Hooks hooks;
  hooks.at = [&](Window, int worker) {
    if (worker >= 0) {
      chaos[worker].point();  // this worker's thread only
    } else if (tl_chaos != nullptr) {
      tl_chaos->point();
    }
  };
  Pool pool(workers, hooks, seed);
  std::atomic<int> submitted{0}, ran{0};
  std::atomic<bool> failed{false};
  std::string failure;
  const int kEpochs = 20;
  std::barrier sync(2);
  auto count = [&ran] { ran.fetch_add(1, std::memory_order_acq_rel); };
  std::vector<std::unique_ptr<Rendezvous>> groups;
  for (int e = 0; e < kEpochs; ++e)
    groups.push_back(std::make_unique<Rendezvous>(workers));
  // Waits for everything submitted so far; thread 0 decides, thread 1 follows.
  auto settle = [&](int who, const std::string& what) {
    if (who == 0 && !failed.load() &&
        !eventually([&] { return ran.load() == submitted.load(); },
                    kDeadline)) {
      failure = what + ": " + lost(pool, submitted.load() - ran.load());
      failed.store(true);
    } else if (who == 0 && !failed.load()) {
      if (auto quiet = goes_quiet(pool); !quiet) {
        failure = what + ": " + quiet.message();
        failed.store(true);
      }
    }
    sync.arrive_and_wait();
  };
  run_threads(2, seed, [&](int who, Chaos& c) {
    tl_chaos = &c;
    for (int e = 0; e < kEpochs && !failed.load(); ++e) {
      // Tasks from two outside threads; some submit children.
      for (int i = 1 + static_cast<int>(c.below(8)); i > 0; --i) {
        submitted.fetch_add(1);
        if (c.below(3) == 0) {
          int kids = 1 + static_cast<int>(c.below(3));
          submitted.fetch_add(kids);
          pool.submit([&pool, &ran, count, kids] {
            for (int k = 0; k < kids; ++k) pool.submit(count);
            ran.fetch_add(1, std::memory_order_acq_rel);
          });
        } else {
          pool.submit(count);
        }
        c.point();
      }
      settle(who, "epoch " + std::to_string(e) + ", tasks");
      if (failed.load()) break;
      // A burst that needs every worker at once, from thread 0.
      if (who == 0) {
        Rendezvous* r = groups[e].get();
        for (int i = 0; i < workers; ++i) {
          submitted.fetch_add(1);
          pool.submit([r, &ran] {
            r->arrive_and_wait();
            ran.fetch_add(1, std::memory_order_acq_rel);
          });
          c.point();
        }
      }
      settle(who, "epoch " + std::to_string(e) + ", burst of " +
                      std::to_string(workers));
    }
    tl_chaos = nullptr;
  });
  for (auto& g : groups) g->abort();
  pool.shutdown();  // before the groups go: a released task may still run
  ASSERT_FALSE(failed.load()) << workers << " workers, " << failure;
}

TEST(SpinningStress, SeededInterleavingsLoseNoWakeup) {
  for (std::uint64_t seed : stress_seeds(12, "spinning.stress")) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    stress_run(seed);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace gmp::exercises::spinning
