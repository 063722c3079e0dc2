#!/usr/bin/env bash
# ./course diff (tools/docs/stage_diff.py) on the course's own stages, then
# on a small made-up repository that holds each case the real code may
# lose as it moves: a brace in a comment, a string or a char; an override
# and an inherited function; a stage's own name for a function; a chapter
# that names it and one that does not.
set -euo pipefail
py=/usr/bin/python3
tool=$PWD/tools/docs/stage_diff.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "stage_diff_test: $*" >&2; exit 1; }
sd() { "$py" "$tool" "$@"; }
# section OUT HEADING: the rows of one list of the output without FUNCTION.
section() { sed -n "/^$2 (/,/^\$/p" <<<"$1" | tail -n +2; }
# why OUT: the reason given above a diff, its wrapped lines joined.
why() {
  awk '/^why/ { w = 1; print; next } w && /^    / { print; next } w { exit }' \
    <<<"$1" | tr -s '\n ' ' '
}

# Every adjacent pair runs and lists at least one changed function, each
# with where both stages define it; and the diff of each changed one runs.
for pair in "1 2" "2 3" "3 4" "4 5"; do
  out=$(sd $pair) || fail "diff $pair failed: $out"
  changed=$(section "$out" Changed)
  n=$(grep -cE '\.(cc|h):[0-9]+ +stage[0-9]+_\w+/\w+\.(cc|h):[0-9]+' \
    <<<"$changed" || true)
  [ "$n" -ge 1 ] || fail "diff $pair: no changed function: $out"
  for f in $(cut -c32- <<<"$changed" | awk '{print $1}'); do  # the course's
    d=$(sd $pair "$f") || fail "diff $pair $f failed: $d"
    grep -q '^@@ ' <<<"$d" || fail "diff $pair $f shows no hunk: $d"
  done
done

