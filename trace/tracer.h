/// \file
/// The execution tracer: per-thread event buffers, written out at the end
/// of a run as a Chrome Trace Event / Perfetto JSON file.
///
/// ```unparsed
/// Off by default. A runtime made with Config::trace set (or the GMP_TRACE
/// environment variable) makes a Tracer at the start of each run(). Every M
/// then asks it for a Buffer of its own when its thread starts, and keeps
/// the pointer in its MCore; sysmon and run()'s own thread get one too.
///
///   M0's thread --> Buffer (M 0) --+
///   M1's thread --> Buffer (M 1) --+--> Tracer::write: merge by time,
///   sysmon      --> Buffer (sysmon)+    turn into slices and flows (json.h)
///
/// The hot path: every event site is `if (trace::Buffer* t = m->trace)`,
/// one load and one branch on a field of the M when tracing is off, with
/// the recording itself out of line (see Buffer). A switch passes two such
/// sites (start, stop). When on, an event is a clock read and an append
/// to a chunk only its own thread touches: no lock, no atomic. The one
/// lock (buffers_mu_) is taken once per thread, to hand out its buffer.
///
/// The buffers are read only by write(), after every thread that records
/// into them has been joined (the runtime's run() calls it last), so the
/// join is what publishes their contents.
///
/// Memory: sizeof(Event) bytes an event (56 on x86-64), in chunks of
/// kChunkEvents (224 KiB), so an append never copies what is recorded (a
/// growing vector would, and the copy would show in the trace as a long
/// run on that M). A buffer stops at kMaxEvents (64 Mi events, 3.5 GiB:
/// far past a course workload) and counts what it drops; the file reports
/// the count.
///
/// Timestamps: ticks of the trace's Clock (clock.h: the CPU's counter
/// where the kernel trusts it, turned into time when the file is written),
/// strictly increasing within a buffer (two events of a thread read in the
/// same tick get one apart), so merging the buffers by time keeps each
/// thread's order exactly.
/// ```
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/wait_reason.h"
#include "trace/clock.h"
#include "trace/event.h"

namespace gmp::trace {

/// The thread a Buffer belongs to, for the Ms' tracks: an M's id (>= 0),
/// or one of these.
inline constexpr int kSysmonThread = -1;  ///< sysmon (stage 5)
inline constexpr int kRunThread = -2;     ///< the thread that called run()

/// One thread's events. Only its owner thread appends (no lock); the
/// Tracer reads them once every owner has been joined.
class Buffer {
 public:
  /// Events past this many are dropped and counted.
  static constexpr std::size_t kMaxEvents = std::size_t{1} << 26;
  /// Events per chunk of storage.
  static constexpr std::size_t kChunkEvents = 4096;

  /// A buffer for thread `thread` (an M id, kSysmonThread, kRunThread)
  /// whose timestamps are ticks of `clock`.
  Buffer(int thread, const Clock& clock) : thread_(thread), clock_(clock) {}

  // Recording: one function per event type, owner thread only (the
  // table in event.h says what each field means). Out of line and cold
  // (tracer.cc): an event site `if (t) t->go_start(...)` then costs a
  // load, a test and a branch when tracing is off. Built inline, the
  // Event made stage 3's execute save more registers and grow its frame:
  // more instructions on every switch, traced or not.
  /// kGoCreate: goroutine g made by `parent` (0: by run()) on P p.
  [[gnu::cold]] void go_create(std::uint64_t g, std::uint64_t parent,
                               const void* label, std::int32_t p) noexcept;
  /// kGoStart: g runs on this M, holding P p (kNoP in stage 2).
  [[gnu::cold]] void go_start(std::uint64_t g, std::int32_t p) noexcept;
  /// kGoStop: g stopped running on this M, for `why` (and `wait`).
  [[gnu::cold]] void go_stop(std::uint64_t g, StopReason why,
                             WaitReason wait) noexcept;
  /// kGoSyscall: g enters a blocking call and leaves P p.
  [[gnu::cold]] void go_syscall(std::uint64_t g, std::int32_t p) noexcept;
  /// kGoSysExit: g is back from its call, holding P p, or kNoP.
  [[gnu::cold]] void go_sysexit(std::uint64_t g, std::int32_t p) noexcept;
  /// kSteal: P `thief` took n goroutines from P `victim`.
  [[gnu::cold]] void steal(std::int32_t thief, std::int32_t victim,
                           std::uint32_t n) noexcept;
  /// kGrqGet: P p took a batch of n from the global run queue.
  [[gnu::cold]] void grq_get(std::int32_t p, std::uint32_t n) noexcept;
  /// kGrqPut: P p's full local queue sent n goroutines to the GRQ.
  [[gnu::cold]] void grq_put(std::int32_t p, std::uint32_t n) noexcept;
  /// kHandoff: P p passed from thread `from_m` (an M id, or kSysmonThread)
  /// to M `to_m`, at time `at` (from now(), read before the hand-off woke
  /// or made `to_m`: recorded after it, the arrow would land after the
  /// first events of the M it points to).
  [[gnu::cold]] void handoff(std::int32_t p, int from_m, int to_m,
                             std::int64_t at) noexcept;
  /// kSpinStart: this M starts looking for work.
  [[gnu::cold]] void spin_start() noexcept;
  /// kSpinStop: this M stops looking (found work, or goes idle).
  [[gnu::cold]] void spin_stop() noexcept;
  /// kMPark: this M goes idle.
  [[gnu::cold]] void m_park() noexcept;
  /// kMUnpark: this M is awake again.
  [[gnu::cold]] void m_unpark() noexcept;
  /// kSysmon: sysmon did `what` to P p (kNoP for a poll); n: readied.
  [[gnu::cold]] void sysmon(SysmonAction what, std::int32_t p,
                            std::uint32_t n = 0) noexcept;
  /// kQueues: P p's local queue holds `runq`, the GRQ `grq`.
  [[gnu::cold]] void queues(std::int32_t p, std::uint32_t runq,
                            std::uint64_t grq) noexcept;

