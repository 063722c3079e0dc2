/// \file
/// Go 1.25's default GOMAXPROCS: the CPUs this process may use, capped by
/// its cgroup's CPU bandwidth limit (runtime/cgroup_linux.go and
/// internal/runtime/cgroup).
#pragma once

#include <optional>
#include <string>

namespace gmp::stage3 {

/// The number of CPUs the process may run on (sched_getaffinity), at
/// least 1.
int affinity_cpu_count() noexcept;

/// The CPU bandwidth limit of the cgroup the process is in, in CPUs
/// (quota / period), or nullopt if there is none or it cannot be read. As
/// in Go 1.25, only the process's own (leaf) cgroup is read, v2 (cpu.max)
/// or v1 (cpu.cfs_quota_us / cpu.cfs_period_us), found through
/// /proc/self/mountinfo and /proc/self/cgroup. Every path is prefixed with
/// `root` (tests point it at a fixture tree; "" reads the real files).
std::optional<double> cgroup_cpu_limit(const std::string& root = "");

/// Go 1.25's default: `cpus`, lowered to the cgroup limit rounded up, but
/// never below 2 because of the limit (a limit of 0.5 CPU still gives 2
/// Ps on a machine with 2 or more CPUs).
int default_gomaxprocs(int cpus, std::optional<double> cgroup_limit) noexcept;

}  // namespace gmp::stage3
