// Events to Chrome Trace Event JSON: merge, replay, write (see json.h).
#include "trace/json.h"

#include <cxxabi.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <typeinfo>
#include <unordered_map>

namespace gmp::trace {

std::string function_label(const void* type_info) {
  if (type_info == nullptr) return "";
  const char* mangled = static_cast<const std::type_info*>(type_info)->name();
  int status = 0;
  char* readable = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string label = status == 0 ? readable : mangled;
  std::free(readable);
  // Shorter, as Go's main.main.func1: the anonymous namespace says nothing.
  static constexpr std::string_view kAnon = "(anonymous namespace)::";
  for (auto at = label.find(kAnon); at != std::string::npos;
       at = label.find(kAnon, at)) {
    label.erase(at, kAnon.size());
  }
  return label;
}

namespace {

// Track ids. JSON tids are unique across processes here, since some
// viewers key threads by tid alone.
constexpr int kPsPid = 1;
constexpr int kMsPid = 2;
int p_tid(int p) { return 1 + p; }
int m_tid(int thread) {
  if (thread >= 0) return 2000 + thread;
  return thread == kSysmonThread ? 9000 : 9001;
}
std::string m_name(int thread) {
  if (thread >= 0) return "M" + std::to_string(thread);
  return thread == kSysmonThread ? "sysmon" : "run()";
}

const char* stop_reason(std::uint8_t r) {
  switch (static_cast<StopReason>(r)) {
    case StopReason::kYield: return "yield";
    case StopReason::kPark: return "park";
    case StopReason::kPreempt: return "preempted";
    case StopReason::kSyscall: return "back from syscall, no P";
    case StopReason::kExit: return "exit";
    case StopReason::kNeverStarted: return "never started";
  }
  return "?";
}

// A JSON string literal of s.
std::string quote(std::string_view s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      q += '\\';
      q += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\u%04x", c);
      q += hex;
    } else {
      q += c;
    }
  }
  return q + "\"";
}

// Nanoseconds as the format's microseconds, to the nanosecond.
std::string micros(std::int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRId64 ".%03" PRId64, ns / 1000,
                ns % 1000);
  return buf;
}

struct Item {
  const Event* e;
  int thread;
};

// Replays the merged events and writes one JSON event per line.
class Writer {
 public:
  Writer(std::ostream& out, double ns_per_tick)
      : out_(out), ns_per_tick_(ns_per_tick) {}

  void replay(const std::vector<Item>& items);
  void finish(const RunInfo& info, std::uint64_t dropped);

 private:
  struct GState {
    std::string name;      // "G7 main()::{lambda()#1}"
    std::string label;     // the function
    int open_p = kNoP;     // the P whose slice it has open
  };

  void on_event(const Event& e, int thread);
  void on_go_create(const Event& e, int thread);
  void on_go_start(const Event& e, int thread);
  void on_go_stop(const Event& e, int thread);
  void on_go_sysexit(const Event& e, int thread);
  void on_steal(const Event& e);
  void on_handoff(const Event& e);
  void on_sysmon(const Event& e);

  // Output primitives.
  void emit(const std::string& json);
  std::string head(const char* ph, int pid, int tid, std::int64_t ts) const;
  void begin(int pid, int tid, std::int64_t ts, const std::string& name,
             const char* cat, const std::string& args);
  void end(int pid, int tid, std::int64_t ts, const std::string& args);
  void instant(int pid, int tid, std::int64_t ts, const std::string& name,
               const char* cat, const std::string& args);
  void flow_marker(int pid, int tid, std::int64_t ts, const std::string& name,
                   const char* cat, std::uint64_t id, bool out,
                   const std::string& args);
  void counter(int pid, std::int64_t ts, const std::string& name,
               std::uint64_t value);

  // The M tracks' open slices, innermost last ("g", "syscall", "spinning",
  // "idle"): B/E nest, so closing one closes those opened inside it.
  void m_push(int thread, std::int64_t ts, const char* kind,
              const std::string& name, const char* cat,
              const std::string& args);
  bool m_pop(int thread, std::int64_t ts, std::string_view kind,
             const std::string& args);
  void open_p(GState& g, std::uint64_t goid, int p, std::int64_t ts,
              const std::string& args);
  void close_p(GState& g, std::int64_t ts, const std::string& args);
  GState& g(std::uint64_t id);

  std::ostream& out_;
  const double ns_per_tick_;  // the events' ticks to nanoseconds
  bool first_ = true;
  std::int64_t last_ts_ = 0;
  std::unordered_map<std::uint64_t, GState> gs_;
  std::map<int, std::vector<std::string>> m_open_;  // thread -> open kinds
  std::map<int, std::uint64_t> p_open_;             // P -> goroutine
  std::set<int> ps_, threads_;
  std::uint64_t flow_id_ = 0;
  std::uint64_t created_ = 0, ended_ = 0, forced_ = 0;
};

