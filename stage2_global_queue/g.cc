#include "stage2_global_queue/g.h"

namespace gmp::stage2 {

std::string_view to_string(GStatus s) noexcept {
  switch (s) {
    case GStatus::kIdle: return "idle";
    case GStatus::kRunnable: return "runnable";
    case GStatus::kRunning: return "running";
    case GStatus::kWaiting: return "waiting";
    case GStatus::kDead: return "dead";
  }
  return "unknown";
}

}  // namespace gmp::stage2
