#!/usr/bin/env bash
# The I/O demo runs and shows stage 4 against stages 1 and 3. Checks what
# it prints, not how fast anything was.
set -euo pipefail
out=$("$1" --quick)
printf '%s\n' "$out"
expect() {
  grep -qE -- "$1" <<<"$out" || { echo "demo_test: missing: $1" >&2; exit 1; }
}
expect "Echo server: [0-9]+ concurrent loopback connections"
expect "stage 4: goroutines \+ netpoller +[0-9]+ "
expect "stage 1: a thread per connection +[0-9]+ "
expect "stage 3 \(the call holds the P\): +[0-9]+ ms"
expect "stage 4 \(blocking\(\), P handed off\): +[0-9]+ ms"
if "$1" --connections=0 2>/dev/null; then
  echo "demo_test: --connections=0 was accepted" >&2; exit 1
fi
