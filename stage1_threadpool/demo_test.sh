#!/usr/bin/env bash
# The demo runs and shows both of stage 1's problems (a small thread count
# keeps it quick). Checks what it prints, not how fast anything was, and
# that the README's run of it shows lines it still prints.
set -euo pipefail
out=$("$1" --threads=64)
printf '%s\n' "$out"
# The README's run of the demo shows only lines the demo prints.
/usr/bin/python3 "$3" check "$2" <(printf '%s\n' "$out")
expect() {
  grep -qF -- "$1" <<<"$out" || { echo "demo_test: missing: $1" >&2; exit 1; }
}
expect "63 goroutines blocked at once"
expect "fatal error: thread pool starvation - deadlock!"
expect "goroutine 3 [runnable]: queued, never started"
expect "exit status 2"
expect "main returned: the program finished normally"
