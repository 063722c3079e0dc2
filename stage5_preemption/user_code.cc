// Stage 5: the table of the user's functions, from the ELF symbol table.
#include "stage5_preemption/user_code.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

// Weak: a program without instrumented code has no hook (and no user code).
extern "C" __attribute__((weak)) void __cyg_profile_func_enter(void* fn,
                                                               void* call_site);

namespace gmp::stage5::user_code {

namespace {

using Range = std::pair<std::uintptr_t, std::uintptr_t>;  // [first, second)

std::vector<Range>* table = nullptr;  // written once, then read-only
std::atomic<bool> ready{false};        // release: the table is complete

// The executable's load address (position-independent executables are
// loaded anywhere): the first object dl_iterate_phdr reports.
std::uintptr_t load_bias() {
  std::uintptr_t bias = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        *static_cast<std::uintptr_t*>(out) = info->dlpi_addr;
        return 1;  // stop at the first: the executable
      },
      &bias);
  return bias;
}

// Whether the code [lo, hi) contains `call hook` (E8 and a 32-bit offset
// from the next instruction), the call -finstrument-functions inserts.
bool calls(std::uintptr_t lo, std::uintptr_t hi, std::uintptr_t hook) {
  const auto* code = reinterpret_cast<const unsigned char*>(lo);
  for (std::uintptr_t i = 0; i + 5 <= hi - lo; ++i) {
    if (code[i] != 0xE8) continue;
    std::int32_t rel;
    std::memcpy(&rel, code + i + 1, sizeof rel);
    if (lo + i + 5 + static_cast<std::intptr_t>(rel) == hook) return true;
  }
  return false;
}

// The instrumented functions of the ELF image `elf` (the executable's file,
// mapped), at their run-time addresses.
std::vector<Range> scan(const unsigned char* elf, std::size_t size) {
  std::vector<Range> out;
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(elf);
  if (size < sizeof *eh || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_shoff + eh->e_shnum * sizeof(Elf64_Shdr) > size) {
    return out;
  }
  const auto* sh = reinterpret_cast<const Elf64_Shdr*>(elf + eh->e_shoff);
  const std::uintptr_t bias = load_bias();
  const auto hook = reinterpret_cast<std::uintptr_t>(&__cyg_profile_func_enter);
  if (hook == 0) return out;
  for (int s = 0; s < eh->e_shnum; ++s) {
    if (sh[s].sh_type != SHT_SYMTAB || sh[s].sh_offset + sh[s].sh_size > size) {
      continue;
    }
    const auto* sym = reinterpret_cast<const Elf64_Sym*>(elf + sh[s].sh_offset);
    std::size_t n = sh[s].sh_size / sizeof(Elf64_Sym);
    for (std::size_t i = 0; i < n; ++i) {
      if (ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC ||
          sym[i].st_shndx == SHN_UNDEF || sym[i].st_size == 0) {
        continue;
      }
      std::uintptr_t lo = bias + sym[i].st_value;
      std::uintptr_t hi = lo + sym[i].st_size;
      if (calls(lo, hi, hook)) out.emplace_back(lo, hi);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void build_once() {
  auto* t = new std::vector<Range>;  // never freed: signal handlers read it
  int fd = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd >= 0 && ::fstat(fd, &st) == 0 && st.st_size > 0) {
    auto size = static_cast<std::size_t>(st.st_size);
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
      *t = scan(static_cast<const unsigned char*>(map), size);
      ::munmap(map, size);
    }
  }
  if (fd >= 0) ::close(fd);
  table = t;
  ready.store(true, std::memory_order_release);
}

}  // namespace

bool build() noexcept {
  static std::once_flag once;
  try {
    std::call_once(once, build_once);
  } catch (...) {  // no memory for the table: nothing is user code
    return false;
  }
  return !table->empty();
}

bool contains(std::uintptr_t pc) noexcept {
  // acquire: pairs with build_once's release; the table is complete.
  if (!ready.load(std::memory_order_acquire)) return false;
  auto it = std::upper_bound(table->begin(), table->end(),
                             Range{pc, UINTPTR_MAX});
  if (it == table->begin()) return false;
  --it;  // the last function starting at or before pc
  return pc >= it->first && pc < it->second;
}

std::size_t function_count() noexcept {
  return ready.load(std::memory_order_acquire) ? table->size() : 0;
}

}  // namespace gmp::stage5::user_code