# Stage 2 -> 3, find_runnable: stage 3's local queue and its stealing are
# added lines; the headers give each definition's file and line, and the
# first hunk is numbered as stage 3's file is.
out=$(sd stage2 stage3 find_runnable)
grep -q '^+.*runq\.owner()\.get()' <<<"$out" || fail "no local queue: $out"
grep -q '^+.*steal_work(m)' <<<"$out" || fail "no stealing: $out"
grep -q '^-.*globrunqget()' <<<"$out" || fail "stage 2's GRQ not removed: $out"
def=$(grep -n 'Runtime::find_runnable(M\* m) {' stage3_gmp/*.cc | cut -d: -f1,2)
grep -q "^+++ stage 3: $def\$" <<<"$out" || fail "header is not $def: $out"
grep -q "^@@ -[0-9,]* +${def#*:}," <<<"$out" ||
  fail "hunk not at ${def#*:}: $out"
grep -q "^why (docs/course/stage3.md:[0-9]*): .*findRunnable" \
  <<<"$(why "$out")" ||
  fail "no reason from the chapter: $out"
if grep -q $'\033' <<<"$out"; then fail "colour, into a pipe: $out"; fi
# The same by Go's name, by the stages' other spellings, and in Go 1.18's.
for args in "2 3 findRunnable" "stage2_global_queue stage3_gmp find_runnable" \
            "2 stage3 findrunnable"; do
  [ "$(sd $args)" = "$out" ] || fail "diff $args differs from find_runnable"
done
# Side by side: both files' lines, the stealing on the right.
out=$(COLUMNS=160 sd 2 3 find_runnable --side-by-side)
grep -qE '^stage 2: stage2_global_queue/\S+:[0-9]+ +stage 3: stage3_gmp/' \
  <<<"$out" || fail "side by side: no headers: $out"
grep -qE ' [|>] +[0-9]+ .*steal_work\(m\)' <<<"$out" ||
  fail "side by side: no stealing on the right: $out"
# Options anywhere on the line, as in git diff: before FUNCTION too.
[ "$(COLUMNS=160 sd 2 3 --side-by-side find_runnable)" = "$out" ] ||
  fail "--side-by-side before FUNCTION differs"
[ "$(sd 2 3 -U 1 find_runnable)" = "$(sd 2 3 find_runnable -U 1)" ] ||
  fail "-U 1 before FUNCTION differs"

# Stage 3 -> 4: find_runnable is stage 3's in both, and calls stage 4's
# poll_network, whose diff is the poll step; stage 4's chapter says why.
out=$(sd 3 4 findRunnable)
grep -q "the same (inherited from stage 3)" <<<"$out" || fail "3 4: $out"
grep -q "stage 3 and stage 4 differ in: .*poll_network" <<<"$out" ||
  fail "3 4: find_runnable's hook: $out"
# A hook one call further down: stage 3's handoffp calls duty_unwatched
# (shared), which calls idle_duty_wanted (stage 4 overrides it).
out=$(sd 3 4 handoffp)
grep -q "differ in: .*duty_unwatched > idle_duty_wanted" <<<"$out" ||
  fail "3 4: handoffp's hook two calls down: $out"
# find_runnable calls stopm, whose idle_wait stage 4 overrides, and also
# gcstopm, which calls stopm too: stopm's hooks are still named.
grep -q "differ in: .*stopm > idle_wait" <<<"$(sd 3 4 find_runnable)" ||
  fail "3 4: find_runnable's stopm > idle_wait: $(sd 3 4 find_runnable)"
out=$(sd 3 4 poll_network)
grep -q '^+.*netpoll_now(' <<<"$out" || fail "no poll step: $out"
grep -q '^+.*injectglist(' <<<"$out" || fail "no injectglist: $out"
grep -q '^why (docs/course/stage4.md:[0-9]*): .*poll_network' \
  <<<"$(why "$out")" ||
  fail "no reason for the poll step: $out"
# In the lists: inherited functions are the same, stage 2's mcall is
# stage 3's too (it calls it), stage 1's timerproc is gone in stage 2.
same=$(section "$(sd 3 4)" "The same")
grep -qE '^ +findRunnable +find_runnable .*inherited from stage 3.*'\
'differ: poll_network' <<<"$same" ||
  fail "find_runnable is not the same in 3 and 4: $same"
grep -qE 'mcall .*stage 2.s, which stage 3 calls' <<<"$(sd 2 3)" ||
  fail "mcall is not shared by stages 2 and 3"
# Stage 5 runs stage 4's code, which calls stage 2's mcall: not "inherited
# from stage 2" (stage 5 derives from stage 4).
grep -qE 'mcall .*stage 2.s, which stage 4 calls \(inherited by stage 5\)' \
  <<<"$(sd 4 5)" || fail "mcall's owner in 4 -> 5: $(sd 4 5 | grep mcall)"
# A row whose Go cell is prose shows "-" as Go's name, not the prose.
! grep -qE '^  \(' <<<"$(sd 3 4)" || fail "prose in the Go column: $(sd 3 4)"
grep -q 'timerproc' <<<"$(section "$(sd 1 2)" "Only in stage 1")" ||
  fail "timerproc is not gone in stage 2"
# Stage 4 -> 5: the lazy hand-off, with its reason.
out=$(sd 4 5 exitsyscall)
grep -q '^+.*compare_exchange_strong(s, PStatus::kRunning' <<<"$out" ||
  fail "no fast path in stage 5's exitsyscall: $out"
grep -q '^why (docs/course/stage5.md' <<<"$out" || fail "4 5: no reason: $out"
# ready: stage 2's puts the goroutine on the GRQ, stage 3's on the P's.
out=$(sd 2 3 ready)
grep -q '^-.*globrunqput(gp)' <<<"$out" && grep -q '^+.*runqput(pp, gp' \
  <<<"$out" || fail "ready, GRQ to the P's queue: $out"

# Bad input: one line naming the problem, status 2, nothing on stdout.
bad() {
  local want=$1 out err st=0
  shift
  out=$(sd "$@" 2>"$tmp/err") || st=$?
  err=$(cat "$tmp/err")
  [ "$st" = 2 ] || fail "diff $*: status $st, not 2"
  [ -z "$out" ] || fail "diff $*: printed $out"
  [ "$(wc -l <<<"$err")" = 1 ] || fail "diff $*: not one line: $err"
  grep -q -- "$want" <<<"$err" || fail "diff $*: no '$want' in: $err"
}
bad "unknown stage 'stage9' (one of stage1, stage2" stage9 stage3
bad "unknown stage 'gmp'" 2 gmp
bad "both stage 2" stage2 2
bad "unknown function 'no_such'" 2 3 no_such
bad "neither stage 1 nor stage 2 has 'stealWork'.*stage 3 defines it" \
  1 2 stealWork
bad "no stage folder defines it" 2 3 park_on
bad "required: STAGE_B" 2
bad "unrecognized arguments: more" 2 3 find_runnable more
bad "side-by-side needs a FUNCTION" 2 3 --side-by-side

# A made-up repository: every case of the brace matcher, inheritance and
# the chapter's reason, whatever the real stages become.
mkdir -p "$tmp/r/docs/course" "$tmp/r/stage1_a" "$tmp/r/stage2_b" \
  "$tmp/r/stage3_c"
cat >"$tmp/r/docs/course/go_map.md" <<'EOF'
| Go | Course | Stage | Where |
|---|---|---|---|
| `tricky`, `kept` | `Runtime::tricky`, `kept`: prose `here` | 1 | x |
| `schedule` | `Runtime::loop` (Go's `schedule`; `old_loop` in stage 1) | 1 | x |
| `freeFn` | gmp::stage1::free_fn | 1 | x |
EOF
cat >"$tmp/r/stage1_a/runtime.h" <<'EOF'
class Runtime {
 public:
  virtual int tricky(int x);
  int kept() const { return 1; }
};
EOF
cat >"$tmp/r/stage1_a/runtime.cc" <<'EOF'
int Runtime::tricky(int x) {
  const char* s = "}";  // }
  char c = '}';
  /* { */
  const char* raw = R"d(")}")d";
