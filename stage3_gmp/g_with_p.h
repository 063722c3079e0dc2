/// \file
/// GWithP: stage 3's goroutine, stage 2's G and the P it last ran on.
#pragma once

#include <atomic>

#include "stage2_global_queue/g.h"

namespace gmp::stage3 {

/// Stage 2's G plus what Ps add to it: the id of the P it last ran on,
/// which the goroutine dumps and fault reports print ("last ran on M 1,
/// P 0"; stage 2 has no Ps). Every G a stage 3 runtime makes is one
/// (Runtime::malg), so a G* of such a runtime may be cast to it: last_p.
struct GWithP : stage2::G {
  /// Set by the M that runs it (execute) or that returns it from a
  /// blocking call with a P; relaxed: read by reports while it runs on.
  std::atomic<int> last_p{-1};
};

/// The P gp last ran on; gp must have been made by a stage 3 runtime.
inline std::atomic<int>& last_p(stage2::G* gp) noexcept {
  return static_cast<GWithP*>(gp)->last_p;
}

/// The id of the P g last ran on, or -1: stage 2's goroutine_dump LastP.
inline int read_last_p(const stage2::G& g) noexcept {
  return static_cast<const GWithP&>(g).last_p.load(std::memory_order_relaxed);
}

}  // namespace gmp::stage3
