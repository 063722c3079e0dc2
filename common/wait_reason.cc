#include "common/wait_reason.h"

namespace gmp {

std::string_view to_string(WaitReason r) noexcept {
  switch (r) {
    case WaitReason::kNone: return "";
    case WaitReason::kChanReceive: return "chan receive";
    case WaitReason::kChanSend: return "chan send";
    case WaitReason::kSyncMutexLock: return "sync.Mutex.Lock";
    case WaitReason::kSyncWaitGroupWait: return "sync.WaitGroup.Wait";
    case WaitReason::kSleep: return "sleep";
    case WaitReason::kIOWait: return "IO wait";
    case WaitReason::kSelect: return "select";
    case WaitReason::kSelectNoCases: return "select (no cases)";
  }
  return "unknown wait reason";
}

}  // namespace gmp
