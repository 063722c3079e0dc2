"""Stage 5's compiler options for preemptible (user) code."""

# The user's code is compiled with a safe point at every function entry
# (GCC's -finstrument-functions calls __cyg_profile_func_enter, preempt.cc),
# as Go's compiler put a check in every function prologue. The runtime's
# own code, the course's headers and the C++ library are left out: a
# goroutine is never preempted inside them.
PREEMPTIBLE_COPTS = [
    "-finstrument-functions",
    "-finstrument-functions-exclude-file-list=/usr/include,external/,common/,stage1_threadpool/,stage2_global_queue/,stage3_gmp/,stage4_syscalls/,stage5_preemption/runtime.h,stage5_preemption/api.h,testing/,trace/tracer.h",
]
