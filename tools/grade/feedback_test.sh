#!/usr/bin/env bash
# Runs feedback_test.py (the grader's feedback on real failing tests' logs)
# with Debian's python3.
set -euo pipefail
exec /usr/bin/python3 "$(dirname "$0")/feedback_test.py"
