#!/usr/bin/env bash
# The demo runs and shows what stage 4 adds. Checks what it prints, not how
# fast anything was.
set -euo pipefail
out=$("$1")
printf '%s\n' "$out"
expect() {
  grep -qE -- "$1" <<<"$out" || { echo "demo_test: missing: $1" >&2; exit 1; }
}
expect "G[0-9]+ on M[0-9]+/P0: enters the call"
expect "G[0-9]+ on M[0-9]+/P0: counting"
expect "back \(exitsyscall"
expect "Every blocking\(\) call gives its P away"
expect "sleep_for took [0-9]+ ms"
