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

Tracer::Tracer(std::string path)
    : path_(std::move(path)), origin_(std::chrono::steady_clock::now()) {}

Buffer* Tracer::buffer(int thread) {
  std::lock_guard lk(buffers_mu_);
  buffers_.push_back(std::make_unique<Buffer>(thread, origin_));
  return buffers_.back().get();
}

std::string Tracer::write(const RunInfo& info) const {
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
    throw ConfigError(std::string(field) + " = \"" + path +
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
