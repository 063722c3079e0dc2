#!/usr/bin/env bash
# The site's tools do what they say: the link check finds each kind of
# broken reference and passes a sound site; the generators write one
# fragment per stage from the checked-in data.
set -euo pipefail
py=/usr/bin/python3
dir=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "docs_tools_test: $*" >&2; exit 1; }

# A sound site: links to a page, an anchor, an image, and external URLs.
mkdir -p "$tmp/site/img"
printf '<html><body><h2 id="a1">x</h2><a name="n1"></a></body></html>' >"$tmp/site/b.html"
printf 'PNG' >"$tmp/site/img/p.png"
cat >"$tmp/site/index.html" <<'HTML'
<html><head><link href="b.html" rel="stylesheet"></head><body>
<a href="b.html">b</a> <a href="b.html#a1">b1</a> <a href="b.html#n1">n1</a>
<a href="#top" id="top">self</a> <img src="img/p.png">
<a href="https://example.com/x">ext</a> <a href="mailto:x@example.com">m</a>
</body></html>
HTML
out=$("$py" "$dir/check_links.py" "$tmp/site") || fail "a sound site failed: $out"
grep -q "all 6 internal" <<<"$out" || fail "wrong count: $out"

# Each kind of breakage is reported, with the page and the target.
cat >"$tmp/site/bad.html" <<'HTML'
<html><body><a href="missing.html">1</a> <a href="b.html#nope">2</a>
<img src="img/none.png"> <a href="../../etc/passwd">3</a></body></html>
HTML
if out=$("$py" "$dir/check_links.py" "$tmp/site" 2>&1); then
  fail "a broken site passed: $out"
fi
for want in "bad.html: a\[href\] -> missing.html (no such file)" \
            "bad.html: a\[href\] -> b.html#nope (no such anchor)" \
            "bad.html: img\[src\] -> img/none.png (no such file)" \
            "bad.html: a\[href\] -> ../../etc/passwd (outside the site)" \
            "4 broken of"; do
  grep -q -- "$want" <<<"$out" || fail "missing report: $want in: $out"
done

# The generators: one fragment per stage, tables with real rows.
"$py" "$dir/bench_tables.py" docs/benchmarks "$tmp/gen"
for s in stage1_threadpool stage2_global_queue stage3_gmp stage4_syscalls \
         stage5_preemption; do
  grep -q "<td>2</td>" "$tmp/gen/${s}_bench.html" || fail "$s: no procs-2 row"
done
# Exercise lists from points.json: two exercises of stage 3, none of 1.
mkdir -p "$tmp/ex/05_a" "$tmp/ex/07_b" "$tmp/ex/notes"
echo '{"title": "Queue <one>", "stage": "stage3_gmp", "points": {"A.x": 4, "A.y": 6}}' >"$tmp/ex/05_a/points.json"
echo '{"title": "Fair", "stage": "stage3_gmp", "points": {"B.x": 10}}' >"$tmp/ex/07_b/points.json"
"$py" "$dir/exercise_lists.py" "$tmp/ex" "$tmp/gen"
s3=$tmp/gen/stage3_gmp_exercises.html
grep -q "<td>05</td><td>Queue &lt;one&gt;</td><td>10</td>" "$s3" || fail "05 row: $(cat "$s3")"
grep -q "./course grade 07" "$s3" || fail "no 07 row"
grep -q "No graded exercise" "$tmp/gen/stage1_threadpool_exercises.html" ||
  fail "stage 1 should have no exercise"
echo '{"title": "X", "stage": "stage9", "points": {}}' >"$tmp/ex/05_a/points.json"
if "$py" "$dir/exercise_lists.py" "$tmp/ex" "$tmp/gen" 2>/dev/null; then
  fail "exercise_lists accepted an unknown stage"
fi
grep -q "spawn storm" "$tmp/gen/stage3_gmp_bench.html" || fail "stage 3: no spawn storm"
if "$py" "$dir/bench_tables.py" "$tmp/nothing" "$tmp/gen2" 2>/dev/null; then
  fail "bench_tables accepted a missing results directory"
