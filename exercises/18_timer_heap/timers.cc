// Exercise 18: write these functions (see README.md and timers.h).
#include "exercises/18_timer_heap/timers.h"

#include "exercises/testing/skeleton.h"

namespace gmp::exercises::timers {

void siftup(P& pp, std::size_t i) {
  (void)pp;
  (void)i;
  not_written("siftup (exercises/18_timer_heap/timers.cc)");
}

void siftdown(P& pp, std::size_t i) {
  (void)pp;
  (void)i;
  not_written("siftdown (exercises/18_timer_heap/timers.cc)");
}

void addtimer(P& pp, Timer& t) {
  (void)pp;
  (void)t;
  not_written("addtimer (exercises/18_timer_heap/timers.cc)");
}

bool deltimer(P& pp, Timer& t) {
  (void)pp;
  (void)t;
  not_written("deltimer (exercises/18_timer_heap/timers.cc)");
}

int check_timers(P& pp, std::int64_t now) {
  (void)pp;
  (void)now;
  not_written("check_timers (exercises/18_timer_heap/timers.cc)");
}

void clear_deleted_timers(P& pp) {
  (void)pp;
  not_written("clear_deleted_timers (exercises/18_timer_heap/timers.cc)");
}

}  // namespace gmp::exercises::timers
