#include "common/errors.h"

#include "common/check.h"

#include <cxxabi.h>

#include <cstdlib>
#include <string>
#include <typeinfo>

namespace gmp {
namespace {

std::string demangle(const char* name) {
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string result = (status == 0 && out != nullptr) ? out : name;
  std::free(out);
  return result;
}

// "panic: <text>" for one exception object.
std::string describe(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const Panic& p) {
    return p.what();  // the runtime's own panics read exactly as in Go
  } catch (const std::exception& x) {
    return demangle(typeid(x).name()) + ": " + x.what();
  } catch (...) {
    const std::type_info* t = abi::__cxa_current_exception_type();
    return t ? "exception of type " + demangle(t->name())
             : std::string("unknown exception");
  }
}

}  // namespace

void die_of_panic(std::uint64_t goid, std::exception_ptr e,
                  std::string_view goroutines) noexcept {
  std::string text;
  try {
    text = "panic: " + describe(e) + "\n\n";
    if (goroutines.empty()) {
      text += "goroutine " + std::to_string(goid) + " [running]:\n";
    } else {
      text += goroutines;
    }
  } catch (...) {
    text = "panic: (the exception could not be described)\n";
  }
  detail::die(text);
}

}  // namespace gmp