#define BRACE {
  int y = 1'000; if (y) { y = '{'; }
  return x + y;
}
void Runtime::old_loop() {
  for (;;) {}
}
int free_fn() { return 2; }
EOF
cat >"$tmp/r/stage2_b/runtime.h" <<'EOF'
class Runtime : public stage1::Runtime {
 public:
  struct Tick {
    int kept() const { return 3; }  // Tick's, not Runtime's
  };
  int tricky(int x) override;
};
EOF
cat >"$tmp/r/stage2_b/runtime.cc" <<'EOF'
int Runtime::tricky(int x) {
  if (x) { return stage1::Runtime::tricky(x); }  // "{"
  return 0;
}
void Runtime::loop() { for (;;) {} }
int caller() { return stage1::free_fn(); }
EOF
# Stage 3 derives from nothing and has stage 2's loop, to the letter.
echo 'class Runtime {};' >"$tmp/r/stage3_c/runtime.h"
echo 'void Runtime::loop() { for (;;) {} }' >"$tmp/r/stage3_c/runtime.cc"
cat >"$tmp/r/docs/course/b.md" <<'EOF'
# Two {#stage2}

## What changed since stage 1

Little is kept. A `tricky` new body, e.g. a shorter one, and more words
so it is long enough. Stage 1's old_loop is renamed.

## Later

`kept` is here.
EOF
out=$(cd "$tmp/r" && sd 1 2)
grep -qE '^ +tricky +tricky +stage1_a/runtime.cc:1 +stage2_b/runtime.cc:1$' \
  <<<"$(section "$out" Changed)" || fail "made-up: tricky not changed: $out"
grep -qE '^ +kept +kept +stage1_a/runtime.h:4 \(inherited from stage 1\)' \
  <<<"$(section "$out" "The same")" || fail "made-up: kept not inherited: $out"
grep -qE "^ +freeFn +free_fn .*stage 1's, which stage 2 calls" <<<"$out" ||
  fail "made-up: free_fn not shared: $out"
grep -qE '^ +schedule +loop \(old_loop in stage 1\) ' \
  <<<"$(section "$out" Changed)" || fail "made-up: loop/old_loop: $out"
grep -q "here" <<<"$out" &&
  fail "made-up: prose after a colon became a name: $out"
out=$(cd "$tmp/r" && sd 1 2 tricky)
grep -qF -- "-  int y = 1'000; if (y) { y = '{'; }" <<<"$out" ||
  fail "made-up: body cut short: $out"
[ "$(tail -n 1 <<<"$out")" = " }" ] || fail "made-up: the body's end: $out"
grep -q "^why (docs/course/b.md:5): A \`tricky\` new body, e.g. a shorter one" \
  <<<"$(why "$out")" || fail "made-up: the reason: $out"
out=$(cd "$tmp/r" && sd 1 2 kept)
grep -q "the same (inherited from stage 1)" <<<"$out" || fail "made-up: $out"
grep -q "^why: the chapter does not name it" <<<"$out" ||
  fail "made-up: a name outside \"What changed\" counted: $out"
out=$(cd "$tmp/r" && sd 1 2 loop)
grep -q "^why (docs/course/b.md:5): Stage 1's old_loop" <<<"$out" ||
  fail "made-up: a bare name with an underscore is a name"
[ "$(cd "$tmp/r" && sd 1 2 schedule)" = "$(cd "$tmp/r" && sd 1 2 loop)" ] ||
  fail "made-up: Go's schedule is not the course's loop"
out=$(cd "$tmp/r" && sd 2 3)
grep -qE '^ +schedule +loop +stage2_b/runtime.cc:5 +stage3_c/runtime.cc:1$' \
  <<<"$(section "$out" "The same")" || fail "made-up: two copies of loop: $out"
out=$(cd "$tmp/r" && sd 2 3 loop)
grep -q "the same text in both stages' folders" <<<"$out" ||
  fail "made-up: $out"

echo "stage_diff_test: ok"