Writer::GState& Writer::g(std::uint64_t id) {
  auto [it, fresh] = gs_.try_emplace(id);
  if (fresh) it->second.name = "G" + std::to_string(id);
  return it->second;
}

void Writer::emit(const std::string& json) {
  out_ << (first_ ? "\n" : ",\n") << json;
  first_ = false;
}

std::string Writer::head(const char* ph, int pid, int tid,
                         std::int64_t ts) const {
  return std::string("{\"ph\":\"") + ph + "\",\"pid\":" + std::to_string(pid) +
         ",\"tid\":" + std::to_string(tid) + ",\"ts\":" +
         micros(std::llround(static_cast<double>(ts) * ns_per_tick_));
}

void Writer::begin(int pid, int tid, std::int64_t ts, const std::string& name,
                   const char* cat, const std::string& args) {
  emit(head("B", pid, tid, ts) + ",\"name\":" + quote(name) + ",\"cat\":\"" +
       cat + "\",\"args\":{" + args + "}}");
}

void Writer::end(int pid, int tid, std::int64_t ts, const std::string& args) {
  emit(head("E", pid, tid, ts) + ",\"args\":{" + args + "}}");
}

void Writer::instant(int pid, int tid, std::int64_t ts,
                     const std::string& name, const char* cat,
                     const std::string& args) {
  emit(head("i", pid, tid, ts) + ",\"s\":\"t\",\"name\":" + quote(name) +
       ",\"cat\":\"" + cat + "\",\"args\":{" + args + "}}");
}

void Writer::flow_marker(int pid, int tid, std::int64_t ts,
                         const std::string& name, const char* cat,
                         std::uint64_t id, bool out, const std::string& args) {
  emit(head("X", pid, tid, ts) + ",\"dur\":0,\"name\":" + quote(name) +
       ",\"cat\":\"" + cat + "\",\"bind_id\":" + std::to_string(id) +
       (out ? ",\"flow_out\":true" : ",\"flow_in\":true") + ",\"args\":{" +
       args + "}}");
}

void Writer::counter(int pid, std::int64_t ts, const std::string& name,
                     std::uint64_t value) {
  emit(head("C", pid, 0, ts) + ",\"name\":" + quote(name) +
       ",\"args\":{\"len\":" + std::to_string(value) + "}}");
}

void Writer::m_push(int thread, std::int64_t ts, const char* kind,
                    const std::string& name, const char* cat,
                    const std::string& args) {
  threads_.insert(thread);
  m_open_[thread].emplace_back(kind);
  begin(kMsPid, m_tid(thread), ts, name, cat, args);
}

bool Writer::m_pop(int thread, std::int64_t ts, std::string_view kind,
                   const std::string& args) {
  auto& open = m_open_[thread];
  if (std::find(open.begin(), open.end(), kind) == open.end()) return false;
  for (;;) {
    bool that = open.back() == kind;
    if (!that) ++forced_;  // opened inside it and never closed: a lost event
    end(kMsPid, m_tid(thread), ts, that ? args : "");
    open.pop_back();
    if (that) return true;
  }
}

void Writer::close_p(GState& gs, std::int64_t ts, const std::string& args) {
  if (gs.open_p == kNoP) return;
  end(kPsPid, p_tid(gs.open_p), ts, args);
  p_open_.erase(gs.open_p);
  gs.open_p = kNoP;
}

// goroutine `goid` (gs) starts a slice on P p's track.
void Writer::open_p(GState& gs, std::uint64_t goid, int p, std::int64_t ts,
                    const std::string& args) {
  if (auto it = p_open_.find(p); it != p_open_.end()) {
    ++forced_;  // the P's previous goroutine lost its stop event
    close_p(g(it->second), ts, "");
  }
  ps_.insert(p);
  begin(kPsPid, p_tid(p), ts, gs.name, "goroutine", args);
  p_open_[p] = goid;
  gs.open_p = p;
}

void Writer::on_go_create(const Event& e, int thread) {
  GState& gs = g(e.g);
  gs.label = function_label(e.label);
  if (!gs.label.empty()) gs.name += " " + gs.label;
  ++created_;
  std::string args = "\"goid\":" + std::to_string(e.g) + ",\"parent\":" +
                     std::to_string(e.arg) + ",\"fn\":" + quote(gs.label);
  std::string name = "go G" + std::to_string(e.g);
  if (e.p != kNoP) {
    ps_.insert(e.p);
    instant(kPsPid, p_tid(e.p), e.ts, name, "go", args);
  } else {
    instant(kMsPid, m_tid(thread), e.ts, name, "go", args);
  }
}

