/// \file
/// Faults in stage 1's goroutines (stage 1 internal): a worker's thread
/// reports them as Go does (common/fault.h), its goroutine being the task
/// it runs on its own thread stack.
#pragma once

#include "common/fault.h"

namespace gmp::stage1 {

struct Worker;

/// Go's fault reports for the calling worker's goroutines, while it lives.
/// Made by the worker's thread when it starts (it records the thread's
/// stack and guard in `w`).
class WorkerFaultReports {
 public:
  /// Starts reporting faults of the goroutines `w` runs.
  explicit WorkerFaultReports(Worker* w);

 private:
  FaultReports reports_;
};

}  // namespace gmp::stage1
