#!/usr/bin/env bash
# run_pairs.py: each workload's stage rows, then its Go rows at the procs
# counts the filter kept, in the suite's order; names with regex
# characters ("spawn+join", "(buffered)") matched literally; with
# --passes, the list run that many times and each row the median run.
set -euo pipefail
py=/usr/bin/python3
pairs=$(dirname "$0")/run_pairs.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "run_pairs_test: $*" >&2; exit 1; }

# A stand-in for stages_bench: lists the rows its filter matches (grep -E,
# as Google Benchmark's filter is POSIX extended), or "runs" them: logs
# the rows and writes them as results.
cat >"$tmp/stages" <<'SH'
#!/usr/bin/env bash
rows='spawn+join/stage3_gmp/procs:1/real_time
spawn+join/stage3_gmp/procs:2/real_time
spawn+join/os_threads/real_time
chan ping-pong (buffered)/stage3_gmp/procs:2/real_time
preemption latency/stage5_preemption/none/iterations:5/manual_time'
filter= out=
for a in "$@"; do
  case "$a" in
    --benchmark_filter=*) filter=${a#*=} ;;
    --benchmark_out=*) out=${a#*=} ;;
  esac
done
matched=$(printf '%s\n' "$rows" | grep -E -- "$filter" || true)
if [ -z "$out" ]; then printf '%s\n' "$matched"; exit 0; fi
printf '%s\n' "$matched" | sed 's/^/stages /' >>"$LOG"
# Its real_time: 3, 1, 2 in its first, second and third runs of a row.
n=$(( $(cat "$COUNT" 2>/dev/null || echo 0) + 1 )); echo "$n" >"$COUNT"
t=$(( (n - 1) % 3 )); t=$(( t == 0 ? 3 : t ))
printf '%s\n' "$matched" | awk -v t="$t" 'BEGIN { printf "{\"context\": {}, \"benchmarks\": [" }
  { printf "%s{\"name\": \"%s\", \"real_time\": %d}", (NR > 1 ? ", " : ""), $0, t }
  END { print "]}" }' >"$out"
SH
# A stand-in for the Go reference: logs its filter, prints no rows.
cat >"$tmp/go" <<'SH'
#!/usr/bin/env bash
echo "go $*" >>"$LOG"
echo '{"context": {}, "benchmarks": []}'
SH
chmod +x "$tmp/stages" "$tmp/go"
export LOG=$tmp/log COUNT=$tmp/count

"$py" "$pairs" "$tmp/stages" --filter 'procs:2|os_threads|latency' \
  --out "$tmp/b.json" --go "$tmp/go" --go-out "$tmp/g.json" -- --x ||
  fail "the run failed"
cat >"$tmp/want" <<'WANT'
stages spawn+join/stage3_gmp/procs:2/real_time
stages spawn+join/os_threads/real_time
go -filter ^(spawn\+join/go/procs:2|spawn\+join/go)$
stages chan ping-pong (buffered)/stage3_gmp/procs:2/real_time
go -filter ^(chan ping-pong \(buffered\)/go/procs:2)$
stages preemption latency/stage5_preemption/none/iterations:5/manual_time
go -filter ^(preemption latency/go)$
WANT
diff -u "$tmp/want" "$tmp/log" || fail "order or rows (above)"
[ "$("$py" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["benchmarks"]))' "$tmp/b.json")" = 4 ] ||
  fail "merged results: $(cat "$tmp/b.json")"

# Three passes: the same order three times; each row keeps the run with
# the median real_time (2: the third pass of a one-workload list).
: >"$LOG"; : >"$COUNT"
"$py" "$pairs" "$tmp/stages" --filter 'buffered' --passes 3 \
  --out "$tmp/b3.json" --go "$tmp/go" --go-out "$tmp/g3.json" -- ||
  fail "the run of three passes failed"
[ "$(grep -c '^go ' "$LOG")" = 3 ] || fail "three passes: $(cat "$LOG")"
"$py" -c 'import json,sys; b=json.load(open(sys.argv[1]))["benchmarks"]
assert [(r["name"], r["real_time"]) for r in b] == [
    ("chan ping-pong (buffered)/stage3_gmp/procs:2/real_time", 2)], b' \
  "$tmp/b3.json" || fail "three passes: not one row, the median run"

# A filter that starts with '-' (Google Benchmark's negative filter, as
# `./course bench --quick` passes one) is a value, not an option.
"$py" "$pairs" "$tmp/stages" '--filter=-procs:2|procs:1' --out "$tmp/neg.json" -- \
  2>/dev/null || fail "a filter starting with '-' was not taken as a value"

# A filter that matches nothing: an error, no results.
if "$py" "$pairs" "$tmp/stages" --filter 'nothing' --out "$tmp/none.json" 2>/dev/null; then
  fail "an empty match succeeded"
fi
[ ! -e "$tmp/none.json" ] || fail "an empty match wrote results"
echo "run_pairs_test: ok"
