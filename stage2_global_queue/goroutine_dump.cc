// Goroutine dumps and the SIGQUIT watcher (goroutine_dump.h).
#include "stage2_global_queue/goroutine_dump.h"

#include <semaphore.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <thread>

#include "common/check.h"
#include "trace/json.h"

namespace gmp::stage2 {

std::string goroutine_lines(const G& g,
                            std::chrono::steady_clock::time_point now, int p) {
  GStatus status = g.readgstatus();
  std::string state(to_string(status));
  if (status == GStatus::kWaiting) {
    state = to_string(g.waitreason.load(std::memory_order_relaxed));
    auto since = std::chrono::steady_clock::time_point(
        std::chrono::steady_clock::duration(
            g.waitsince.load(std::memory_order_relaxed)));
    auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now - since);
    state += ", " + std::to_string(std::max<long long>(ms.count(), 0)) + " ms";
  }
  std::string text = "goroutine " + std::to_string(g.goid.load()) + " [" +
                     state + "]:\n";
  int m = g.last_m.load(std::memory_order_relaxed);
  if (m >= 0) {
    text += "\tlast ran on M " + std::to_string(m) +
            (p >= 0 ? ", P " + std::to_string(p) : std::string()) + "\n";
  } else {
    text += "\tnot run yet\n";
  }
  std::uint64_t parent = g.parent_goid.load(std::memory_order_relaxed);
  text += "\tcreated by " +
          (parent == 0 ? std::string("Runtime::run")
                       : "goroutine " + std::to_string(parent)) +
          ": " + trace::function_label(g.fn_type.load(std::memory_order_relaxed)) +
          "\n";
  return text;
}

std::string goroutine_dump(std::vector<const G*> gs, const G* first,
                           LastP last_p) {
  std::sort(gs.begin(), gs.end(),
            [](const G* a, const G* b) { return a->goid < b->goid; });
  auto now = std::chrono::steady_clock::now();
  std::string text;
  auto block = [&](const G& g) {
    return goroutine_lines(g, now, last_p != nullptr ? last_p(g) : -1) + "\n";
  };
  if (first != nullptr) text = block(*first);
  for (const G* g : gs) {
    GStatus s = g->readgstatus();
    if (s == GStatus::kDead || s == GStatus::kIdle || g == first) continue;
    text += block(*g);
  }
  return text;
}

// ---- SIGQUIT ------------------------------------------------------------------

namespace {

struct Registry {
  std::mutex mu;  // protects dumps; held while a dump runs
  std::vector<const SigquitDump*> dumps;  // the runtimes running now
  sem_t quit;  // posted by the handler (async-signal-safe), waited on by the
               // watcher; a semaphore, not a pipe: no descriptor is used
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: the watcher lives on
  return *r;
}

void on_sigquit(int) {
  int saved = errno;
  ::sem_post(&registry().quit);
  errno = saved;
}

// Waits for the handler's post, prints every registered dump, exits 2.
void watch() {
  Registry& r = registry();
  while (::sem_wait(&r.quit) != 0 && errno == EINTR) {
  }
  std::string text = "SIGQUIT: quit\n\n";
  {
    std::lock_guard lk(r.mu);
    for (std::size_t i = 0; i < r.dumps.size(); ++i) {
      if (r.dumps.size() > 1) {  // which runtime each list belongs to
        text += "runtime " + std::to_string(i + 1) + " of " +
                std::to_string(r.dumps.size()) + ": " + r.dumps[i]->name() +
                "\n\n";
      }
      text += r.dumps[i]->dump();
    }
    if (r.dumps.empty()) text += "(no runtime is running)\n";
  }
  detail::die(text);
}

// Once per process: the semaphore, the watcher, then the handler.
void install() {
  Registry& r = registry();
  if (::sem_init(&r.quit, 0, 0) != 0) {
    fatal("SIGQUIT dump: cannot make its semaphore");
  }
  std::thread(watch).detach();
  struct sigaction sa {};
  sa.sa_handler = on_sigquit;
  sigemptyset(&sa.sa_mask);
  // SA_ONSTACK: on the M's alternate signal stack, as every handler here
  // runs (a goroutine's stack may be nearly full when the signal comes).
  sa.sa_flags = SA_RESTART | SA_ONSTACK;
  if (::sigaction(SIGQUIT, &sa, nullptr) != 0) {
    fatal("SIGQUIT dump: cannot install the handler");
  }
}

}  // namespace

SigquitDump::SigquitDump(std::string name, std::function<std::string()> dump)
    : name_(std::move(name)), dump_(std::move(dump)) {
  static std::once_flag once;
  std::call_once(once, install);
  std::lock_guard lk(registry().mu);
  registry().dumps.push_back(this);
}

SigquitDump::~SigquitDump() {
  Registry& r = registry();
  std::lock_guard lk(r.mu);
  r.dumps.erase(std::find(r.dumps.begin(), r.dumps.end(), this));
}

}  // namespace gmp::stage2
