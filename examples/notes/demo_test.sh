#!/usr/bin/env bash
# The notes' demo: what each program prints, not how fast. (The notes:
# docs/course/notes.md.)
set -euo pipefail
out=$("$1")
printf '%s\n' "$out"
expect() {
  grep -qE -- "$1" <<<"$out" || { echo "demo_test: missing: $1" >&2; exit 1; }
}
# Note 001: stuck on stages 2-4 with one P; stage 1 and (with asynchronous
# preemption) stage 5 get past the wait.
expect "stage1_threadpool +main woke after .* ms: go 1.13 has never been here"
for stage in stage2_global_queue stage3_gmp stage4_syscalls; do
  expect "$stage +stuck: main never ran again"
done
if grep -q "no asynchronous preemption" <<<"$out"; then
  expect "stage5_preemption +stuck"
else
  expect "stage5_preemption +main woke after .* ms: go 1.13 has never been here"
fi
# Note 003: adaptiveGOMAXPROCS ends with its context. (What it decides
# depends on the CPU this process got, which other processes share: its
# decisions are tested with given readings in notes_test.cc.)
expect "the context is done: adaptiveGOMAXPROCS returned, GOMAXPROCS [12]"
expect "^  1 4 9 16 25 36 49 64$"
expect "processed [0-9]+, skipped [1-9][0-9]* once the context was done \(err: context deadline exceeded\)"
expect "acquire 1: took a slot"
expect "acquire 2: took a slot"
expect "acquire 3: timed out after"
"$1" worker-pool | grep -q "1 4 9" || { echo "demo_test: one program" >&2; exit 1; }
if "$1" nonsense 2>/dev/null; then
  echo "demo_test: an unknown program was accepted" >&2; exit 1
fi
