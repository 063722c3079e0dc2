// Stage 5: the preemption signal's handler and the trampoline's C++ half
// (see async_preempt.h).
#include "stage5_preemption/async_preempt.h"

#include <cpuid.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>

#include "common/runtime_lock.h"
#include "stage5_preemption/runtime.h"
#include "stage5_preemption/user_code.h"

/// The bytes the trampoline's XSAVE area needs (CPUID leaf 0xD: the size
/// for the features the OS enabled). Written once before any signal.
extern "C" {
__attribute__((visibility("hidden"))) std::uint64_t gmp_xsave_size = 0;
}

namespace gmp::stage5 {

namespace {

constexpr std::uintptr_t kRedZone = 128;  // System V x86-64 ABI
// The trampoline's frame besides its XSAVE area (17 registers, alignment)
// and what the yield under it needs (the C++ calls down to the switch,
// larger with AddressSanitizer): declined below this much stack.
constexpr std::uintptr_t kFrameNeeded = kRedZone + 256 + 8192;

struct sigaction previous_action;  // the handler before ours, if any

// Signals that are not ours go where they went before.
void forward(int sig, siginfo_t* info, void* ctx) {
  if ((previous_action.sa_flags & SA_SIGINFO) != 0) {
    if (previous_action.sa_sigaction != nullptr) {
      previous_action.sa_sigaction(sig, info, ctx);
    }
  } else if (previous_action.sa_handler != SIG_DFL &&
             previous_action.sa_handler != SIG_IGN) {
    previous_action.sa_handler(sig);
  }
}

void on_preempt_signal(int sig, siginfo_t* info, void* ctx) {
  int saved_errno = errno;  // the interrupted code may be reading it
  auto* m = stage3::getm();
  // A stage 5 runtime's M (a stop of the world in a stage 3 or 4 runtime
  // raises P::preempt too, but only stage 5 stops goroutines by signal).
  // dynamic_cast reads type information only: no lock, no allocation.
  auto* rt = m != nullptr ? dynamic_cast<Runtime*>(m->rt) : nullptr;
  if (rt != nullptr && m->p != nullptr &&
      m->p->preempt.load(std::memory_order_relaxed)) {
    rt->async_preempt_signal(m, ctx);
  } else {
    forward(sig, info, ctx);
  }
  errno = saved_errno;
}

const char* init_once() noexcept {
  if constexpr (!kAsyncPreemptSupported) {
    return "asynchronous preemption is not available in this build (it "
           "needs x86-64, and ThreadSanitizer runs signal handlers on a "
           "copy of the interrupted context): use Preempt::kCooperative";
  } else {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(1, &a, &b, &c, &d) == 0 || (c & bit_OSXSAVE) == 0 ||
        __get_cpuid_count(0xD, 0, &a, &b, &c, &d) == 0 || b < 576) {
      return "asynchronous preemption needs the XSAVE instruction (CPUID "
             "OSXSAVE), which this CPU or OS does not offer: use "
             "Preempt::kCooperative";
    }
    gmp_xsave_size = b;
    user_code::build();  // empty if stripped: nothing is then preempted
    struct sigaction sa {};
    sa.sa_sigaction = &on_preempt_signal;
    // On the M's signal stack; system calls restart (most do: the rest,
    // like epoll_wait, return EINTR, and the runtime retries them).
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(kPreemptSignal, &sa, &previous_action) != 0) {
      return "cannot install the SIGURG handler for asynchronous preemption";
    }
    return nullptr;
  }
}

}  // namespace

const char* init_async_preempt() noexcept {
  static const char* error = init_once();  // thread-safe, once
  return error;
}

SafePoint check_safe_point(const stage3::M* m, std::uintptr_t pc,
                           std::uintptr_t sp) noexcept {
  const stage2::G* gp = m->curg;
  if (gp == nullptr || m->p == nullptr ||
      !m->p->preempt.load(std::memory_order_relaxed) ||
      gp->readgstatus() != stage2::GStatus::kRunning) {
    return SafePoint::kNoRequest;
  }
  auto lo = reinterpret_cast<std::uintptr_t>(gp->stack.lo);
  if (sp <= lo || sp > lo + gp->stack.size) return SafePoint::kNotOnGStack;
  if (RuntimeLock::held_by_this_thread() != 0) return SafePoint::kLocksHeld;
  if (!user_code::contains(pc)) return SafePoint::kNotUserCode;
  if (sp - lo < kFrameNeeded + gmp_xsave_size) return SafePoint::kStackTooLow;
  return SafePoint::kSafe;
}

bool signal_thread(int tid) noexcept {
  return ::syscall(SYS_tgkill, ::getpid(), tid, kPreemptSignal) == 0;
}

#if defined(__x86_64__)
namespace {
// Makes the interrupted code "call" `target` when the handler returns
// (Go's ctxt.pushCall): below the red zone, the interrupted PC as the
// return address. Writes below the goroutine's stack pointer, which
// AddressSanitizer may still mark as a dead frame's: not checked.
__attribute__((no_sanitize_address)) void push_call(greg_t* regs,
                                                    std::uintptr_t target) {
  auto sp = static_cast<std::uintptr_t>(regs[REG_RSP]) - kRedZone - 8;
  *reinterpret_cast<std::uintptr_t*>(sp) =
      static_cast<std::uintptr_t>(regs[REG_RIP]);
  regs[REG_RSP] = static_cast<greg_t>(sp);
  regs[REG_RIP] = static_cast<greg_t>(target);
}
}  // namespace
#endif

//! [async_preempt_signal]
void Runtime::async_preempt_signal(M* m, void* ctx) noexcept {
#if defined(__x86_64__)
  if (preempt_ != Preempt::kAsync) return;
  greg_t* regs = static_cast<ucontext_t*>(ctx)->uc_mcontext.gregs;
  SafePoint why = check_safe_point(m, static_cast<std::uintptr_t>(regs[REG_RIP]),
                                   static_cast<std::uintptr_t>(regs[REG_RSP]));
  if (why != SafePoint::kSafe) {
    async_declined_.fetch_add(1, std::memory_order_relaxed);
    return;  // sysmon asks again on its next round
  }
  push_call(regs, reinterpret_cast<std::uintptr_t>(&gmp_async_preempt));
#else
  (void)m;
  (void)ctx;
#endif
}
//! [async_preempt_signal]

}  // namespace gmp::stage5

extern "C" void gmp_async_preempt2() {
  auto* m = gmp::stage3::getm();
  static_cast<gmp::stage5::Runtime*>(m->rt)->async_preempt_now(m);
}
