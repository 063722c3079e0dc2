/// \file
/// The Config stage 4's tests start from.
#pragma once

#include "stage4_syscalls/runtime.h"

namespace gmp::stage4 {

/// n Ps, tracing off whatever GMP_DEBUG says.
inline Config procs(int n) {
  Config c;
  c.procs = n;
  c.debug = "";
  return c;
}

}  // namespace gmp::stage4