fi
# The figure check: a tagged figure that matches the results passes; a
# republish that moves its row makes it fail, naming the new value, and
# --write rewrites it at its printed precision; a figure without a source
# fails unless the facts list has it for its file; a malformed tag is an
# error of its own (status 2).
mkdir -p "$tmp/res"
cp docs/benchmarks/benchmarks.json docs/benchmarks/go.json "$tmp/res/"
row="skynet/stage3_gmp/procs:1"
fig() { "$py" "$dir/figures.py" --results "$tmp/res" --facts "$tmp/facts.txt" "$@"; }
now=$("$py" - "$tmp/res/benchmarks.json" "$row" <<'PY'
import json, sys
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b["name"].startswith(sys.argv[2] + "/") and "items_per_second" in b:
        print(f"{1e9 / b['items_per_second']:.0f}")
        break
PY
)
[ -n "$now" ] || fail "no published row $row"
printf 'Skynet: %s ns <!-- fig time %s --> per leaf, Go %s.\n' "$now" "$row" "10 ms" >"$tmp/t.md"
echo "$tmp/t.md | 10 ms | Go 1.19 runtime/proc.go forcePreemptNS" >"$tmp/facts.txt"
out=$(fig "$tmp/t.md" 2>&1) || fail "a true figure failed: $out"
"$py" - "$tmp/res/benchmarks.json" "$row" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for b in doc["benchmarks"]:
    if b["name"].startswith(sys.argv[2] + "/") and "items_per_second" in b:
        b["items_per_second"] /= 2  # the republished row: twice the time
json.dump(doc, open(sys.argv[1], "w"))
PY
if out=$(fig "$tmp/t.md" 2>&1); then fail "a moved figure passed: $out"; fi
moved=$(sed -n "s/.*'$now ns' is \([0-9]*\) ns in the results.*/\1/p" <<<"$out")
[ -n "$moved" ] && [ "$moved" -ge $((now * 2 - 1)) ] && [ "$moved" -le $((now * 2 + 1)) ] ||
  fail "the moved figure is not named with its new value: $out"
fig --write "$tmp/t.md" >/dev/null 2>&1 || true
grep -q "Skynet: $moved ns <!-- fig" "$tmp/t.md" || fail "--write: $(cat "$tmp/t.md")"
out=$(fig "$tmp/t.md" 2>&1) || fail "after --write: $out"
: >"$tmp/facts.txt"
if out=$(fig "$tmp/t.md" 2>&1); then fail "an unlisted fact passed: $out"; fi
grep -q "'10 ms' has no source" <<<"$out" || fail "unlisted fact not named: $out"
printf 'Skynet: %s ns<!-- fig time %s --> per leaf.\n' "$moved" "$row" >"$tmp/sp.md"
if out=$(fig "$tmp/sp.md" 2>&1); then fail "a tag before a space passed: $out"; fi
grep -q "a space that Doxygen drops" <<<"$out" || fail "spacing not named: $out"
fig --write "$tmp/sp.md" >/dev/null 2>&1 || true
grep -q "ns <!-- fig" "$tmp/sp.md" || fail "--write kept the spacing: $(cat "$tmp/sp.md")"
# A direction the text states: "X% longer" must stay above 0, and a ratio
# tagged "below 1" below 1; the skynet row above now takes twice as long.
printf 'Skynet takes 100%% <!-- fig more %s | %s --> longer, %s.\n' \
  "$row" "skynet/stage3_gmp/procs:2" "fine" >"$tmp/dir.md"
fig --write "$tmp/dir.md" >/dev/null 2>&1 || true
printf 'and 0.5x <!-- fig ratio %s | %s | below 1 --> the time.\n' \
  "skynet/stage3_gmp/procs:2" "$row" >>"$tmp/dir.md"
out=$(fig --write "$tmp/dir.md" 2>&1) || fail "true directions failed: $out"
printf 'Skynet takes 5%% <!-- fig more %s | %s --> longer.\n' \
  "skynet/stage3_gmp/procs:2" "$row" >"$tmp/dir2.md"
printf 'and 2.0x <!-- fig ratio %s | %s | below 1 --> the time.\n' \
  "$row" "skynet/stage3_gmp/procs:2" >>"$tmp/dir2.md"
if out=$(fig --write "$tmp/dir2.md" 2>&1); then fail "false directions passed: $out"; fi
[ "$(grep -c "rewrite the sentence" <<<"$out")" = 2 ] ||
  fail "a false direction not named: $out"
# A true direction that its figure's rounding hides ("0% longer", "1.0x"
# tagged below 1) fails too, also with --write.
mkdir -p "$tmp/near"
printf '{"benchmarks": [%s, %s]}\n' \
  '{"name": "a/x", "run_type": "iteration", "items_per_second": 1000000}' \
  '{"name": "b/x", "run_type": "iteration", "items_per_second": 1003000}' \
  >"$tmp/near/benchmarks.json"
printf 'a takes 0%% <!-- fig more a/x | b/x --> longer, b 1.0x <!-- fig ratio b/x | a/x | below 1 --> the time.\n' \
  >"$tmp/near.md"
if out=$("$py" "$dir/figures.py" --results "$tmp/near" --facts "$tmp/facts.txt" \
    --write "$tmp/near.md" 2>&1); then
  fail "a direction its rounding hides passed: $out"
fi
[ "$(grep -c "give it more decimals" <<<"$out")" = 2 ] ||
  fail "a hidden direction not named: $out"
printf 'a takes 0.3%% <!-- fig more a/x | b/x --> longer, b 0.997x <!-- fig ratio b/x | a/x | below 1 --> the time.\n' \
  >"$tmp/near.md"
