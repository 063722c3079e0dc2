#include "stage3_gmp/config.h"

#include <cctype>
#include <string>

#include "common/errors.h"
#include "common/gomaxprocs_env.h"
#include "trace/tracer.h"
#include "stage3_gmp/cgroup.h"

namespace gmp::stage3 {
namespace {

// A whole decimal number in [lo, hi], or nullopt (no sign, no spaces).
std::optional<long> parse_int(const std::string& s, long lo, long hi) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  long v = std::stol(s);
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

}  // namespace

void Config::validate() const {
  if (procs && (*procs < 1 || *procs > kMaxProcs)) {
    throw ConfigError("stage3::Config.procs = " + std::to_string(*procs) +
                      " is invalid: it must be between 1 and " +
                      std::to_string(kMaxProcs) + " (the number of Ps)");
  }
  stage2::check_stack_size(stack_size, "stage3::Config.stack_size");
  if (debug) parse_debug(*debug, "stage3::Config.debug");
  if (trace) trace::check_trace_path(*trace, "stage3::Config.trace");
}

Config Config::resolve(const char* gomaxprocs_env, const char* gmp_debug_env,
                       const char* gmp_trace_env) const {
  validate();
  Config c = *this;
  if (!c.procs) c.procs = parse_gomaxprocs(gomaxprocs_env, kMaxProcs);
  if (!c.procs) {
    c.procs = default_gomaxprocs(affinity_cpu_count(), cgroup_cpu_limit());
  }
  if (!c.debug) {
    c.debug = gmp_debug_env != nullptr ? gmp_debug_env : "";
    parse_debug(*c.debug, "GMP_DEBUG (from the environment)");
  }
  c.trace = trace::resolve_trace_path(c.trace, gmp_trace_env);
  return c;
}

DebugSettings parse_debug(const std::string& text, const std::string& where) {
  DebugSettings d;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(at, end - at);
    at = end + 1;
    std::size_t eq = item.find('=');
    std::string key = item.substr(0, eq);
    std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    auto bad = [&](const std::string& why) {
      return ConfigError(where + " = \"" + text + "\" is invalid: " + why);
    };
    if (key == "schedtrace") {
      auto ms = parse_int(value, 1, 3'600'000);
      if (!ms) throw bad("schedtrace must be a period in ms, 1 to 3600000");
      d.schedtrace_ms = static_cast<int>(*ms);
    } else if (key == "scheddetail") {
      if (value != "0" && value != "1") throw bad("scheddetail must be 0 or 1");
      d.scheddetail = value == "1";
    } else {
      throw bad("unknown setting \"" + key +
                "\" (known: schedtrace=ms, scheddetail=0|1)");
    }
  }
  return d;
}

}  // namespace gmp::stage3
