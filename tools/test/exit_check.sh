#!/bin/sh
# Runs a test program (bazel test --run_under, .bazelrc) and fails it if it
# ended before its end with status 0: gtest creates the file named by
# TEST_PREMATURE_EXIT_FILE when the tests start and removes it when they
# all have run, so a file still there means the process exited in the
# middle (the runtimes' exit_program, as Go's when main returns while
# goroutines run: common/exit.h). Bazel 4 does not check the file itself.
"$@"
rc=$?
if [ "$rc" -eq 0 ] && [ -n "${TEST_PREMATURE_EXIT_FILE:-}" ] &&
   [ -e "$TEST_PREMATURE_EXIT_FILE" ]; then
  echo "exit_check: $1 exited with status 0 before its tests ended" \
       "(gtest's premature-exit file is still there): a test ended the" \
       "program, e.g. through exit_program" >&2
  exit 1
fi
exit "$rc"
