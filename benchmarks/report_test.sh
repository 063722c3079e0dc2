#!/usr/bin/env bash
# report.py: a filtered publish (--merge) replaces the rows it remeasured,
# keeps the others with the machine they ran on, and never takes a ratio
# between figures of two machines.
set -euo pipefail
py=/usr/bin/python3
report=$(dirname "$0")/report.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "report_test: $*" >&2; exit 1; }

# One result: name, ns per item (items_per_second = 1e9 / ns).
row() { printf '{"name": "%s", "run_type": "iteration", "real_time": 1, "time_unit": "ns", "items_per_second": %s}' "$1" "$(awk -v ns="$2" 'BEGIN { printf "%.6f", 1e9 / ns }')"; }
doc() { local IFS=,; printf '{"context": {}, "benchmarks": [%s]}' "$*"; }

# Published earlier on machine X: yield (stage 3 and Go) at procs 1 and 2.
mkdir -p "$tmp/earlier" "$tmp/new" "$tmp/out"
doc "$(row yield/stage3_gmp/procs:1 100)" "$(row yield/stage3_gmp/procs:2 100)" \
    "$(row yield/stage1_threadpool/procs:1 400)" >"$tmp/earlier/b.json"
doc "$(row yield/go/procs:1 200)" "$(row yield/go/procs:2 200)" >"$tmp/earlier/g.json"
"$py" "$report" "$tmp/earlier/b.json" "$tmp/earlier/g.json" --out "$tmp/earlier" \
  --machine "machine X" >/dev/null 2>&1 || fail "the first report failed"
grep -q "^Machine: machine X" "$tmp/earlier/README.md" || fail "no machine line"
grep -q "100 ns (0.25x s1, 0.50x Go)" "$tmp/earlier/README.md" || fail "ratios: $(cat "$tmp/earlier/README.md")"

# Now machine Y remeasures stage 3 at procs 2 only (no Go side this time),
# repeated: its median is the figure, not its mean.
agg() { row "$1_$2" "$3" | sed "s|}\$|, \"run_name\": \"$1\", \"run_type\": \"aggregate\", \"aggregate_name\": \"$2\"}|"; }
doc "$(agg yield/stage3_gmp/procs:2 mean 500)" "$(agg yield/stage3_gmp/procs:2 median 300)" >"$tmp/new/b.json"
# Staged in out/ to be read in earlier/ (--dest): links as from earlier/.
"$py" "$report" "$tmp/new/b.json" --out "$tmp/out" --machine "machine Y" \
  --merge "$tmp/earlier" --dest "$tmp/earlier" >/dev/null 2>&1 ||
  fail "the merged report failed"
md=$tmp/out/README.md
[ "$(grep "How to read" "$md")" = "$(grep "How to read" "$tmp/earlier/README.md")" ] ||
  fail "links not relative to --dest: $(grep "How to read" "$md")"
"$py" - "$tmp/out/benchmarks.json" "$tmp/out/go.json" <<'PY' || fail "merged JSON wrong"
import json, sys
b = {x["name"]: x for x in json.load(open(sys.argv[1]))["benchmarks"]}
g = {x["name"]: x for x in json.load(open(sys.argv[2]))["benchmarks"]}
assert len(b) == 4 and len(g) == 2, (b.keys(), g.keys())
assert "yield/stage3_gmp/procs:2" not in b  # replaced by the repeated one
m = b["yield/stage3_gmp/procs:2_median"]
assert m["machine"] == "machine Y" and abs(m["items_per_second"] - 1e9 / 300) < 1
assert b["yield/stage3_gmp/procs:1"]["machine"] == "machine X"
assert g["yield/go/procs:2"]["machine"] == "machine X"
PY
grep -q "\[A\] machine X" "$md" && grep -q "\[B\] machine Y" "$md" || fail "machines not listed: $(cat "$md")"
grep -q "Measured: procs 1, 2 on \[A\]; procs 2 on \[B\]." "$md" || fail "rows not attributed: $(cat "$md")"
# Procs 2: stage 3 from Y, Go and nothing else from X: no ratio taken.
grep -q "^| 2 | - | - | 300 ns | - | - | 200 ns |" "$md" || fail "a cross-machine ratio: $(grep '^| 2' "$md")"
grep -q "^| 1 | 400 ns (2.00x Go) | - | 100 ns (0.25x s1, 0.50x Go) |" "$md" || fail "procs 1 row: $(grep '^| 1' "$md")"
# The rows of stages 3-5 above 0.8x Go's time are listed, each with what
# it measures there (more Ps than the "2 cores" the machine names: the
# spinning rule) and its counters; rows at or under 0.8x are not.
mkdir -p "$tmp/goal"
counters() { row "$1" "$2" | sed "s|}\$|, $3}|"; }
doc "$(counters yield/stage3_gmp/procs:1 90 '"runnext/op": 0.002, "stolen/op": 0')" \
    "$(counters spawn+join/stage5_preemption/procs:4 85 '"spin_ns/op": 12.5, "steals": 300, "stolen/op": 0.1')" \
    "$(row spawn+join/stage3_gmp/procs:4 80)" "$(row yield/stage4_syscalls/procs:1 50)" >"$tmp/goal/b.json"
doc "$(row yield/go/procs:1 100)" "$(row spawn+join/go/procs:4 100)" >"$tmp/goal/g.json"
"$py" "$report" "$tmp/goal/b.json" "$tmp/goal/g.json" --out "$tmp/goal" \
  --machine "AMD EPYC, 2 cores" >/dev/null 2>&1 || fail "the goal report failed"
goal=$(sed -n '/^## Rows above 0.8x Go/,/^## /p' "$tmp/goal/README.md")
grep -q "^| yield | 1 | stage 3 | 0.90x | one goroutine hands the core to another.* | runnext/op 0.002, stolen/op 0 |$" <<<"$goal" ||
  fail "yield at procs 1 not listed: $goal"
grep -q "^| spawn+join | 4 | stage 5 | 0.85x | more Ps than cores.* | spin_ns/op 12.5, steals 300, stolen/op 0.1 |$" <<<"$goal" ||
  fail "spawn+join at procs 4 not listed with the spinning rule: $goal"
[ "$(grep -c '^| [a-z+]* | [0-9]* | stage' <<<"$goal")" = 2 ] ||
  fail "rows at or under 0.8x listed: $goal"

echo "report_test: ok"
