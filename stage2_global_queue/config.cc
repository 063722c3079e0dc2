#include "stage2_global_queue/config.h"

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>

#include "common/errors.h"
#include "common/gomaxprocs_env.h"
#include "trace/tracer.h"

namespace gmp::stage2 {

void Config::validate() const {
  if (procs < 1 || procs > kMaxProcs) {
    throw ConfigError("stage2::Config.procs = " + std::to_string(procs) +
                      " is invalid: it must be between 1 and " +
                      std::to_string(kMaxProcs) +
                      " (the number of Ms running goroutines)");
  }
  check_stack_size(stack_size, "stage2::Config.stack_size");
  if (trace) trace::check_trace_path(*trace, "stage2::Config.trace");
}

Config Config::resolve(const char* gmp_trace_env) const {
  Config c = *this;
  c.trace = trace::resolve_trace_path(c.trace, gmp_trace_env);
  c.validate();
  return c;
}

void check_stack_size(std::size_t stack_size, const char* field) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  if (stack_size < kMinStackSize || stack_size > kMaxStackSize ||
      stack_size % page != 0) {
    throw ConfigError(std::string(field) + " = " + std::to_string(stack_size) +
                      " is invalid: it must be a multiple of the page size (" +
                      std::to_string(page) + ") between " +
                      std::to_string(kMinStackSize) + " and " +
                      std::to_string(kMaxStackSize));
  }
}

int Config::default_procs() noexcept {
  if (auto env = parse_gomaxprocs(std::getenv("GOMAXPROCS"), kMaxProcs)) {
    return *env;
  }
  unsigned n = std::thread::hardware_concurrency();  // 0 when unknown
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace gmp::stage2
