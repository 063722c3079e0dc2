/// \file
/// GoFunc: what a goroutine runs, kept in its G.
///
/// ```unparsed
/// Go's `go f(x)` makes a closure (a funcval) and newproc records it in the
/// new G. A std::function would do, but libstdc++'s keeps only 16 bytes in
/// itself: a closure of three captures, the common case (skynet's node, a
/// worker with a channel, a WaitGroup and an index), then costs a malloc
/// at go() and a free when the goroutine ends, often on another M.
/// GoFunc keeps a callable of up to kInline bytes in place, inside the G
/// (reused with the G when the goroutine dies), and puts only a bigger one,
/// or one whose move may throw, on the heap. It is move-only, so a callable
/// that owns a unique_ptr or a Conn goes in as it is.
///
///   GoFunc (in the G)                      a callable of <= kInline bytes
///   [ ops_ | buf_: the callable itself ]   lives in buf_
///   [ ops_ | buf_: T* ] --> T on the heap  a bigger one
///   ops_: call, relocate, destroy, type    one constant table per type
/// ```
#pragma once

#include <cstddef>
#include <functional>
#include <new>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace gmp {

/// A move-only `void()` callable with kInline bytes of room in itself.
/// Not thread-safe: it belongs to whoever holds it (go()'s caller, then
/// newproc, then the goroutine's G).
class GoFunc {
 public:
  /// Bytes a callable may take and still live inside the GoFunc: five
  /// words, so that a GoFunc takes six (48 bytes, like std::function's 32
  /// and the 32-byte malloc chunk of a three-word closure it saves).
  static constexpr std::size_t kInline = 40;

  /// Empty.
  GoFunc() noexcept = default;
  /// Empty.
  GoFunc(std::nullptr_t) noexcept {}  // NOLINT: implicit, as std::function

  /// Holds `fn`, any callable with no arguments: in place if it fits (at
  /// most kInline bytes, alignment at most a word's, a move that cannot
  /// throw), else on the heap. A null function pointer or an empty
  /// std::function makes an empty GoFunc.
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, GoFunc> &&
             std::is_invocable_r_v<void, std::decay_t<F>&>)
  GoFunc(F&& fn) {  // NOLINT: implicit, as std::function
    using T = std::decay_t<F>;
    if constexpr (std::is_pointer_v<T> ||
                  std::is_same_v<T, std::function<void()>>) {
      if (!fn) return;  // nothing to call: stays empty
    }
    if constexpr (kFits<T>) {
      ::new (static_cast<void*>(buf_)) T(std::forward<F>(fn));
      ops_ = &kInlineOps<T>;
    } else {
      T* heap = new T(std::forward<F>(fn));  // may throw: still empty
      ::new (static_cast<void*>(buf_)) T*(heap);
      ops_ = &kHeapOps<T>;
    }
  }

  /// Takes `other`'s callable; `other` is left empty.
  GoFunc(GoFunc&& other) noexcept { take(other); }
  /// Destroys the callable held, then takes `other`'s.
  GoFunc& operator=(GoFunc&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  /// Destroys the callable held (its captures' destructors run now).
  GoFunc& operator=(std::nullptr_t) noexcept {
    reset();
    return *this;
  }
  GoFunc(const GoFunc&) = delete;
  GoFunc& operator=(const GoFunc&) = delete;
  ~GoFunc() { reset(); }

  /// Whether it holds a callable.
  explicit operator bool() const noexcept { return ops_ != nullptr; }
  /// Calls it; it must hold one.
  void operator()() { ops_->call(buf_); }
  /// The type of the callable held (typeid(void) if empty), as
  /// std::function::target_type.
  const std::type_info& target_type() const noexcept {
    return ops_ != nullptr ? *ops_->type : typeid(void);
  }

 private:
  // What the GoFunc does with a callable of one type; one constant table
  // per type, shared by every GoFunc holding one.
  struct Ops {
    void (*call)(void* buf);
    void (*relocate)(void* from, void* to) noexcept;  // move, then destroy
    void (*destroy)(void* buf) noexcept;
    const std::type_info* type;
  };

  template <class T>
  static constexpr bool kFits = sizeof(T) <= kInline &&
                                alignof(T) <= alignof(void*) &&
                                std::is_nothrow_move_constructible_v<T>;

  template <class T>
  static constexpr Ops kInlineOps = {
      [](void* p) { (*static_cast<T*>(p))(); },
      [](void* from, void* to) noexcept {
        T* f = static_cast<T*>(from);
        ::new (to) T(std::move(*f));
        f->~T();
      },
      [](void* p) noexcept { static_cast<T*>(p)->~T(); },
      &typeid(T)};

  template <class T>
  static constexpr Ops kHeapOps = {
      [](void* p) { (**static_cast<T**>(p))(); },
      [](void* from, void* to) noexcept {
        ::new (to) T*(*static_cast<T**>(from));
      },
      [](void* p) noexcept { delete *static_cast<T**>(p); },
      &typeid(T)};

  void take(GoFunc& other) noexcept {
    if (other.ops_ == nullptr) return;
    other.ops_->relocate(other.buf_, buf_);
    ops_ = std::exchange(other.ops_, nullptr);
  }

  void reset() noexcept {
    // Emptied first: a destructor that looks at this GoFunc finds it empty.
    if (const Ops* ops = std::exchange(ops_, nullptr)) ops->destroy(buf_);
  }

  const Ops* ops_ = nullptr;  // null: empty
  alignas(void*) unsigned char buf_[kInline];  // the callable, or a T*
};

}  // namespace gmp
