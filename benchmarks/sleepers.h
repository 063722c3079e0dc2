/// \file
/// The hand-off workload (the notes' blocking call that hands its P off,
/// docs/course/notes.md, with the course's own sizes), shared by the I/O demo
/// (examples/io/demo.cc) and the benchmarks (io_bench.h): 8 goroutines each
/// in a 200 ms blocking call on 1 P, while one more goroutine counts. Where
/// the call holds its P (stage 3: nothing tells the runtime), they run one
/// after another: 1.6 s. Where the P is handed off (stage 4's blocking()),
/// they overlap: 200 ms.
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>

#include "stage4_syscalls/runtime.h"

namespace gmp::bench {

/// Runs the workload on a 1-P runtime of Api; returns the milliseconds
/// until every call returned, and the counter's count in *counted. With
/// kMarked the calls go through stage4::blocking (Api must be stage 4's).
template <class Api, bool kMarked>
double eight_sleepers_ms(long* counted) {
  using Clock = std::chrono::steady_clock;
  typename Api::Config c;
  c.procs = 1;
  c.debug = "";
  typename Api::Runtime rt(c);
  double ms = 0;
  rt.run([&] {
    auto start = Clock::now();
    std::atomic<bool> stop{false};
    typename Api::WaitGroup wg, counter;
    wg.add(8);
    counter.add(1);
    for (int i = 0; i < 8; ++i) {
      Api::go([&] {
        if constexpr (kMarked) {
          stage4::blocking([] { ::usleep(200'000); });
        } else {
          ::usleep(200'000);  // the M, and with it the P, sleep
        }
        wg.done();
      });
    }
    Api::go([&] {
      for (*counted = 0; !stop.load(); ++*counted) Api::yield();
      counter.done();
    });
    wg.wait();
    ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    stop.store(true);
    counter.wait();
  });
  return ms;
}

}  // namespace gmp::bench
