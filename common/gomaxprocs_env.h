/// \file
/// The GOMAXPROCS environment variable, read as Go reads it.
#pragma once

#include <optional>

namespace gmp {

/// The number of procs a GOMAXPROCS value asks for, as Go's schedinit
/// reads it: a whole decimal number above 0 (no sign, no space), capped at
/// `max` as Go caps runtime.GOMAXPROCS at its _MaxGomaxprocs. Anything
/// else (null: unset, "", "abc", "0", "-1", " 2", "1e3", a number too big
/// for an int) is ignored, as Go ignores it: std::nullopt, and the default
/// stands.
std::optional<int> parse_gomaxprocs(const char* value, int max);

}  // namespace gmp
