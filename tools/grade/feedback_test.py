"""Tests of the grader's feedback (feedback.py) on logs of real failing
tests (testdata/README.md says how each was made), and of the grader's
rerun command."""

import json
import os
import pathlib
import sys
import unittest

HERE = pathlib.Path(os.path.abspath(__file__)).parent
sys.path.insert(0, str(HERE))

import feedback  # noqa: E402

DATA = HERE / "testdata"
OWN = {"exercises", "testing", "scratch"}


def log(name):
    return (DATA / name).read_text()


class DataRace(unittest.TestCase):
    """ThreadSanitizer's report of exercise 05's publication test."""

    def setUp(self):
        self.msg = feedback.explain(log("tsan_data_race.log"), 66, own_dirs=OWN)
        self.lines = self.msg.splitlines()

    def test_headline_names_the_sanitizer(self):
        self.assertEqual(self.lines[0],
                         "crashed (exit status 66; ThreadSanitizer reported an error):")

    def test_the_warning_both_accesses_and_the_summary(self):
        self.assertEqual(self.lines[1], "WARNING: ThreadSanitizer: data race (pid=9784)")
        for want in ("  Read of size 4 at 0x7b98000001fc by thread T3:",
                     "    #0 operator() exercises/05_local_runq/runq_test.cc:248",
                     "  Previous write of size 4 at 0x7b98000001fc by thread T2:",
                     "    #0 operator() exercises/05_local_runq/runq_test.cc:231",
                     "SUMMARY: ThreadSanitizer: data race "
                     "exercises/05_local_runq/runq_test.cc:248 in operator()"):
            self.assertIn(want, self.lines)
        self.assertEqual(self.lines[-1][:9], "SUMMARY: ")

    def test_stacks_keep_the_courses_frames_and_count_the_rest(self):
        read = self.lines.index("  Read of size 4 at 0x7b98000001fc by thread T3:")
        self.assertEqual(self.lines[read + 1:read + 4], [
            "    #0 operator() exercises/05_local_runq/runq_test.cc:248",
            "    #5 operator() exercises/testing/harness.cc:109",
            "    ... 10 frames left out (libraries', or deeper)"])
        # The allocation's stack reaches the test body past the allocator.
        self.assertIn("    #8 publication exercises/05_local_runq/runq_test.cc:223",
                      self.lines)
        self.assertNotIn("std_function.h", self.msg)

    def test_bounded(self):
        self.assertLess(len(self.lines), 40)
        for name in ("tsan_data_race.log",):
            frames = [l for l in log(name).splitlines() if feedback.FRAME.match(l)]
            kept = [l for l in self.lines if feedback.FRAME.match(l)]
            self.assertLess(len(kept), len(frames))

    def test_no_more_than_max_frames_per_stack(self):
        run = 0
        for line in self.lines:
            run = run + 1 if feedback.FRAME.match(line) else 0
            self.assertLessEqual(run, feedback.MAX_FRAMES)


class AddressSanitizer(unittest.TestCase):
    """AddressSanitizer's heap-use-after-free report: the report up to its
    SUMMARY, not the shadow bytes after it."""

    def setUp(self):
        self.msg = feedback.explain(log("asan_use_after_free.log"), -6, own_dirs=OWN)
        self.lines = self.msg.splitlines()

    def test_report(self):
        self.assertEqual(self.lines[0], "crashed (killed by signal 6; "
                         "AddressSanitizer reported an error):")
        self.assertTrue(self.lines[1].startswith(
            "==16943==ERROR: AddressSanitizer: heap-use-after-free on address"))
        for want in ("READ of size 4 at 0x602000000190 thread T1",
                     "    #0 operator() scratch/uaf_test.cc:11",
                     "freed by thread T0 here:",
                     "    #1 LocalRunQueueStress_OwnerAndThievesTakeEachGoroutineOnce"
                     "_Test::TestBody() scratch/uaf_test.cc:9",
                     "previously allocated by thread T0 here:"):
            self.assertIn(want, self.lines)
        self.assertEqual(self.lines[-1], "SUMMARY: AddressSanitizer: "
                         "heap-use-after-free scratch/uaf_test.cc:11 in operator()")
        self.assertNotIn("Shadow byte", self.msg)

    def test_addresses_of_frames_dropped(self):
        self.assertNotIn(" in operator() scratch", self.msg)  # "0x... in " gone
        self.assertIn("    #7 start_thread nptl/pthread_create.c:442",
                      feedback.explain(log("asan_use_after_free.log"), -6))


class UndefinedBehavior(unittest.TestCase):
    def test_report(self):
        lines = feedback.explain(log("ubsan_overflow.log"), 1, own_dirs=OWN).splitlines()
        self.assertEqual(lines[0], "crashed (exit status 1; "
                         "UndefinedBehaviorSanitizer reported an error):")
        self.assertIn("runtime error: signed integer overflow", lines[1])
        self.assertEqual(lines[2:5], ["    #0 grow(int) scratch/ub_test.cc:4",
                                      "    #1 LocalRunQueue_HoldsExactly256_Test::TestBody()"
                                      " scratch/ub_test.cc:7",
                                      "    ... 11 frames left out (libraries', or deeper)"])


GTEST_BLOCK = [
    "exercises/05_local_runq/runq_test.cc:124: Failure",
    "Expected equality of these values:",
    "  taken[i].load()",
    "    Which is: 2",
    "  1",
    "goroutine 2385 taken 2 times",
    "Google Test trace:",
    "exercises/05_local_runq/runq_test.cc:273: seed 10595518514147512047",
]


