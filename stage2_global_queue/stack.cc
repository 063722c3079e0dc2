#include "stage2_global_queue/stack.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <mutex>
#include <string>
#include <system_error>

#include "common/check.h"

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102  // Linux 6.13 (uapi/asm-generic/mman-common.h)
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif
#ifndef SYS_process_madvise
#define SYS_process_madvise 440  // Linux 5.10, x86-64 and aarch64 alike
#endif

namespace gmp::stage2 {
namespace {

// The calling process as a pidfd, PIDFD_SELF_THREAD_GROUP (Linux 6.14,
// uapi/linux/pidfd.h): no descriptor to open, and right after a fork too.
constexpr int kPidfdSelf = -10001;

std::size_t page_size() noexcept {
  return static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// Whether madvise(MADV_GUARD_INSTALL) works here: unknown until the first
// slab tries it, then settled for the process.
enum GuardKind : int { kUnknown, kGuardRegions, kMprotect };
std::atomic<int> guard_kind{kUnknown};  // relaxed: any answer is correct

// Whether touching `addr` faults, asked without touching it: the kernel
// copies from it into a pipe, and fails with EFAULT if it is a guard. (An
// emulator such as qemu-user accepts MADV_GUARD_INSTALL but ignores it.)
bool faults(const void* addr) noexcept {
  int fds[2];
  if (pipe(fds) != 0) return false;
  bool fault = write(fds[1], addr, 1) < 0 && errno == EFAULT;
  close(fds[0]);
  close(fds[1]);
  return fault;
}

// Makes [addr, addr + len) fault when touched. The first time, finds out
// whether guard regions work here; if not, uses mprotect from then on.
int install_guard(void* addr, std::size_t len) noexcept {
  int kind = guard_kind.load(std::memory_order_relaxed);
  if (kind != kMprotect && madvise(addr, len, MADV_GUARD_INSTALL) == 0) {
    if (kind == kGuardRegions) return 0;
    if (faults(addr)) {
      guard_kind.store(kGuardRegions, std::memory_order_relaxed);
      return 0;
    }
  } else if (kind != kMprotect && errno != EINVAL) {
    return -1;
  }
  guard_kind.store(kMprotect, std::memory_order_relaxed);  // older kernel
  return mprotect(addr, len, PROT_NONE);
}

// How a new slab's stack tops are faulted in, the best this kernel has;
// settled by the first slab that tries (relaxed: a stale answer costs a
// failed call, no more).
enum Populate : int { kVector, kEach, kNone };
std::atomic<int> populate_kind{kVector};
std::atomic<bool> populate_checked{false};  // the first slab's result seen

// Whether errno says the kernel cannot do it at all (rather than, say, out
// of memory for this one).
bool unsupported(int err) noexcept {
  return err == EINVAL || err == ENOSYS || err == EBADF || err == EPERM ||
         err == ESRCH;
}

// Asks the kernel for the pages; false if it cannot do it at all.
bool populate(iovec* tops, std::size_t n, std::size_t page) noexcept {
  int kind = populate_kind.load(std::memory_order_relaxed);
  if (kind == kVector) {
    if (syscall(SYS_process_madvise, kPidfdSelf, tops, n,
                MADV_POPULATE_WRITE, 0) >= 0 ||
        !unsupported(errno)) {
      return true;
    }
    populate_kind.store(kind = kEach, std::memory_order_relaxed);
  }
  if (kind != kEach) return false;
  for (std::size_t i = 0; i < n; ++i) {
    if (madvise(tops[i].iov_base, page, MADV_POPULATE_WRITE) != 0 &&
        unsupported(errno)) {
      return false;
    }
  }
  return true;
}

// Faults in the top page of each stack of a new slab: the page every
// goroutine writes first (newproc's frame for it), and for most the only
// one. A page fault is a trap into the kernel per page, and a trap is what
// a VM makes dear: one process_madvise for the slab's 64 pages is one
// trap, where one madvise(MADV_POPULATE_WRITE) per page or the faults
// themselves are 64 (benchmarks/page_fault_cost.py measures a fault on
// the machine, and the report prints it). process_madvise on the process
// itself (PIDFD_SELF) needs Linux 6.14, MADV_POPULATE_WRITE 5.14; without
// either, the first write faults the page in.
void populate_tops(char* slab, std::size_t slot, std::size_t page) noexcept {
  iovec tops[StackPool::kStacksPerSlab];
  for (std::size_t i = 0; i < StackPool::kStacksPerSlab; ++i) {
    tops[i] = {slab + (i + 1) * slot - page, page};
  }
  bool done = populate(tops, StackPool::kStacksPerSlab, page);
  // The first time, whether it really did (an emulator such as qemu-user
  // accepts the advice and ignores it): the page is in memory or not
  // (mincore, which touches nothing).
  unsigned char in = 0;
  if (!done || (!populate_checked.exchange(true, std::memory_order_relaxed) &&
                (mincore(tops[0].iov_base, page, &in) != 0 || !(in & 1)))) {
    populate_kind.store(kNone, std::memory_order_relaxed);
  }
}

long read_long(const char* path) {
  std::ifstream in(path);
  long v = -1;
  in >> v;
  return v;
}

long count_mappings() {
  std::ifstream in("/proc/self/maps");
  long n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

// Why a stack could not be had: errno `err`, as clearly as we can tell.
[[noreturn]] void throw_exhausted(int err, std::size_t stack_size) {
  long limit = read_long("/proc/sys/vm/max_map_count");
  long maps = count_mappings();
  std::string why =
      "go: cannot allocate a goroutine stack (" + std::to_string(stack_size) +
      " bytes and a guard): ";
  if (limit > 0 && maps >= limit - 8) {
    why += "the process has " + std::to_string(maps) +
           " memory mappings, the kernel's limit (vm.max_map_count = " +
           std::to_string(limit) + "). ";
    why += StackPool::guard_regions_supported()
               ? "Raise it (sysctl -w vm.max_map_count=N) or use fewer "
                 "goroutines"
               : "On this kernel (no MADV_GUARD_INSTALL, Linux < 6.13) each "
                 "stack's guard costs 2 mappings: raise the limit "
                 "(sysctl -w vm.max_map_count=N) or use fewer goroutines";
  } else {
    why += "out of memory or address space (RAM, overcommit, ulimit -v); "
           "use fewer goroutines or a smaller Config.stack_size";
  }
  throw std::system_error(err, std::generic_category(), why);
}

}  // namespace

bool StackPool::guard_regions_supported() noexcept {
  return guard_kind.load(std::memory_order_relaxed) == kGuardRegions;
}

bool StackPool::populates_tops() noexcept {
  return populate_kind.load(std::memory_order_relaxed) != kNone;
}

void StackPool::use_mprotect_guards() noexcept {
  guard_kind.store(kMprotect, std::memory_order_relaxed);
}

StackPool::StackPool(std::size_t stack_size)
    : stack_size_(stack_size) {
  GMP_CHECK(stack_size_ % page_size() == 0 && kGuardSize % page_size() == 0,
            "stack or guard size is not a page multiple");
}

StackPool::~StackPool() {
  std::lock_guard lk(lock_);
  GMP_CHECK(free_.size() == slabs_.size() * kStacksPerSlab,
            "stack pool destroyed while stacks are in use");
  const std::size_t slab = kStacksPerSlab * (kGuardSize + stack_size_);
  for (void* base : slabs_) munmap(base, slab);
}

Stack StackPool::alloc() {
  Stack s;
  alloc(&s, 1);
  return s;
}

void StackPool::free(Stack s) noexcept { free(&s, 1); }

void StackPool::alloc(Stack* out, std::size_t n) {
  std::lock_guard lk(lock_);
  while (free_.size() < n) map_slab();  // what it mapped stays in free_
  for (std::size_t i = n; i-- > 0;) {
    out[i] = Stack{free_.back(), stack_size_};
    free_.pop_back();
  }
}

void StackPool::free(const Stack* in, std::size_t n) noexcept {
  std::lock_guard lk(lock_);
  for (std::size_t i = 0; i < n; ++i) free_.push_back(in[i].lo);
}

std::size_t StackPool::stacks_mapped() const {
  std::lock_guard lk(lock_);
  return slabs_.size() * kStacksPerSlab;
}

// One mmap for kStacksPerSlab slots of [guard][stack]. MAP_NORESERVE: only
// touched pages cost memory, as with thread stacks.
void StackPool::map_slab() {
  const std::size_t slot = kGuardSize + stack_size_;
  const std::size_t bytes = kStacksPerSlab * slot;
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                    -1, 0);
  if (base == MAP_FAILED) throw_exhausted(errno, stack_size_);
  auto* p = static_cast<char*>(base);
  for (std::size_t i = 0; i < kStacksPerSlab; ++i) {
    if (install_guard(p + i * slot, kGuardSize) != 0) {
      int err = errno;
      munmap(base, bytes);  // nothing of this slab was handed out
      throw_exhausted(err, stack_size_);
    }
  }
  populate_tops(p, slot, page_size());
  slabs_.push_back(base);
  free_.reserve(free_.size() + kStacksPerSlab);
  for (std::size_t i = kStacksPerSlab; i-- > 0;) {
    free_.push_back(p + i * slot + kGuardSize);
  }
}

}  // namespace gmp::stage2
