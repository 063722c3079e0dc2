/// \file
/// The worker running on the calling thread (stage 1 internal).
#pragma once

namespace gmp::stage1 {

struct Worker;

/// The worker whose thread this is; null on every other thread. Set and
/// cleared by the worker thread itself (thread-local: no sharing).
extern thread_local Worker* tls_worker;

}  // namespace gmp::stage1
