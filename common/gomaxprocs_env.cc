#include "common/gomaxprocs_env.h"

#include <algorithm>
#include <cstring>

namespace gmp {

std::optional<int> parse_gomaxprocs(const char* value, int max) {
  if (value == nullptr || *value == '\0') return std::nullopt;
  long long n = 0;
  for (const char* c = value; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') return std::nullopt;
    n = n * 10 + (*c - '0');
    if (n > 0x7fffffff) return std::nullopt;  // Go's atoi32 overflows
  }
  if (n <= 0) return std::nullopt;
  return static_cast<int>(std::min<long long>(n, max));
}

}  // namespace gmp
