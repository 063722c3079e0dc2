#!/usr/bin/env bash
# The demo runs and shows what stage 4 adds. Checks what it prints, not how
# fast anything was.
set -euo pipefail
out=$("$1" --quick)
printf '%s\n' "$out"
expect() {
  grep -qE -- "$1" <<<"$out" || { echo "demo_test: missing: $1" >&2; exit 1; }
}
expect "Echo server: [0-9]+ concurrent loopback connections"
expect "stage 4: goroutines \+ netpoller +[0-9]+ "
expect "stage 1: a thread per connection +[0-9]+ "
expect "G[0-9]+ on M[0-9]+/P0: enters the call"
expect "G[0-9]+ on M[0-9]+/P0: counting"
expect "back \(exitsyscall"
expect "stage 3 \(the call holds the P\): +[0-9]+ ms"
expect "stage 4 \(blocking\(\), P handed off\): +[0-9]+ ms"
expect "Every blocking\(\) call gives its P away"
expect "sleep_for took [0-9]+ ms"