void Writer::on_go_start(const Event& e, int thread) {
  GState& gs = g(e.g);
  std::string args = "\"goid\":" + std::to_string(e.g) +
                     ",\"fn\":" + quote(gs.label);
  if (e.p != kNoP) {
    open_p(gs, e.g, e.p, e.ts, args + ",\"m\":" + std::to_string(thread));
  }
  m_push(thread, e.ts, "g", gs.name, "goroutine",
         args + ",\"p\":" + std::to_string(e.p));
}

// Back from a blocking call: the M's "syscall" slice ends; with a P, the
// goroutine's run goes on there (its M slice was never closed).
void Writer::on_go_sysexit(const Event& e, int thread) {
  if (!m_pop(thread, e.ts, "syscall", "")) ++forced_;
  if (e.p == kNoP) return;
  GState& gs = g(e.g);
  open_p(gs, e.g, e.p, e.ts,
         "\"goid\":" + std::to_string(e.g) + ",\"fn\":" + quote(gs.label) +
             ",\"m\":" + std::to_string(thread) + ",\"after\":\"syscall\"");
}

void Writer::on_go_stop(const Event& e, int thread) {
  GState& gs = g(e.g);
  if (static_cast<StopReason>(e.reason) == StopReason::kNeverStarted) {
    ++ended_;
    instant(kMsPid, m_tid(thread), e.ts, gs.name + " dropped, never started",
            "go", "\"goid\":" + std::to_string(e.g));
    return;
  }
  std::string args = std::string("\"reason\":\"") + stop_reason(e.reason) + "\"";
  if (static_cast<StopReason>(e.reason) == StopReason::kPark) {
    args += ",\"wait\":" +
            quote(to_string(static_cast<WaitReason>(e.wait)));
  }
  close_p(gs, e.ts, args);
  if (!m_pop(thread, e.ts, "g", args)) ++forced_;  // a stop without a start
  if (static_cast<StopReason>(e.reason) == StopReason::kExit) ++ended_;
}

void Writer::on_steal(const Event& e) {
  auto victim = static_cast<int>(e.arg);
  std::string n = std::to_string(e.count);
  std::string args = "\"from\":" + std::to_string(victim) +
                     ",\"to\":" + std::to_string(e.p) + ",\"count\":" + n;
  ++flow_id_;
  ps_.insert(victim);
  ps_.insert(e.p);
  flow_marker(kPsPid, p_tid(victim), e.ts,
              "stolen by P" + std::to_string(e.p) + ": " + n, "steal",
              flow_id_, true, args);
  flow_marker(kPsPid, p_tid(e.p), e.ts,
              "steal " + n + " from P" + std::to_string(victim), "steal",
              flow_id_, false, args);
}

void Writer::on_handoff(const Event& e) {
  auto from = static_cast<int>(e.arg), to = static_cast<int>(e.arg2);
  std::string p = "P" + std::to_string(e.p);
  std::string args = "\"p\":" + std::to_string(e.p) +
                     ",\"from_m\":" + std::to_string(from) +
                     ",\"to_m\":" + std::to_string(to);
  ++flow_id_;
  threads_.insert(from);
  threads_.insert(to);
  flow_marker(kMsPid, m_tid(from), e.ts, "hand off " + p + " to M" +
              std::to_string(to), "handoff", flow_id_, true, args);
  flow_marker(kMsPid, m_tid(to), e.ts, "take " + p + " from M" +
              std::to_string(from), "handoff", flow_id_, false, args);
}

void Writer::on_sysmon(const Event& e) {
  threads_.insert(kSysmonThread);
  std::string p = "P" + std::to_string(e.p);
  std::string args = "\"p\":" + std::to_string(e.p) +
                     ",\"count\":" + std::to_string(e.count);
  std::string name;
  switch (static_cast<SysmonAction>(e.reason)) {
    case SysmonAction::kRetake: name = "retake " + p + " (syscall)"; break;
    case SysmonAction::kPreempt: name = "preempt " + p; break;
    case SysmonAction::kNetpoll:
      name = "netpoll: " + std::to_string(e.count) + " ready";
      break;
  }
  instant(kMsPid, m_tid(kSysmonThread), e.ts, name, "sysmon", args);
  if (e.p != kNoP) instant(kPsPid, p_tid(e.p), e.ts, name, "sysmon", args);
}

