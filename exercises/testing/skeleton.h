// What a skeleton's unwritten function calls: it throws, so each test that
// needs the function fails at once with a message naming it, rather than
// hanging or crashing the test binary.
#pragma once

#include <stdexcept>
#include <string>

namespace gmp::exercises {

/// Thrown by a skeleton function the student has not written yet.
class NotWritten : public std::logic_error {
 public:
  /// `what` names the function, e.g. "runqput (exercises/05_local_runq)".
  explicit NotWritten(const std::string& what)
      : std::logic_error("not written yet: " + what) {}
};

/// Marks a function body the student has to write. Replace the call.
[[noreturn]] inline void not_written(const char* what) {
  throw NotWritten(what);
}

}  // namespace gmp::exercises
