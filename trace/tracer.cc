// The tracer: buffers handed out per thread, the file written at the end.
#include "trace/tracer.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>

#include "common/errors.h"
#include "trace/json.h"

namespace gmp::trace {

void Buffer::add(Event e) noexcept {
  if (size_ >= kMaxEvents) [[unlikely]] {
    ++dropped_;
    return;
  }
  if (size_ % kChunkEvents == 0) {  // the last chunk is full: a new one
    try {
      chunks_.push_back(std::make_unique_for_overwrite<Event[]>(kChunkEvents));
    } catch (const std::bad_alloc&) {  // the trace loses an event, not the run
      ++dropped_;
      return;
    }
  }
  e.ts = last_ts_ = std::max(e.ts != 0 ? e.ts : now(), last_ts_ + 1);
  chunks_.back()[size_ % kChunkEvents] = e;
  ++size_;
}

// ---- Recording (tracer.h: why out of line) --------------------------------

void Buffer::go_create(std::uint64_t g, std::uint64_t parent, const void* label,
                       std::int32_t p) noexcept {
  add({.g = g,
       .arg = parent,
       .label = label,
       .p = p,
       .type = EventType::kGoCreate});
}

void Buffer::go_start(std::uint64_t g, std::int32_t p) noexcept {
  add({.g = g, .p = p, .type = EventType::kGoStart});
}

void Buffer::go_stop(std::uint64_t g, StopReason why,
                     WaitReason wait) noexcept {
  add({.g = g,
       .type = EventType::kGoStop,
       .reason = static_cast<std::uint8_t>(why),
       .wait = static_cast<std::uint8_t>(wait)});
}

void Buffer::go_syscall(std::uint64_t g, std::int32_t p) noexcept {
  add({.g = g, .p = p, .type = EventType::kGoSyscall});
}

void Buffer::go_sysexit(std::uint64_t g, std::int32_t p) noexcept {
  add({.g = g, .p = p, .type = EventType::kGoSysExit});
}

void Buffer::steal(std::int32_t thief, std::int32_t victim,
                   std::uint32_t n) noexcept {
  add({.arg = static_cast<std::uint64_t>(victim),
       .p = thief,
       .count = n,
       .type = EventType::kSteal});
}

void Buffer::grq_get(std::int32_t p, std::uint32_t n) noexcept {
  add({.p = p, .count = n, .type = EventType::kGrqGet});
}

void Buffer::grq_put(std::int32_t p, std::uint32_t n) noexcept {
  add({.p = p, .count = n, .type = EventType::kGrqPut});
}

void Buffer::handoff(std::int32_t p, int from_m, int to_m,
                     std::int64_t at) noexcept {
  add({.ts = at,
       .arg = static_cast<std::uint64_t>(from_m),
       .arg2 = static_cast<std::uint64_t>(to_m),
       .p = p,
       .type = EventType::kHandoff});
}

void Buffer::spin_start() noexcept { add({.type = EventType::kSpinStart}); }

void Buffer::spin_stop() noexcept { add({.type = EventType::kSpinStop}); }

void Buffer::m_park() noexcept { add({.type = EventType::kMPark}); }

void Buffer::m_unpark() noexcept { add({.type = EventType::kMUnpark}); }

void Buffer::sysmon(SysmonAction what, std::int32_t p,
                    std::uint32_t n) noexcept {
  add({.p = p,
       .count = n,
       .type = EventType::kSysmon,
       .reason = static_cast<std::uint8_t>(what)});
}

void Buffer::queues(std::int32_t p, std::uint32_t runq,
                    std::uint64_t grq) noexcept {
  add({.arg = grq, .p = p, .count = runq, .type = EventType::kQueues});
}

Tracer::Tracer(std::string path) : path_(std::move(path)) {}

Buffer* Tracer::buffer(int thread) {
  std::lock_guard lk(buffers_mu_);
  buffers_.push_back(std::make_unique<Buffer>(thread, clock_));
  return buffers_.back().get();
}

std::string Tracer::write(RunInfo info) const {
  info.ns_per_tick = clock_.ns_per_tick();
  std::vector<const Buffer*> buffers;
  {
    std::lock_guard lk(buffers_mu_);
    for (const auto& b : buffers_) buffers.push_back(b.get());
  }
  std::ofstream out(path_, std::ios::trunc);
  if (!out) {
    return "trace: cannot write " + path_ + ": " + std::strerror(errno);
  }
  write_chrome_json(out, buffers, info);
  out.close();
  if (!out) return "trace: writing " + path_ + " failed";
  return "";
}

void Session::start(const std::string& path) {
  tracer_.reset();
  run_buffer_ = nullptr;
  open_ = true;
  if (path.empty()) return;
  // "%r": this run's number in the process, so that a program with several
  // runs (the demos) keeps a file per run.
  static std::atomic<int> runs{0};
  std::string file = path;
  if (auto at = file.find("%r"); at != std::string::npos) {
    file.replace(at, 2, std::to_string(runs.fetch_add(1) + 1));
  }
  tracer_ = std::make_unique<Tracer>(file);
  run_buffer_ = tracer_->buffer(kRunThread);
}

void Session::finish(const RunInfo& info) noexcept {
  open_ = false;
  if (tracer_ == nullptr) return;
  std::string error;
  try {
    error = tracer_->write(info);
  } catch (const std::exception& e) {  // out of memory while formatting
    error = std::string("trace: writing ") + tracer_->path() + ": " + e.what();
  }
  if (!error.empty()) std::fprintf(stderr, "%s\n", error.c_str());
  tracer_.reset();
  run_buffer_ = nullptr;
}

void check_trace_path(const std::string& path, const char* field) {
  if (path.empty()) return;
  std::string dir = ".";
  if (auto slash = path.rfind('/'); slash != std::string::npos) {
    dir = slash == 0 ? "/" : path.substr(0, slash);
  }
  if (path.back() == '/' || ::access(dir.c_str(), W_OK) != 0) {
    int err = path.back() == '/' ? EISDIR : errno;
    throw ConfigError(
        std::string(field) + " = \"" + path +
        "\" is invalid: the trace file cannot be created there (" +
        std::strerror(err) + ")");
  }
}

std::string resolve_trace_path(const std::optional<std::string>& configured,
                               const char* gmp_trace_env) {
  if (configured) return *configured;
  std::string path = gmp_trace_env != nullptr ? gmp_trace_env : "";
  check_trace_path(path, "GMP_TRACE (from the environment)");
  return path;
}

}  // namespace gmp::trace
