#!/usr/bin/env bash
# Traces the fixed workload (workload.cc) on every green-thread stage and
# checks each trace's structure with tools/trace/check_trace.py: valid
# JSON, balanced slices, every created goroutine ends, steal flows between
# real Ps, hand-offs between Ms. Which scheduler moves happen depends on
# timing, so a stage's expected moves (a steal on stage 3 and later, a
# hand-off and a syscall on 4-5, a preemption on 5) may take a few runs to
# appear; every run's structure must be sound.
set -euo pipefail
workload=$1
check=$2
tmp=${TEST_TMPDIR:-$(mktemp -d)}
fail=0

declare -A expect=(
  [stage2]=""
  [stage3]="steal,grq"
  [stage4]="steal,handoff,syscall"
  [stage5]="handoff,syscall,preempt"
)

for stage in stage2 stage3 stage4 stage5; do
  ok=0
  for attempt in 1 2 3 4 5 6 7 8; do
    out="$tmp/$stage.$attempt.json"
    "$workload" "$stage" "$out" 2 >/dev/null
    # Structure first: it must hold on every run.
    if ! python3 "$check" "$out"; then
      echo "FAIL: $stage: the trace's structure is broken (run $attempt)"
      fail=1
      ok=broken
      break
    fi
    if python3 "$check" "$out" --expect "${expect[$stage]}" >/dev/null; then
      ok=1
      break
    fi
    echo "($stage: run $attempt lacked one of: ${expect[$stage]}; again)"
  done
  if [[ $ok == 0 ]]; then
    echo "FAIL: $stage: never showed ${expect[$stage]} in 8 runs"
    fail=1
  fi
done

# The checker must pass sound traces and reject broken ones, each for its
# own reason (fixtures in tools/trace/testdata).
testdata=$(dirname "$check")/testdata
for good in "$testdata"/ok_*.json; do
  if ! python3 "$check" "$good"; then
    echo "FAIL: check_trace rejected $(basename "$good")"
    fail=1
  fi
done
for bad in "$testdata"/bad_*.json; do
  want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["otherData"]["expected_error"])' "$bad")
  if got=$(python3 "$check" "$bad"); then
    echo "FAIL: check_trace accepted $(basename "$bad")"
    fail=1
  elif ! grep -qF -- "$want" <<<"$got"; then
    echo "FAIL: $(basename "$bad"): expected \"$want\" in:"
    echo "$got"
    fail=1
  fi
done

exit $fail
