// Exercise 18, reference solution: Go's per-P timer heap (runtime/time.go,
// Go 1.19): siftupTimer, siftdownTimer, doaddtimer, deltimer, runtimer and
// checkTimers' clean-up, clearDeletedTimers and timerHeapify.
#include "exercises/18_timer_heap/timers.h"

#include <stdexcept>
#include <utility>

namespace gmp::exercises::timers {

void siftup(P& pp, std::size_t i) {
  Timer* t = pp.timers[i];
  while (i > 0) {
    std::size_t parent = (i - 1) / 4;
    if (!less(pp, t, pp.timers[parent])) break;
    pp.timers[i] = pp.timers[parent];  // the parent moves down
    i = parent;
  }
  pp.timers[i] = t;
}

void siftdown(P& pp, std::size_t i) {
  const std::size_t n = pp.timers.size();
  Timer* t = pp.timers[i];
  for (;;) {
    std::size_t c = 4 * i + 1;  // the first child
    if (c >= n) break;
    // The earliest of up to four children: Go compares them in pairs.
    std::size_t best = c;
    for (std::size_t k = c + 1; k < c + 4 && k < n; ++k) {
      if (less(pp, pp.timers[k], pp.timers[best])) best = k;
    }
    if (!less(pp, pp.timers[best], t)) break;
    pp.timers[i] = pp.timers[best];  // the child moves up
    i = best;
  }
  pp.timers[i] = t;
}

namespace {

void update_timer0_when(P& pp) {
  pp.timer0_when = pp.timers.empty() ? 0 : pp.timers[0]->when;
}

// Go's dodeltimer0: the top leaves; the last timer takes its place and
// moves down.
void deltimer0(P& pp) {
  std::size_t last = pp.timers.size() - 1;
  if (last > 0) pp.timers[0] = pp.timers[last];
  pp.timers.pop_back();
  if (last > 0) siftdown(pp, 0);
}

}  // namespace

void addtimer(P& pp, Timer& t) {
  if (t.status != Status::kRemoved) {
    throw std::logic_error("addtimer called with initialized timer");
  }
  if (t.when <= 0) throw std::logic_error("timer when must be positive");
  if (t.period < 0) throw std::logic_error("timer period must be non-negative");
  t.status = Status::kWaiting;
  pp.timers.push_back(&t);
  siftup(pp, pp.timers.size() - 1);
  update_timer0_when(pp);  // Go wakes the netpoller if t is now the earliest
}

bool deltimer(P& pp, Timer& t) {
  if (t.status != Status::kWaiting) return false;  // fired, deleted, never added
  // Marked, not removed: finding t in the heap would cost O(n), and
  // removing it O(log n); a stopped timer is cleaned out when it reaches
  // the top, or with all the others once they are many.
  t.status = Status::kDeleted;
  ++pp.deleted;
  return true;
}

int check_timers(P& pp, std::int64_t now) {
  int ran = 0;
  while (!pp.timers.empty()) {
    Timer* t = pp.timers[0];
    if (t->status == Status::kDeleted) {  // Go's runtimer: timerDeleted
      deltimer0(pp);
      t->status = Status::kRemoved;
      --pp.deleted;
      continue;
    }
    if (t->when > now) break;  // the earliest is not due: none is
    if (t->period > 0) {
      // The next deadline after now (Go: when += period * (1 + -delta/period),
      // delta = when - now <= 0): a late periodic timer does not fire once
      // per missed period.
      t->when += t->period * (1 + (now - t->when) / t->period);
      siftdown(pp, 0);
    } else {
      deltimer0(pp);
      t->status = Status::kRemoved;
    }
    ++ran;
    if (t->f) t->f(*t);  // Go runs it with the timers lock released
  }
  if (pp.deleted > static_cast<int>(pp.timers.size()) / 4) clear_deleted_timers(pp);
  update_timer0_when(pp);
  return ran;
}

void clear_deleted_timers(P& pp) {
  std::size_t kept = 0;
  for (Timer* t : pp.timers) {
    if (t->status == Status::kDeleted) {
      t->status = Status::kRemoved;
    } else {
      pp.timers[kept++] = t;
    }
  }
  pp.timers.resize(kept);
  pp.deleted = 0;
  // timerHeapify: every parent, from the last one up, moves down: O(n).
  if (kept > 1) {
    for (std::size_t i = (kept - 2) / 4 + 1; i-- > 0;) siftdown(pp, i);
  }
  update_timer0_when(pp);
}

}  // namespace gmp::exercises::timers
