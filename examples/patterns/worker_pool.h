/// \file
/// The worker pool (the notes' "Worker Pool" pattern, note 003 in
/// docs/course/notes.md): a fixed number of goroutines take jobs from one
/// channel and send results to another.
///
/// ```
///                jobs channel
/// producer  -->  [ 0 1 2 3 4 5 ]  -->  worker 1, worker 2, ... worker N
///                                             |
///  consumer <--  [ r0 r3 r1 ... ]  <----------+   results channel
/// ```
///
/// The number of goroutines does not grow with the number of jobs, so the
/// memory is N stacks and two channel buffers, whatever the input. For
/// CPU-bound work the right N is GOMAXPROCS (the procs a runtime has): more
/// workers cannot run at once, fewer leave Ps idle.
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/stage_api.h"

/// The notes' practical patterns on the course API (examples/patterns/).
namespace gmp::patterns {

/// Runs `process` on every item with `workers` goroutines and returns the
/// results in the items' order (Go's processItems, with the index passed
/// along with each job, as the notes suggest, so that the order survives).
///
/// Must be called from a goroutine of a running runtime of stage `A`.
/// Throws std::invalid_argument if `workers` is below 1. `process` must not
/// throw: as in Go, where a panic in a worker ends the program, an
/// exception escaping a worker goroutine is a fatal error.
template <StageApi A, class Item, class F>
  requires std::invocable<F&, const Item&> &&
           std::default_initializable<std::invoke_result_t<F&, const Item&>>
auto process_items(const std::vector<Item>& items, int workers, F process)
    -> std::vector<std::invoke_result_t<F&, const Item&>> {
  using Result = std::invoke_result_t<F&, const Item&>;
  if (workers < 1) {
    throw std::invalid_argument("process_items: workers must be at least 1, "
                                "got " + std::to_string(workers));
  }
  // [worker pool]
  // Both channels can hold every job, so neither side ever waits for room.
  typename A::template Chan<std::size_t> jobs(items.size());
  typename A::template Chan<std::pair<std::size_t, Result>> results(
      items.size());
  typename A::WaitGroup wg;  // the workers still running
  wg.add(workers);
  for (int w = 0; w < workers; ++w) {
    A::go([&] {
      while (std::optional<std::size_t> i = jobs.recv()) {  // until closed
        results.send({*i, process(items[*i])});
      }
      wg.done();
    });
  }
  for (std::size_t i = 0; i < items.size(); ++i) jobs.send(i);
  jobs.close();  // no more jobs: each worker's loop ends once it is drained

  std::vector<Result> out(items.size());
  for (std::size_t n = 0; n < items.size(); ++n) {
    auto [i, r] = *results.recv();  // in the order they finish
    out[i] = std::move(r);
  }
  wg.wait();  // the workers use `jobs`: they must be gone before it is
  // [worker pool]
  return out;
}

}  // namespace gmp::patterns
