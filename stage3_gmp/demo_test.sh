#!/usr/bin/env bash
# The demo runs and shows what stage 3 adds. Checks what it prints, not how
# fast anything was.
set -euo pipefail
out=$("$1" --procs=2 --quick)
printf '%s\n' "$out"
expect() {
  grep -qE -- "$1" <<<"$out" || { echo "demo_test: missing: $1" >&2; exit 1; }
}
expect "One P makes all the work: main makes 400 goroutines on its P, 2 Ps in all"
expect "Each spins 1000 us of CPU, 400 ms in all: ideally 200 ms on 2 Ps"
expect "GRQ [0-9]+, P queues \[[0-9]+ [0-9]+\]"
expect "every queue empty"
expect "steals: [0-9]+, moving [0-9]+ goroutines"
expect "overflows of a full local queue to the GRQ \(half of it each\): [0-9]+"
expect "goroutines the GRQ gave \(main among them\): [0-9]+, in batches: [0-9]+"
expect "Spawn storm"