  /// The time now on this buffer's clock, in ticks since the trace
  /// started (the time handoff() takes).
  std::int64_t now() const noexcept { return clock_.now(); }

  /// The owner thread (an M id, kSysmonThread or kRunThread).
  int thread() const noexcept { return thread_; }
  /// How many events were recorded.
  std::size_t size() const noexcept { return size_; }
  /// Event i (< size()), in the order they happened on this thread. Its
  /// address never changes.
  const Event& operator[](std::size_t i) const noexcept {
    return chunks_[i / kChunkEvents][i % kChunkEvents];
  }
  /// Events dropped past kMaxEvents (or when memory ran out).
  std::uint64_t dropped() const noexcept { return dropped_; }

 private:
  // Appends e, at time e.ts if set (handoff), else now.
  void add(Event e) noexcept;

  const int thread_;
  const Clock clock_;  // a copy of the Tracer's: immutable
  // All owner thread only (read by Tracer::write after the owner's join).
  std::vector<std::unique_ptr<Event[]>> chunks_;  // full but the last
  std::size_t size_ = 0;                          // events recorded
  std::int64_t last_ts_ = -1;                     // the newest event's ts
  std::uint64_t dropped_ = 0;
};

/// What the trace file says about the run besides its events.
struct RunInfo {
  std::string stage;  ///< "stage3"
  int procs = 0;      ///< GOMAXPROCS (stage 2: Ms) at the run's start
  /// The events' ticks in nanoseconds (Clock::ns_per_tick; Tracer::write
  /// sets it).
  double ns_per_tick = 1.0;
};

/// The tracer of one run: hands out buffers, then writes them as JSON.
class Tracer {
 public:
  /// A tracer whose file will be `path`; the trace's time 0 is now.
  explicit Tracer(std::string path);

  /// A new buffer for the calling thread, which owns it from now on
  /// (`thread`: an M id, kSysmonThread or kRunThread). Thread-safe; the
  /// buffer lives as long as the Tracer.
  Buffer* buffer(int thread);

  /// Writes every buffer to the file as Chrome Trace Event JSON (json.h),
  /// with `info` and the clock's rate. Call once every thread that owns a
  /// buffer has been joined. Returns "" or the reason the file could not
  /// be written (the run itself is not affected; the runtime prints it).
  std::string write(RunInfo info) const;

  /// The file's path.
  const std::string& path() const noexcept { return path_; }

 private:
  const std::string path_;
  const Clock clock_;  // immutable: time 0 is the Tracer's making
  mutable std::mutex buffers_mu_;                 // protects buffers_
  std::vector<std::unique_ptr<Buffer>> buffers_;  // buffers_mu_
};

/// A runtime's tracing across its runs: off, or one Tracer per run.
///
/// start() and finish() are called by run()'s thread while no M runs (before
/// the Ms start, after they are joined); buffer() by any thread during the
/// run. Thread creation and join order those calls, so `tracer_` needs no
/// lock of its own.
class Session {
 public:
  /// At run()'s start: trace this run into `path`, or not if it is "". A
  /// "%r" in the path becomes the run's number in the process (1, 2, ...),
  /// so that each run of a program keeps its own file.
  void start(const std::string& path);
  /// A buffer for the calling thread (Tracer::buffer), or null if off.
  Buffer* buffer(int thread) {
    return tracer_ != nullptr ? tracer_->buffer(thread) : nullptr;
  }
  /// Whether this run is traced (any thread, during the run).
  bool on() const noexcept { return tracer_ != nullptr; }
  /// Whether start() was called and finish() not yet (traced or not).
  /// run()'s thread.
  bool open() const noexcept { return open_; }
  /// run()'s own thread's buffer, or null if off.
  Buffer* run_buffer() const noexcept { return run_buffer_; }
  /// At run()'s end: writes the file, or prints to stderr why it could not
  /// ("trace: cannot write ..."); the run's result is not affected.
  void finish(const RunInfo& info) noexcept;

 private:
  // All three written by run()'s thread only, while no other thread of
  // the run exists (see above); read by the run's threads in between.
  std::unique_ptr<Tracer> tracer_;
  Buffer* run_buffer_ = nullptr;  // owned by tracer_; run()'s thread records
  bool open_ = false;
};

/// The check a Config's `trace` path gets: "" (off) or a file whose folder
/// exists and is writable. Throws gmp::ConfigError naming `field` and the
/// path otherwise.
void check_trace_path(const std::string& path, const char* field);

/// The trace file a Config ends up with: `configured` if set (its own
/// check is the Config's validate()), else `gmp_trace_env` (GMP_TRACE's
/// value, checked here: ConfigError naming the variable), else "" (off).
std::string resolve_trace_path(const std::optional<std::string>& configured,
                               const char* gmp_trace_env);

}  // namespace gmp::trace
