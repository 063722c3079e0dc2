#!/usr/bin/env bash
# Instructions per item of the scheduler's hot workloads, this checkout
# against commit BASE, counted by valgrind's callgrind (the same total on
# every run: fit for differences of 1%, which timings on a shared 2-core
# VM are not). Each figure is (count(12 runs) - count(2 runs)) / 10000:
# one item's cost, the runtime's start and end cancelled out.
#
#   tools/bench/instructions.sh BASE [STAGE...]     (stages: stage2_global_queue
#                                                   stage3_gmp stage4_syscalls)
# or ./course bench --instructions BASE
#
# BASE is checked out in a temporary git worktree and built there (a few
# minutes); benchmarks/count.cc is copied in if BASE predates it. Stage 5 is
# left out by default: sysmon's wake-ups depend on time, which valgrind
# slows, so its counts vary from run to run.
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
base=$1
shift
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(stage2_global_queue stage3_gmp stage4_syscalls)
workloads=("spawn+join" "yield" "chan ping-pong" "fan-out/fan-in" "skynet" "select ping-pong"
           "timer set/stop churn")
BAZEL=/usr/bin/bazel
top=$(git rev-parse --show-toplevel)
command -v valgrind >/dev/null || { echo "instructions: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
git -C "$top" rev-parse --verify -q "$base^{commit}" >/dev/null ||
  { echo "instructions: '$base' is not a commit" >&2; exit 1; }

work=$(mktemp -d)
cleanup() {
  (cd "$work/base" 2>/dev/null && "$BAZEL" shutdown 2>/dev/null) || true
  git -C "$top" worktree remove --force "$work/base" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
git -C "$top" worktree add --detach "$work/base" "$base" >/dev/null 2>&1
if [ ! -f "$work/base/benchmarks/count.cc" ]; then
  cp "$top/benchmarks/count.cc" "$work/base/benchmarks/"
  printf '\ncc_binary(name = "count", srcs = ["count.cc"], deps = [":workloads"])\n' \
    >>"$work/base/benchmarks/BUILD"
fi

# build DIR OUT: the optimised counting program of the checkout in DIR.
build() {
  (cd "$1" && "$BAZEL" build --config=opt --noshow_progress //benchmarks:count >&2 &&
    cp "$("$BAZEL" info --config=opt bazel-bin 2>/dev/null)/benchmarks/count" "$2")
}
echo "instructions: building $base and this checkout (optimised)" >&2
build "$work/base" "$work/count.base"
build "$top" "$work/count.head"

# ir BIN STAGE WORKLOAD REPS: instructions of one whole run; nothing if
# the run fails (a BASE whose count.cc lacks the workload: its row shows ?).
ir() {
  local out
  out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" "$2" "$3" 1000 "$4" 2>&1) ||
    return 0
  sed -n 's/.*Collected : //p' <<<"$out"
}
per_item() {
  local a b
  a=$(ir "$@" 2)
  b=$(ir "$@" 12)
  [ -n "$a" ] && [ -n "$b" ] || { echo "?"; return; }
  echo $(( (b - a) * 10 / 10000 ))  # tenths of an instruction
}
printf '| workload | stage | %s | this checkout | change |\n|---|---|---|---|---|\n' \
  "$(git -C "$top" rev-parse --short "$base")"
for w in "${workloads[@]}"; do
  for s in "${stages[@]}"; do
    a=$(per_item "$work/count.base" "$s" "$w")
    b=$(per_item "$work/count.head" "$s" "$w")
    if [ "$a" = "?" ] || [ "$b" = "?" ]; then
      printf '| %s | %s | %s | %s | - |\n' "$w" "$s" "$a" "$b"
    else
      awk -v w="$w" -v s="$s" -v a="$a" -v b="$b" 'BEGIN {
        printf "| %s | %s | %.1f | %.1f | %+.1f%% |\n", w, s, a / 10, b / 10, 100 * (b - a) / a }'
    fi
  done
done
