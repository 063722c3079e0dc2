#include "common/exit.h"

#include <unistd.h>

#include <cstdio>

namespace gmp {

void exit_program() noexcept {
  std::fflush(stdout);  // what main printed, as Go's os.Stdout (unbuffered)
  ::_exit(0);
}

}  // namespace gmp
