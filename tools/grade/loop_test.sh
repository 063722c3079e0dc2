#!/usr/bin/env bash
# Runs loop_test.py (the grader's command line, `./course hint`, `watch`
# and `progress` on a fake course) with Debian's python3; the state it
# writes goes to a temporary folder (GMP_COURSE_STATE), never .course/.
set -euo pipefail
export GMP_COURSE_STATE="${TEST_TMPDIR:-/tmp}/course_state"
exec /usr/bin/python3 "$(dirname "$0")/loop_test.py"