class AssertionFailure(unittest.TestCase):
    """gtest's failure block: whole, from "Failure" through the test's own
    text and the trace with the seed."""

    def failures(self):
        report = json.loads((DATA / "gtest_failure.json").read_text())
        return report["testsuites"][0]["testsuite"][0]["failures"]

    def test_from_gtests_report(self):
        msg = feedback.explain(log("gtest_failure.log"), 1,
                               report_failures=self.failures())
        self.assertEqual(msg.splitlines(), GTEST_BLOCK)

    def test_from_the_console_when_the_program_died(self):
        # No JSON report: the blocks come from the console output.
        msg = feedback.explain(log("gtest_failure.log"), -11)
        self.assertEqual(msg.splitlines(), ["crashed (killed by signal 11):"] + GTEST_BLOCK)

    def test_many_failures_are_bounded(self):
        many = self.failures() * (feedback.MAX_FAILURES + 3)
        lines = feedback.explain("", 1, report_failures=many).splitlines()
        self.assertEqual(lines[:len(GTEST_BLOCK)], GTEST_BLOCK)
        self.assertEqual(len(lines), len(GTEST_BLOCK) * feedback.MAX_FAILURES + 1)
        self.assertEqual(lines[-1], "... and 3 more failures "
                         "(the rerun command below shows them all)")

    def test_a_long_block_is_cut_with_a_count(self):
        long = [{"failure": "a.cc:1\n" + "\n".join(f"line {i}" for i in range(40))}]
        lines = feedback.explain("", 1, report_failures=long).splitlines()
        self.assertEqual(len(lines), feedback.MAX_BLOCK_LINES + 1)
        self.assertEqual(lines[-1], "... 16 more lines of this failure")

    def test_uncaught_exception_block(self):
        text = ("[ RUN      ] LocalRunQueue.EmptyQueueGivesNothing\n"
                "unknown file: Failure\n"
                "C++ exception with description \"not written yet: runqget "
                "(exercises/05_local_runq/runq.cc)\" thrown in the test body.\n"
                "[  FAILED  ] LocalRunQueue.EmptyQueueGivesNothing (0 ms)\n")
        self.assertEqual(feedback.gtest_failures_from_log(text), [[
            "unknown file: Failure",
            "C++ exception with description \"not written yet: runqget "
            "(exercises/05_local_runq/runq.cc)\" thrown in the test body."]])


class Hang(unittest.TestCase):
    def test_watchdog(self):
        msg = feedback.explain(log("watchdog_hang.log"), 1)
        self.assertEqual(msg.splitlines(), [
            "hung: its watchdog ended it (exit status 1):",
            "HANG: test ThreadPool.ShutdownWakesEveryIdleWorker did not finish within 5 s"])

    def test_timeout_with_the_last_lines(self):
        printed = log("watchdog_hang.log").split("\nHANG:")[0]
        printed += "\nworker 3 waiting\nworker 4 waiting\n"
        lines = feedback.explain(printed, None, timeout=300).splitlines()
        self.assertEqual(lines, [
            "timed out after 300 s (a hang?): the grader killed it",
            "the last lines it printed:",
            "  worker 3 waiting",
            "  worker 4 waiting"])

    def test_timeout_that_printed_nothing(self):
        printed = log("watchdog_hang.log").split("\nHANG:")[0]
        self.assertEqual(feedback.explain(printed, None, timeout=20).splitlines(), [
            "timed out after 20 s (a hang?): the grader killed it",
            "it printed nothing after gtest's banner"])


class Explanations(unittest.TestCase):
    def test_lines_a_test_prints_to_explain_its_end(self):
        text = ("noise\n\ncontext_test: SIGSEGV while waiting for: a switch\n"
                "  The switch restored a wrong stack pointer.\n"
                "more noise\n"
                "terminate called after throwing an instance of 'int'\n"
                "FATAL: a reader thread stays blocked\n")
        self.assertEqual(feedback.explanations(text), [
            "context_test: SIGSEGV while waiting for: a switch",
            "  The switch restored a wrong stack pointer.",
            "terminate called after throwing an instance of 'int'",
            "FATAL: a reader thread stays blocked"])

    def test_a_plain_crash_shows_the_tail(self):
        msg = feedback.explain("[ RUN      ] A.B\nstep 1\nstep 2\n", -11)
        self.assertEqual(msg.splitlines(), ["crashed (killed by signal 11):",
                                            "step 1", "step 2"])


class Rerun(unittest.TestCase):
    def test_command(self):
        cmd = feedback.rerun_command(
            "bazel-out/k8-fastbuildtsan/bin/exercises/05_local_runq/student_test",
            "LocalRunQueueStress.AThiefSeesWhatTheOwnerWroteBeforePut",
            {"GMP_EXERCISE_SEED": "7",
             "TSAN_OPTIONS": "halt_on_error=1:second_deadlock_stack=1"})
        self.assertEqual(cmd, (
            "GMP_EXERCISE_SEED=7 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 "
            "bazel-out/k8-fastbuildtsan/bin/exercises/05_local_runq/student_test "
            "--gtest_filter=LocalRunQueueStress.AThiefSeesWhatTheOwnerWroteBeforePut"))

    def test_quotes_what_the_shell_would_split(self):
        cmd = feedback.rerun_command("/a b/t", "S.N", {"X": "1 2"})
        self.assertEqual(cmd, "X='1 2' '/a b/t' --gtest_filter=S.N")


if __name__ == "__main__":
    unittest.main()
