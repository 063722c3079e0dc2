// Exercise 09, reference solution: Go's wakep,
// findRunnable's spinning -> idle transition (the "delicate dance" of
// proc.go's essay "Worker thread parking/unparking") and resetspinning.
//
// Every access to nmspinning_ is seq_cst: together with the seq_cst size
// of the queues (TaskQueue) and npidle_ (pidleput), the
// submitter's "queue the task, then read npidle and nmspinning" and the
// worker's "publish idle, drop spinning, then read the queues" fall into
// one total order, so at least one side sees the other (spinning.h).
#include "exercises/09_spinning_wakeup/spinning.h"

namespace gmp::exercises::spinning {

void Pool::wakep() {
  // seq_cst: the submitter's loads come after its task in the total order
  // (pairs with pidleput's increment, read by the worker's re-check side).
  if (npidle_.load(std::memory_order_seq_cst) == 0) {
    return;  // nobody idle: every worker will look for work on its own
  }
  // Be conservative: one spinning worker at a time is enough to find the
  // task; it wakes the next one when it finds work (resetspinning).
  int expected = 0;
  if (nmspinning_.load(std::memory_order_seq_cst) != 0 ||
      !nmspinning_.compare_exchange_strong(expected, 1,
                                           std::memory_order_seq_cst)) {
    return;  // a spinner exists: its re-check after it stops will see the task
  }
  // An idle worker to wake; with none left (it took itself back, or
  // another wakep got it), pidleget_spinning gives our count back.
  Worker* w = pidleget_spinning();
  if (w == nullptr) return;
  startm(*w);  // counted by our CAS; w wakes up spinning
}

Task Pool::find_runnable(Worker& w) {
  for (;;) {
    if (stopping()) return {};
    if (Task t = runqget(w)) return t;
    if (Task t = globrunqget()) return t;
    // Look at the others' queues as a spinning worker: while we are
    // counted, submitters leave the waking to us.
    if (!w.spinning.load(std::memory_order_relaxed)) {  // only we write it now
      w.spinning.store(true, std::memory_order_relaxed);
      // seq_cst: submitters that read nmspinning after this rely on us.
      nmspinning_.fetch_add(1, std::memory_order_seq_cst);
    }
    if (Task t = runqsteal(w)) return t;  // the caller calls resetspinning

    // Nothing anywhere: the delicate dance.
    // 1. Publish that we are idle (Go: releasep + pidleput).
    pidleput(w);
    // 2. Stop spinning. seq_cst: this store must be ordered before the
    //    loads of step 3 (the StoreLoad; pairs with wakep's loads).
    w.spinning.store(false, std::memory_order_relaxed);
    if (nmspinning_.fetch_sub(1, std::memory_order_seq_cst) <= 0) {
      fatal("findRunnable: negative nmspinning", w.id);
    }
    // 3. Look at every queue again: a task queued while we were still
    //    counted as spinning woke nobody, so it is ours to find.
    if (checkrunqs()) {
      if (pidleremove(w)) {
        w.spinning.store(true, std::memory_order_relaxed);
        // seq_cst: as every nmspinning access.
        nmspinning_.fetch_add(1, std::memory_order_seq_cst);
        continue;  // search again, spinning
      }
      // A wakep took us off the idle list first and posted our note
      // (startm keeps our spinning flag and the count in step):
      // notesleep receives that wake-up at once.
    }
    // 4. Sleep until a wakep (or shutdown) wakes us; then search again.
    notesleep(w);
  }
}

void Pool::resetspinning(Worker& w) {
  if (!w.spinning.load(std::memory_order_relaxed)) {
    fatal("resetspinning: not a spinning worker", w.id);
  }
  w.spinning.store(false, std::memory_order_relaxed);
  // seq_cst: ordered before wakep's loads, like any nmspinning access.
  if (nmspinning_.fetch_sub(1, std::memory_order_seq_cst) <= 0) {
    fatal("resetspinning: negative nmspinning", w.id);
  }
  // While we spun, submitters woke nobody: if we were the last spinner,
  // wake another for the work that may be queued behind our task.
  wakep();
}

}  // namespace gmp::exercises::spinning
