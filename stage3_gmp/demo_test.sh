#!/usr/bin/env bash
# The demo runs and shows what stage 3 adds. Checks what it prints, not how
# fast anything was.
set -euo pipefail
out=$("$1" --procs=2 --quick)
printf '%s\n' "$out"
expect() {
  grep -qE -- "$1" <<<"$out" || { echo "demo_test: missing: $1" >&2; exit 1; }
}
expect "Work stealing: 400 goroutines made on one P, 2 Ps in all"
expect "P queues \[[0-9]+ [0-9]+\]"
expect "[0-9]+ steals moved [0-9]+ goroutines"
expect "Spawn storm"
