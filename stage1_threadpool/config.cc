#include "stage1_threadpool/config.h"

#include <cstdlib>
#include <string>
#include <thread>

#include "common/errors.h"
#include "common/gomaxprocs_env.h"

namespace gmp::stage1 {

void Config::validate() const {
  if (procs < 1 || procs > kMaxProcs) {
    throw ConfigError("stage1::Config.procs = " + std::to_string(procs) +
                      " is invalid: it must be between 1 and " +
                      std::to_string(kMaxProcs) +
                      " (each proc is one OS worker thread)");
  }
}

int Config::default_procs() noexcept {
  if (auto env = parse_gomaxprocs(std::getenv("GOMAXPROCS"), kMaxProcs)) {
    return *env;
  }
  unsigned n = std::thread::hardware_concurrency();  // 0 when unknown
  return n == 0 ? 1 : static_cast<int>(n);
}

}  // namespace gmp::stage1
