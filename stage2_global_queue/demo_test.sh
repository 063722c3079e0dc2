#!/usr/bin/env bash
# The demo runs and shows what stage 2 adds (fewer goroutines keep it
# quick). Checks what it prints, not how fast anything was.
set -euo pipefail
out=$("$1" --goroutines=2000)
printf '%s\n' "$out"
expect() {
  grep -qF -- "$1" <<<"$out" || { echo "demo_test: missing: $1" >&2; exit 1; }
}
expect "2000 goroutines parked on one channel, on 2 OS threads"
expect "close(ch) woke them all"
expect "finished on a single M"
expect "lock/yield"
