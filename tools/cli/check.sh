#!/usr/bin/env bash
# The course script's own errors: bad arguments are refused before anything
# is installed or built, with a message naming the problem, and no command
# changes a tracked file when it fails. Run by .ci/run (it needs Bazel and
# the course's packages, so it is not a Bazel test); ./course must be set up.
#
#   tools/cli/check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

COURSE=${COURSE:-./course}  # another copy of the script, to compare
failures=0
fail() { printf 'cli check: FAIL: %s\n' "$*" >&2; failures=$((failures + 1)); }

# expect_error [--may-install] DESCRIPTION PATTERN COMMAND...: COMMAND exits
# non-zero, prints PATTERN (grep -E) on stderr, installs nothing (unless its
# arguments are sound and only the run finds the problem: --may-install),
# and leaves every tracked file as it was.
expect_error() {
  local may_install=0
  if [ "$1" = --may-install ]; then may_install=1; shift; fi
  local what=$1 pattern=$2 out rc=0
  shift 2
  local before
  before=$(git status --porcelain --untracked-files=no)
  out=$("$@" 2>&1 >/dev/null) || rc=$?
  if [ "$rc" -eq 0 ]; then
    fail "$what: exited 0"
  elif ! grep -Eq -- "$pattern" <<<"$out"; then
    fail "$what: no '$pattern' in: $out"
  elif [ "$may_install" = 0 ] && grep -q "installing" <<<"$out"; then
    fail "$what: installed packages before refusing"
  elif [ "$(git status --porcelain --untracked-files=no)" != "$before" ]; then
    fail "$what: changed tracked files: $(git status --porcelain --untracked-files=no)"
  else
    printf 'cli check: ok: %s\n' "$what"
  fi
}

expect_error "bench with an unknown option" "unknown option '--bogus'" \
  "$COURSE" bench --bogus
expect_error "bench with a malformed filter" "not a valid regular expression" \
  "$COURSE" bench '('
expect_error --may-install "bench --publish matching nothing" \
  "no benchmark matches 'NOMATCH'" \
  "$COURSE" bench --publish --quick NOMATCH
expect_error "test with an unknown config" "unknown test config 'bogus'" \
  "$COURSE" test bogus
expect_error "docs with an unknown option" "unknown option '--bogus'" \
  "$COURSE" docs --bogus
expect_error --may-install "trace of a label that does not exist" \
  "could not build //no:target" \
  "$COURSE" trace //no:target
expect_error "trace of an unknown program" "PROGRAM is 'demo'" \
  "$COURSE" trace stage3 bogus
expect_error "ide with an unknown option" "unknown option '--bogus'" \
  "$COURSE" ide --bogus
expect_error "lab with an unknown name" "unknown lab 'bogus'" \
  "$COURSE" lab bogus
expect_error "lab with an unknown option" "unknown option '--bogus'" \
  "$COURSE" lab gfree --bogus
expect_error "demo of an unknown stage" "which stage" \
  "$COURSE" demo stage9
expect_error "demo --publish with arguments" "no other arguments" \
  "$COURSE" demo stage1 --publish --threads=4
expect_error "read of an unknown chapter" "no chapter 'bogus'" \
  "$COURSE" read bogus
expect_error "read of two chapters" "one chapter at a time" \
  "$COURSE" read stage1 stage2
expect_error "diff of an unknown stage" "unknown stage 'stage9'" \
  "$COURSE" diff stage9 stage3
expect_error "diff of an unknown function" "unknown function 'bogus'" \
  "$COURSE" diff stage2 stage3 bogus

expect_error "hint of an unknown exercise" "no exercise '99'" \
  "$COURSE" hint 99
expect_error "hint with an unknown option" "unrecognized arguments: --bogus" \
  "$COURSE" hint 05 --bogus
expect_error "hint with --all and --reset" "not allowed with argument" \
  "$COURSE" hint 05 --all --reset
expect_error "watch of no exercise" "required: exercise" \
  "$COURSE" watch
expect_error "watch of an unknown exercise" "no exercise '99'" \
  "$COURSE" watch 99
expect_error "watch with an unknown option" "unrecognized arguments: --bogus" \
  "$COURSE" watch 05 --bogus
expect_error "watch with a bad grade option" "invalid choice: 'bogus'" \
  "$COURSE" watch 05 --config bogus
expect_error "watch of two exercises" "grades one exercise" \
  "$COURSE" watch 05 06
expect_error "progress with an unknown option" "unrecognized arguments: --bogus" \
  "$COURSE" progress --bogus

# Every chapter reads in a terminal with what the site pulls in resolved:
# no Doxygen command left, no snippet or table missing.
for chapter in $("$COURSE" read | awk 'NR > 1 { print $1 }'); do
  text=$("$COURSE" read "$chapter" 2>&1) || { fail "read $chapter: $text"; continue; }
  left=$(grep -nE '^\s*[@\\](snippet|include|htmlinclude|dotfile|image|ref|tableofcontents)\b|@ref |\{#|not found in|no generated table' <<<"$text" | head -n 3 || true)
  if [ -n "$left" ]; then fail "read $chapter left: $left"; else printf 'cli check: ok: read %s\n' "$chapter"; fi
done
grep -q "void Runtime::runqput" <<<"$("$COURSE" read stage3)" ||
  fail "read stage3: the runqput snippet is not in place"

[ "$failures" -eq 0 ] || { printf 'cli check: %d failed\n' "$failures" >&2; exit 1; }
printf 'cli check: all passed\n'
