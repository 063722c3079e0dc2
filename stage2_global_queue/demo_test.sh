#!/usr/bin/env bash
# The demo runs and shows what stage 2 adds (fewer goroutines keep it
# quick). Checks what it prints, not how fast anything was, and that the
# README's run of it shows lines it still prints.
set -euo pipefail
out=$("$1" --goroutines=2000)
printf '%s\n' "$out"
# The README's run of the demo shows only lines the demo prints.
/usr/bin/python3 "$3" check "$2" <(printf '%s\n' "$out")
expect() {
  grep -qF -- "$1" <<<"$out" || { echo "demo_test: missing: $1" >&2; exit 1; }
}
expect "2000 goroutines parked on one channel, on 2 OS threads"
expect "close(ch) woke them all"
expect "finished on a single M"
expect "lock/yield"
