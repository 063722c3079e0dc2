// The raw context switch of stage 2 (stage2_global_queue/context.h) against
// Boost.Context's jump_fcontext, on the same kind of stack, in the same
// binary: two contexts passing control back and forth, no scheduler.
#pragma once

#include <benchmark/benchmark.h>
#include <boost/context/detail/fcontext.hpp>
#include <boost/fiber/all.hpp>

#include "stage2_global_queue/context.h"
#include "stage2_global_queue/stack.h"

namespace gmp::bench {

/// One iteration = two switches (there and back) of gmp_context_switch.
inline void context_switch_gmp(benchmark::State& state) {
  struct Pair {
    stage2::Gobuf main, other;
  } pair;
  stage2::StackPool pool(64 * 1024);
  stage2::Stack stack = pool.alloc();
  stage2::context_init(
      &pair.other, stack.lo, stack.size,
      [](void* arg) {
        auto* p = static_cast<Pair*>(arg);
        for (;;) stage2::gmp_context_switch(&p->other, &p->main);
      },
      &pair);
  for (auto _ : state) stage2::gmp_context_switch(&pair.main, &pair.other);
  state.SetItemsProcessed(state.iterations() * 2);  // items: switches
  pool.free(stack);  // the other context stays suspended forever: fine
}

/// One iteration = two switches of Boost.Context's jump_fcontext.
inline void context_switch_boost(benchmark::State& state) {
  namespace ctx = boost::context::detail;
  stage2::StackPool pool(64 * 1024);
  stage2::Stack stack = pool.alloc();
  ctx::fcontext_t other = ctx::make_fcontext(
      static_cast<char*>(stack.lo) + stack.size, stack.size,
      [](ctx::transfer_t t) {
        for (;;) t = ctx::jump_fcontext(t.fctx, nullptr);
      });
  for (auto _ : state) other = ctx::jump_fcontext(other, nullptr).fctx;
  state.SetItemsProcessed(state.iterations() * 2);
  pool.free(stack);
}

/// Boost.Fiber: two fibers on one thread yielding to each other, the
/// library's equivalent of the yield workload on one P. Per yield.
inline void fiber_yield_boost(benchmark::State& state) {
  constexpr int kYields = 1000;
  for (auto _ : state) {
    auto yielder = [] {
      for (int i = 0; i < kYields / 2; ++i) boost::this_fiber::yield();
    };
    boost::fibers::fiber a(yielder), b(yielder);
    a.join();
    b.join();
  }
  state.SetItemsProcessed(state.iterations() * kYields);
}

}  // namespace gmp::bench
