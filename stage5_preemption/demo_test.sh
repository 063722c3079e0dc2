#!/usr/bin/env bash
# The demo runs and shows what stage 5 adds, and where cooperative
# preemption fails, and what the signal changes. Checks what it prints, not how fast anything was.
set -euo pipefail
out=$("$1")
printf '%s\n' "$out"
expect() {
  grep -qE -- "$1" <<<"$out" || { echo "demo_test: missing: $1" >&2; exit 1; }
}
expect "none +loop: u -= 2 only +hung: killed after 1000 ms"
expect "cooperative +loop: u -= 2 only +hung: killed after 1000 ms"
expect "none +loop calls a function +hung: killed after 1000 ms"
expect "cooperative +loop calls a function +main woke after [0-9.]+ ms"
expect "none, 10 ms slice +loop with calls +waited +[0-9.]+ ms"
expect "cooperative, 2 ms slice +loop with calls +waited +[0-9.]+ ms"
# Asynchronous preemption where the build has it (not under ThreadSanitizer).
if grep -qE "^   async " <<<"$out"; then
  expect "async +loop: u -= 2 only +main woke after [0-9.]+ ms"
  expect "async, 10 ms slice +loop without calls +waited +[0-9.]+ ms"
fi