void Writer::on_event(const Event& e, int thread) {
  last_ts_ = std::max(last_ts_, e.ts);
  threads_.insert(thread);
  std::string p = "P" + std::to_string(e.p);
  switch (e.type) {
    case EventType::kGoCreate: on_go_create(e, thread); break;
    case EventType::kGoStart: on_go_start(e, thread); break;
    case EventType::kGoStop: on_go_stop(e, thread); break;
    case EventType::kGoSyscall:
      close_p(g(e.g), e.ts, "\"reason\":\"syscall\"");
      m_push(thread, e.ts, "syscall", "syscall", "syscall",
             "\"goid\":" + std::to_string(e.g) + ",\"p\":" +
                 std::to_string(e.p));
      break;
    case EventType::kGoSysExit: on_go_sysexit(e, thread); break;
    case EventType::kSteal: on_steal(e); break;
    case EventType::kGrqGet:
      instant(kPsPid, p_tid(e.p), e.ts,
              "GRQ -> " + p + ": " + std::to_string(e.count), "grq",
              "\"count\":" + std::to_string(e.count));
      break;
    case EventType::kGrqPut:
      instant(kPsPid, p_tid(e.p), e.ts,
              p + " -> GRQ: " + std::to_string(e.count), "grq",
              "\"count\":" + std::to_string(e.count));
      break;
    case EventType::kHandoff: on_handoff(e); break;
    case EventType::kSpinStart:
      if (m_open_[thread].empty() || m_open_[thread].back() != "spinning") {
        m_push(thread, e.ts, "spinning", "spinning", "m", "");
      }
      break;
    case EventType::kSpinStop: m_pop(thread, e.ts, "spinning", ""); break;
    case EventType::kMPark: m_push(thread, e.ts, "idle", "idle", "m", ""); break;
    case EventType::kMUnpark: m_pop(thread, e.ts, "idle", ""); break;
    case EventType::kSysmon: on_sysmon(e); break;
    case EventType::kQueues:
      if (e.p != kNoP) {
        ps_.insert(e.p);
        counter(kPsPid, e.ts, "runq " + p, e.count);
      }
      counter(e.p != kNoP ? kPsPid : kMsPid, e.ts, "GRQ", e.arg);
      break;
  }
}

void Writer::replay(const std::vector<Item>& items) {
  for (const Item& it : items) on_event(*it.e, it.thread);
  // Close what is still open (only after lost events): M tracks, then Ps.
  for (auto& [thread, open] : m_open_) {
    for (; !open.empty(); open.pop_back()) {
      ++forced_;
      end(kMsPid, m_tid(thread), last_ts_, "");
    }
  }
  for (auto [p, goid] : p_open_) {
    ++forced_;
    end(kPsPid, p_tid(p), last_ts_, "");
  }
}

void Writer::finish(const RunInfo& info, std::uint64_t dropped) {
  auto meta = [this](int pid, int tid, const char* what,
                     const std::string& value) {
    emit(std::string("{\"ph\":\"M\",\"pid\":") + std::to_string(pid) +
         ",\"tid\":" + std::to_string(tid) + ",\"name\":\"" + what +
         "\",\"args\":{" + value + "}}");
  };
  if (!ps_.empty()) meta(kPsPid, 0, "process_name", "\"name\":\"Ps\"");
  meta(kMsPid, 0, "process_name", "\"name\":\"Ms\"");
  for (int p : ps_) {
    meta(kPsPid, p_tid(p), "thread_name",
         "\"name\":\"P" + std::to_string(p) + "\"");
    meta(kPsPid, p_tid(p), "thread_sort_index",
         "\"sort_index\":" + std::to_string(p));
  }
  for (int t : threads_) {
    meta(kMsPid, m_tid(t), "thread_name", "\"name\":" + quote(m_name(t)));
    meta(kMsPid, m_tid(t), "thread_sort_index",
         "\"sort_index\":" + std::to_string(m_tid(t)));
  }
  out_ << "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{"
       << "\"stage\":" << quote(info.stage) << ",\"procs\":" << info.procs
       << ",\"goroutines_created\":" << created_
       << ",\"goroutines_ended\":" << ended_
       << ",\"dropped_events\":" << dropped
       << ",\"forced_ends\":" << forced_ << "}}\n";
}

}  // namespace

void write_chrome_json(std::ostream& out,
                       const std::vector<const Buffer*>& buffers,
                       const RunInfo& info) {
  std::vector<Item> items;
  std::uint64_t dropped = 0;
  for (const Buffer* b : buffers) {
    for (std::size_t i = 0; i < b->size(); ++i) {
      items.push_back({&(*b)[i], b->thread()});
    }
    dropped += b->dropped();
  }
  // By time. A thread's own times strictly increase (Buffer::add), so only
  // events of different threads can tie; then a goroutine leaving a P goes
  // first: it must have left before another M could take it, or the P, and
  // start it again.
  auto leaves = [](const Event* e) {
    return e->type == EventType::kGoStop || e->type == EventType::kGoSyscall;
  };
  std::stable_sort(items.begin(), items.end(),
                   [&](const Item& a, const Item& b) {
                     if (a.e->ts != b.e->ts) return a.e->ts < b.e->ts;
                     return leaves(a.e) && !leaves(b.e);
                   });
  out << "{\"traceEvents\":[";
  Writer w(out, info.ns_per_tick);
  w.replay(items);
  w.finish(info, dropped);
}

}  // namespace gmp::trace
