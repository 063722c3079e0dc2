/// \file
/// The type of the function a goroutine runs, which goroutine dumps and
/// traces print as its name ("created by goroutine 1: main()::{lambda()#1}").
///
/// ```unparsed
/// Go's newproc records the function's start PC (g.startpc), a word it has
/// at hand. The C++ equivalent is the callable's type: a constant where
/// the compiler knows it, so go() takes it there, before the callable
/// disappears into a GoFunc (go_func.h). Asked of a std::function or a
/// GoFunc afterwards (target_type()), it costs a call into the function's
/// manager for every goroutine.
/// ```
#pragma once

#include <functional>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "common/go_func.h"

namespace gmp {

/// The type of callable `fn`: free for a lambda or a function object; for a
/// std::function or a GoFunc, the type of what it holds (a call).
template <class F>
const std::type_info* function_type(const F& fn) noexcept {
  using T = std::remove_cvref_t<F>;
  if constexpr (std::is_same_v<T, std::function<void()>> ||
                std::is_same_v<T, GoFunc>) {
    return &fn.target_type();
  } else {
    return &typeid(T);
  }
}

}  // namespace gmp
