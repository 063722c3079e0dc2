// The SIGSEGV handler. A fault at an address in [lo - kGuardSize, lo) of the
// goroutine running on this thread is a stack overflow: report it as
//   fatal error: goroutine 7 stack overflow
// and exit with status 2. Any other fault is passed on to the handler that
// was installed before ours (a sanitizer's), or to the default action.
#include "stage2_global_queue/signals.h"

#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <mutex>

#include "common/check.h"
#include "stage2_global_queue/mcore.h"
#include "stage2_global_queue/stack.h"
#include "stage2_global_queue/tls.h"

namespace gmp::stage2 {
namespace {

constexpr std::size_t kSignalStackSize = 64 * 1024;

struct sigaction previous_segv;  // written once, before our handler runs

// Appends decimal `v` to buf at *len. Async-signal-safe (no allocation).
void append_number(char* buf, std::size_t* len, std::uint64_t v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) buf[(*len)++] = digits[--n];
}

void append(char* buf, std::size_t* len, const char* s) {
  std::size_t n = std::strlen(s);
  std::memcpy(buf + *len, s, n);
  *len += n;
}

[[noreturn]] void report_overflow(const G* gp) {
  char buf[256];
  std::size_t len = 0;
  append(buf, &len, "fatal error: goroutine ");
  append_number(buf, &len, gp->goid);
  append(buf, &len, " stack overflow\n(it used all of its ");
  append_number(buf, &len, gp->stack.size);
  append(buf, &len,
         "-byte stack: look for unbounded recursion, or raise "
         "stage2::Config.stack_size)\n");
  ssize_t ignored = write(STDERR_FILENO, buf, len);
  (void)ignored;
  _exit(2);  // as Go's fatal errors
}

void on_sigsegv(int sig, siginfo_t* info, void* ucontext) {
  MCore* m = getm_core();  // this thread's TLS was set up long ago
  if (m != nullptr && m->curg != nullptr) {
    auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
    auto lo = reinterpret_cast<std::uintptr_t>(m->curg->stack.lo);
    if (addr < lo && addr >= lo - StackPool::kGuardSize) {
      report_overflow(m->curg);
    }
  }
  // Not a goroutine stack overflow: not ours to handle.
  if ((previous_segv.sa_flags & SA_SIGINFO) != 0 &&
      previous_segv.sa_sigaction != nullptr) {
    previous_segv.sa_sigaction(sig, info, ucontext);
  } else if (previous_segv.sa_handler != SIG_DFL &&
             previous_segv.sa_handler != SIG_IGN) {
    previous_segv.sa_handler(sig);
  } else {
    // The default action: for a real fault the instruction runs again and
    // faults; a SIGSEGV sent by kill() (si_code <= 0) must be raised again.
    signal(SIGSEGV, SIG_DFL);
    if (info->si_code <= 0) raise(SIGSEGV);
  }
}

void install_handler() {
  struct sigaction sa {};
  sa.sa_sigaction = &on_sigsegv;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  GMP_CHECK(sigaction(SIGSEGV, &sa, &previous_segv) == 0,
            "cannot install the SIGSEGV handler");
}

}  // namespace

void install_signal_stack(MCore* m) {
  static std::once_flag once;
  std::call_once(once, install_handler);
  m->tid.store(static_cast<int>(::gettid()), std::memory_order_relaxed);
  m->signal_stack = std::make_unique<char[]>(kSignalStackSize);
  stack_t ss{};
  ss.ss_sp = m->signal_stack.get();
  ss.ss_size = kSignalStackSize;
  GMP_CHECK(sigaltstack(&ss, &m->previous_signal_stack) == 0,
            "cannot set a signal stack");
}

void remove_signal_stack(MCore* m) noexcept {
  sigaltstack(&m->previous_signal_stack, nullptr);  // e.g. a sanitizer's
  m->signal_stack.reset();
}

}  // namespace gmp::stage2
