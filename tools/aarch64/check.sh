#!/usr/bin/env bash
# Builds stage 2 (its context switch, stacks and scheduler) and its tests for
# aarch64 with Debian's cross compiler, and runs them under qemu-user.
#
#   tools/aarch64/check.sh            build and run every stage 2 test
#   tools/aarch64/check.sh FILTER     only tests matching a gtest filter
#
# Outside Bazel on purpose: Bazel 4.2.3's C++ toolchain configuration for
# cross-compiling is far longer than this script. Needs the Debian packages
# g++-aarch64-linux-gnu and qemu-user (`./course aarch64` installs them and
# runs this).
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/../.."

# Two tests stay native: qemu-user accepts MADV_GUARD_INSTALL but ignores
# it (the pool notices and uses mprotect guards, two mappings per stack, so
# 100,000 stacks exceed vm.max_map_count), and it manages the guest's
# mappings itself (so running out of them looks different).
filter="${1:-*}-*HundredThousand*:*RunningOutOfMappings*"
out=${TMPDIR:-/tmp}/gmp-aarch64
mkdir -p "$out"
CXX=aarch64-linux-gnu-g++
FLAGS=(-std=c++20 -O1 -g -Wall -Wextra -Werror -pthread -I. -fstack-clash-protection
       -isystem /usr/src/googletest/googletest/include
       -isystem /usr/src/googletest/googletest)

sources=(common/check.cc common/errors.cc common/exit.cc common/fault.cc
         common/gomaxprocs_env.cc common/note.cc common/runtime_lock.cc
         common/wait_reason.cc
         stage2_global_queue/checkdead.cc stage2_global_queue/config.cc
         stage2_global_queue/context.cc stage2_global_queue/context_aarch64.S
         stage2_global_queue/g.cc stage2_global_queue/goroutine_dump.cc
         stage2_global_queue/gfree.cc
         stage2_global_queue/lockosthread.cc stage2_global_queue/proc.cc
         stage2_global_queue/runtime.cc stage2_global_queue/schedule.cc
         stage2_global_queue/timers.cc stage2_global_queue/signals.cc
         stage2_global_queue/stack.cc stage2_global_queue/switch.cc
         stage2_global_queue/template_thread.cc stage2_global_queue/tls.cc
         trace/clock.cc trace/json.cc trace/tracer.cc
         testing/test_main.cc)

echo "aarch64: compiling gtest, common/ and stage2_global_queue/ ($CXX)"
# The newest of the course's headers: an object older than it is rebuilt.
newest_header=$(ls -t common/*.h stage2_global_queue/*.h testing/*.h trace/*.h | head -n 1)
objs=()
compile() {  # source [extra flags...]: one object per source, rebuilt if
  local src=$1 obj="$out/$(echo "$1" | tr / _).o"  # it or a header is newer
  shift
  if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] ||
     { [[ $src != /* ]] && [ "$newest_header" -nt "$obj" ]; }; then
    "$CXX" "${FLAGS[@]}" "$@" -c "$src" -o "$obj"
  fi
  objs+=("$obj")
}
compile /usr/src/googletest/googletest/src/gtest-all.cc -w
for s in "${sources[@]}"; do compile "$s"; done
runtime_objs=("${objs[@]}")

objs=()
compile stage2_global_queue/context_test.cc -O2
"$CXX" -pthread -o "$out/context_test" "${runtime_objs[@]}" "${objs[@]}"
objs=()
compile stage2_global_queue/stage2_test.cc
"$CXX" -pthread -o "$out/stage2_test" "${runtime_objs[@]}" "${objs[@]}"

# Death tests fork without exec ("fast"): exec'ing an aarch64 binary from
# inside qemu-user would need binfmt_misc, which a container may not have.
# gtest warns before each such death test; the warning is not news here.
run() {
  echo "aarch64: running $1 under qemu-aarch64"
  qemu-aarch64 -L /usr/aarch64-linux-gnu "$out/$1" \
    --gtest_death_test_style=fast --gtest_filter="$filter" --gtest_brief=1 2>&1 |
    grep -v -e "Death tests use fork()" -e '^$'
}
run context_test
run stage2_test

# The tracer on aarch64, whose clock there is the generic timer's count
# (trace/clock.h): one test traced (GMP_TRACE, a file per run), and every
# trace it wrote checked.
traces="$out/traces"
rm -rf "$traces"
mkdir -p "$traces"
echo "aarch64: a traced run of stage 2, its traces checked"
GMP_TRACE="$traces/run-%r.json" qemu-aarch64 -L /usr/aarch64-linux-gnu \
  "$out/stage2_test" --gtest_filter='*EveryGoroutineRunsExactlyOnce*' \
  --gtest_brief=1 2>&1 | grep -v '^$'
n=0
for t in "$traces"/*.json; do
  [ -f "$t" ] || continue
  python3 tools/trace/check_trace.py "$t" >/dev/null ||
    { python3 tools/trace/check_trace.py "$t"; exit 1; }
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "aarch64: the traced run wrote no trace"; exit 1; }
echo "aarch64: $n traces, each sound"
echo "aarch64: all passed"