out=$("$py" "$dir/figures.py" --results "$tmp/near" --facts "$tmp/facts.txt" \
    "$tmp/near.md" 2>&1) || fail "directions shown with enough decimals failed: $out"
printf 'x 1 ms<!-- fig ratio %s | %s | under 1 -->\n' "$row" "$row" >"$tmp/bad.md"
set +e; fig "$tmp/bad.md" >/dev/null 2>&1; st=$?; set -e
[ "$st" = 2 ] || fail "a malformed claim gave status $st, not 2"
printf 'x 1 ms<!-- fig speed %s -->\n' "$row" >"$tmp/bad.md"
set +e; fig "$tmp/bad.md" >/dev/null 2>&1; st=$?; set -e
[ "$st" = 2 ] || fail "a malformed tag gave status $st, not 2"

# file_refs.py: every named repository file exists (a tree, not git).
refs() { "$py" "$dir/file_refs.py" "$@"; }
mkdir -p "$tmp/repo/docs/course" "$tmp/repo/labs/runq" "$tmp/repo/third_party"
: >"$tmp/repo/docs/course/glossary.md"
cat >"$tmp/repo/labs/runq/runq.h" <<'EOF'
#include "labs/runq/absent.h"
// See docs/course/glossary.md, ../../docs/course/glossary.md, glossary.md,
// Go's proc.go, gtest/gtest.h and tmp/t.json (no such top-level folder).
EOF
# (The absent names are cut in two here, so this file names none itself.)
style="STYLE"".md" notes="docs/course/notes"".md" gone="../runq/gone"".md"
printf '%s %s\n' "third_party/none"".md" "$style" >"$tmp/repo/third_party/x.md"
out=$(refs "$tmp/repo") || fail "sound names failed: $out"
printf 'Follow %s and %s, or %s.\n' "$style" "$notes" "$gone" \
  >"$tmp/repo/labs/runq/README.md"
if out=$(refs "$tmp/repo" 2>&1); then fail "missing files passed: $out"; fi
for want in "labs/runq/README.md:1: $style: no such file" \
            "labs/runq/README.md:1: $notes: no such file" \
            "labs/runq/README.md:1: $gone: no such file" \
            "3 named files do not exist"; do
  grep -q -- "$want" <<<"$out" || fail "file_refs missed: $want in: $out"
done
# A slip in a top folder's name, another project's file, an ignored line.
rm "$tmp/repo/labs/runq/README.md"
g="docs/course/g"".md"
printf 'See %s and Go'"'"'s HACKING.md;\nno %s here (file_refs: ignore).\n' \
  "stage_gpm""/x.h" "STYLE"".md" >"$tmp/repo/$g"
mkdir -p "$tmp/repo/stage_gmp" && : >"$tmp/repo/stage_gmp/x.h"
if out=$(refs "$tmp/repo" 2>&1); then fail "a slip passed: $out"; fi
grep -q "$g:1: stage_gpm/x.h: no such file" <<<"$out" || fail "slip not named: $out"
grep -q "HACKING\|STYLE" <<<"$out" && fail "outside or ignored names flagged: $out"
rm "$tmp/repo/$g"

# demo_blocks.py: the README's run is the demo's lines, in order.
blocks() { "$py" "$dir/demo_blocks.py" "$@"; }
printf 'a run\n  took 5 ms\nwith 2 workers:\n  starved\n' >"$tmp/run.txt"
printf '# X\n<!-- demo:begin (written by hand here) -->\nold\n<!-- demo:end -->\nafter\n' >"$tmp/R.md"
blocks write "$tmp/R.md" "$tmp/run.txt" "a test" >/dev/null || fail "demo_blocks write failed"
grep -q "^after$" "$tmp/R.md" && grep -q "One run, on a test:" "$tmp/R.md" || fail "write: $(cat "$tmp/R.md")"
printf 'a run\n  took 17 ms\nwith 3 workers:\n  starved\n' >"$tmp/run2.txt"
out=$(blocks check "$tmp/R.md" "$tmp/run2.txt") || fail "numbers aside, the run matches: $out"
printf 'a run\nwith 2 workers:\n  took 5 ms\n  starved\n' >"$tmp/run3.txt"
if out=$(blocks check "$tmp/R.md" "$tmp/run3.txt" 2>&1); then fail "moved lines passed: $out"; fi
printf 'a run\n  took 5 ms\nwith 2 workers:\n  starved\n  and explained\n' >"$tmp/run4.txt"
if out=$(blocks check "$tmp/R.md" "$tmp/run4.txt" 2>&1); then fail "a dropped line passed: $out"; fi
grep -q "shows 4 lines; the demo prints 5" <<<"$out" || fail "count not named: $out"

echo "docs_tools_test: ok"
