"""The rules for preemptible (user) code, which stage 5 can preempt.

The user's code is compiled with a safe point at every function entry
(GCC's -finstrument-functions calls __cyg_profile_func_enter,
stage5_preemption/preempt.cc), as Go's compiler put a check in every
function prologue. The runtime's own code, the course's headers and the C++
library are left out: a goroutine is never preempted inside them.

They live here, outside the stages, so that every package of user code
loads them without reaching into a stage: stage 5's own tests and demo,
and the programs above the stages (examples/, the trace workload). The
one label they name in a stage, //stage5_preemption:safepoint, becomes a
dependency of the target they make, a program that runs on stage 5: stage
5's own, or one above it.

The options and the safe point go together: code compiled with the options
but linked without //stage5_preemption:safepoint calls glibc's empty
profiling hook instead, and is never preempted, silently. So the options
are private to this file, and the only way to use them is one of the three
macros below, which add both.
"""

_COPTS = [
    "-finstrument-functions",
    "-finstrument-functions-exclude-file-list=/usr/include,external/,common/,stage1_threadpool/,stage2_global_queue/,stage3_gmp/,stage4_syscalls/,stage5_preemption/runtime.h,stage5_preemption/api.h,testing/,trace/tracer.h",
]

_SAFEPOINT = "//stage5_preemption:safepoint"

def _preemptible(kwargs):
    kwargs["copts"] = _COPTS + kwargs.get("copts", [])
    deps = kwargs.get("deps", [])
    kwargs["deps"] = deps + ([] if _SAFEPOINT in deps else [_SAFEPOINT])
    return kwargs

def preemptible_cc_library(name, **kwargs):
    """A cc_library of user code: preemptible on stage 5."""
    native.cc_library(name = name, **_preemptible(kwargs))

def preemptible_cc_binary(name, **kwargs):
    """A cc_binary of user code: preemptible on stage 5."""
    native.cc_binary(name = name, **_preemptible(kwargs))

def preemptible_cc_test(name, **kwargs):
    """A cc_test of user code: preemptible on stage 5."""
    native.cc_test(name = name, **_preemptible(kwargs))
