// Helpers for tests written once for every stage (template parameter Api:
// a stage's Api type, e.g. gmp::stage1::Api).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "common/stage_api.h"

namespace gmp::testing {

using gmp::procs_for;
using gmp::run_with;

/// run_with on `procs` procs, or more on a stage whose blocked goroutines
/// hold their threads: code that keeps `blocked` goroutines blocked at
/// once (procs_for). Any plain thread.
template <StageApi Api>
typename Api::Stats run_procs(int procs, int blocked,
                              std::function<void()> main) {
  return run_with<Api>(procs_for<Api>(procs, blocked), std::move(main));
}

/// From inside a goroutine of `rt`: yields until at least `n` goroutines
/// are parked on runtime objects (so a test knows they really blocked).
template <StageApi Api>
void wait_until_blocked(const typename Api::Runtime& rt, std::int64_t n) {
  while (rt.stats().goroutines_blocked < n) {
    Api::sleep_for(std::chrono::microseconds(20));
  }
}

/// Maps single pages until the kernel refuses (vm.max_map_count reached);
/// returns them for release_memory_mappings. Alternate protections, so
/// that no two merge into one mapping. (Not under sanitizers, which need
/// mappings of their own.)
inline std::vector<void*> use_up_memory_mappings() {
  const long page = sysconf(_SC_PAGESIZE);
  std::vector<void*> maps;
  for (int i = 0;; ++i) {
    void* p = mmap(nullptr, page, i % 2 ? PROT_READ : PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return maps;
    maps.push_back(p);
  }
}

/// Unmaps what use_up_memory_mappings mapped.
inline void release_memory_mappings(const std::vector<void*>& maps) {
  for (void* p : maps) munmap(p, sysconf(_SC_PAGESIZE));
}

/// Checks the conservation law of every run: each goroutine created either
/// finished, was unwound at exit, or never started.
template <class Stats>
bool conserved(const Stats& s) {
  return s.goroutines_created ==
         s.goroutines_finished + s.goroutines_exited +
             s.goroutines_never_started;
}

/// Whether stage `Api`'s runtime prints goroutine dumps (stages 2-5:
/// stage2_global_queue/goroutine_dump.h); stage 1's tasks have none.
template <class Api>
constexpr bool kHasGoroutineDump =
    requires(const typename Api::Runtime& rt) { rt.dump_goroutines(); };

}  // namespace gmp::testing
