/// \file
/// Why a goroutine is waiting: Go's waitReason (runtime2.go), printed in
/// deadlock reports and goroutine dumps as Go prints it ("chan receive").
#pragma once

#include <cstdint>
#include <string_view>

namespace gmp {

/// Why a goroutine is parked. Mirrors Go's waitReason constants; only the
/// reasons the course's objects produce are listed.
enum class WaitReason : std::uint8_t {
  kNone,               ///< not waiting
  kChanReceive,        ///< Go's waitReasonChanReceive: blocked in Chan::recv
  kChanSend,           ///< Go's waitReasonChanSend: blocked in Chan::send
  kSyncMutexLock,      ///< Go's waitReasonSyncMutexLock: in Mutex::lock
  kSyncWaitGroupWait,  ///< Go's waitReasonSyncWaitGroupWait: WaitGroup::wait
  kSleep,              ///< Go's waitReasonSleep: in sleep_for
  kIOWait,             ///< Go's waitReasonIOWait: on the network poller
  kSelect,             ///< Go's waitReasonSelect: in select (select.h)
  kSelectNoCases,      ///< Go's waitReasonSelectNoCases: a select with none
};

/// Go's text for `r` (waitReasonStrings), for example "chan receive".
std::string_view to_string(WaitReason r) noexcept;

}  // namespace gmp
