#!/usr/bin/env bash
# The patterns demo runs on every green-thread stage and both ways agree.
# Checks what it prints, not how fast anything was.
set -euo pipefail
out=$("$1" --n=3000 --procs=2)
printf '%s\n' "$out"
expect() {
  grep -qE -- "$1" <<<"$out" || { echo "demo_test: missing: $1" >&2; exit 1; }
}
for stage in stage2_global_queue stage3_gmp stage4_syscalls stage5_preemption; do
  expect "$stage +goroutine per item .* 3001 .*sum [0-9]+"
  expect "$stage +worker pool .* 3 .*sum [0-9]+"
done
# One sum for all eight rows.
sums=$(grep -oE 'sum [0-9]+' <<<"$out" | sort -u | wc -l)
[ "$sums" -eq 1 ] || { echo "demo_test: the rows disagree" >&2; exit 1; }
if "$1" --procs=0 2>/dev/null; then
  echo "demo_test: --procs=0 was accepted" >&2; exit 1
fi
