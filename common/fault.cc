// The fault handler (fault.h). Everything in it is async-signal-safe: the
// report is built in a fixed buffer and written with write(2).
#include "common/fault.h"

#include <ucontext.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

#include "common/check.h"

namespace gmp {
namespace {

constexpr std::size_t kSignalStackSize = 64 * 1024;
constexpr std::uintptr_t kNilPage = 0x1000;  // Go: an address below it is nil

thread_local FaultLookup tls_lookup = nullptr;  // this thread's, or none

struct sigaction previous_segv, previous_bus, previous_fpe;  // before ours

struct sigaction& previous(int sig) {
  return sig == SIGSEGV ? previous_segv : sig == SIGBUS ? previous_bus
                                                        : previous_fpe;
}

// A report under construction, in a fixed buffer (no allocation).
class Text {
 public:
  Text& operator<<(const char* s) {
    std::size_t n = std::strlen(s);
    if (n > sizeof buf_ - len_) n = sizeof buf_ - len_;
    std::memcpy(buf_ + len_, s, n);
    len_ += n;
    return *this;
  }
  Text& dec(std::uint64_t v) { return number(v, 10, ""); }
  Text& hex(std::uint64_t v) { return number(v, 16, "0x"); }
  [[noreturn]] void die() {
    detail::die(std::string_view(buf_, len_));
  }

 private:
  Text& number(std::uint64_t v, unsigned base, const char* prefix) {
    char digits[24];
    int n = 0;
    do {
      digits[n++] = "0123456789abcdef"[v % base];
      v /= base;
    } while (v != 0);
    *this << prefix;
    while (n > 0 && len_ < sizeof buf_) buf_[len_++] = digits[--n];
    return *this;
  }

  char buf_[512];
  std::size_t len_ = 0;
};

// The goroutine's block, as goroutine dumps print it (no function label:
// naming it would allocate).
void goroutine_block(Text& t, const FaultGoroutine& g) {
  t << "goroutine ";
  t.dec(g.goid) << " [running]:\n\t";
  if (g.worker) {
    t << "on worker ";
    t.dec(static_cast<std::uint64_t>(g.m)) << "\n";
    return;
  }
  t << "last ran on M ";
  t.dec(static_cast<std::uint64_t>(g.m));
  if (g.p >= 0) {
    t << ", P ";
    t.dec(static_cast<std::uint64_t>(g.p));
  }
  t << "\n\tcreated by ";
  if (g.parent == 0) {
    t << "Runtime::run\n";
  } else {
    t << "goroutine ";
    t.dec(g.parent) << "\n";
  }
}

[[noreturn]] void report_overflow(const FaultGoroutine& g) {
  Text t;
  t << "fatal error: goroutine ";
  t.dec(g.goid) << " stack overflow\n(it used all of its ";
  t.dec(g.stack_hi - g.stack_lo) << "-byte stack: look for unbounded recursion";
  if (g.stack_size_field != nullptr) t << ", or raise " << g.stack_size_field;
  t << ")\n\n";
  goroutine_block(t, g);
  t.die();
}

const char* signal_name(int sig) {
  return sig == SIGSEGV ? "SIGSEGV: segmentation violation"
         : sig == SIGBUS ? "SIGBUS: bus error"
                         : "SIGFPE: floating-point exception";
}

// Go's sigpanic: a panic for nil and arithmetic faults, a fatal error for
// any other address.
[[noreturn]] void report_fault(int sig, const siginfo_t* info,
                               std::uintptr_t pc, const FaultGoroutine& g) {
  auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
  Text t;
  if (sig == SIGFPE) {
    t << "panic: runtime error: "
      << (info->si_code == FPE_INTDIV   ? "integer divide by zero"
          : info->si_code == FPE_INTOVF ? "integer overflow"
                                        : "floating point error")
      << "\n";
  } else if (addr < kNilPage) {
    t << "panic: runtime error: invalid memory address or nil pointer "
         "dereference\n";
  } else {
    t << "unexpected fault address ";
    t.hex(addr) << "\nfatal error: fault\n";
  }
  t << "[signal " << signal_name(sig) << " code=";
  t.hex(static_cast<std::uint64_t>(info->si_code)) << " addr=";
  t.hex(addr) << " pc=";
  t.hex(pc) << "]\n\n";
  goroutine_block(t, g);
  t.die();
}

void registers(const void* ucontext, std::uintptr_t* pc, std::uintptr_t* sp) {
  const auto* uc = static_cast<const ucontext_t*>(ucontext);
#if defined(__x86_64__)
  *pc = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
  *sp = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
  *pc = static_cast<std::uintptr_t>(uc->uc_mcontext.pc);
  *sp = static_cast<std::uintptr_t>(uc->uc_mcontext.sp);
#else
  *pc = *sp = 0;
#endif
}

// Not a goroutine's fault: the handler before ours, or the default action.
void forward(int sig, siginfo_t* info, void* ucontext) {
  const struct sigaction& prev = previous(sig);
  if ((prev.sa_flags & SA_SIGINFO) != 0 && prev.sa_sigaction != nullptr) {
    prev.sa_sigaction(sig, info, ucontext);
  } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
  } else {
    // The default action: a real fault happens again when the instruction
    // runs again; a signal sent by kill() (si_code <= 0) is raised again.
    signal(sig, SIG_DFL);
    if (info->si_code <= 0) raise(sig);
  }
}

void on_fault(int sig, siginfo_t* info, void* ucontext) {
  FaultGoroutine g;
  FaultLookup lookup = tls_lookup;
  if (info->si_code > 0 && lookup != nullptr && lookup(&g)) {
    std::uintptr_t pc = 0, sp = 0;
    registers(ucontext, &pc, &sp);
    auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
    const std::uintptr_t guard_lo = g.stack_lo - g.guard_size;
    if (sig != SIGFPE && addr < g.stack_lo && addr >= guard_lo) {
      report_overflow(g);
    }
    // The goroutine's own code runs on its stack (the runtime's, on g0,
    // is not ours to report).
    if (sp >= guard_lo && sp < g.stack_hi) report_fault(sig, info, pc, g);
  }
  forward(sig, info, ucontext);
}

void install_handlers() {
  struct sigaction sa {};
  sa.sa_sigaction = &on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE}) {
    GMP_CHECK(sigaction(sig, &sa, &previous(sig)) == 0,
              "cannot install the fault handler");
  }
}

}  // namespace

FaultReports::FaultReports(FaultLookup lookup)
    : stack_(std::make_unique<char[]>(kSignalStackSize)),
      previous_lookup_(tls_lookup) {
  static std::once_flag once;
  std::call_once(once, install_handlers);
  stack_t ss{};
  ss.ss_sp = stack_.get();
  ss.ss_size = kSignalStackSize;
  GMP_CHECK(sigaltstack(&ss, &previous_stack_) == 0,
            "cannot set a signal stack");
  tls_lookup = lookup;
}

FaultReports::~FaultReports() {
  tls_lookup = previous_lookup_;
  sigaltstack(&previous_stack_, nullptr);  // e.g. a sanitizer's
}

}  // namespace gmp
