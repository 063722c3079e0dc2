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



ASAN_ADVICE = ("SIGSEGV is a bad memory access (a null or dangling pointer?); "
               "re-grade with --config asan to see where: AddressSanitizer "
               "prints the stack of the access")


class PlainCrash(unittest.TestCase):
    """A crash nothing in the log explains (a null pointer's SIGSEGV prints
    nothing): the test it was in, what it printed, and the build that
    shows where."""

    BANNER = ("Note: Google Test filter = A.B\n[==========] Running 1 test from "
              "1 test suite.\n[----------] Global test environment set-up.\n"
              "[----------] 1 test from A\n")

    def test_the_test_it_was_in_and_what_it_printed(self):
        msg = feedback.explain(self.BANNER + "[ RUN      ] A.B\nstep 1\nstep 2\n", -11)
        self.assertEqual(msg.splitlines(), [
            "crashed (killed by signal 11):",
            "it died in A.B, after printing:", "  step 1", "  step 2",
            ASAN_ADVICE])

    def test_a_crash_that_printed_nothing(self):
        msg = feedback.explain(self.BANNER + "[ RUN      ] A.B\n", -11)
        self.assertEqual(msg.splitlines(), [
            "crashed (killed by signal 11):",
            "it died in A.B, having printed nothing", ASAN_ADVICE])

    def test_the_last_lines_only(self):
        printed = "".join(f"step {i}\n" for i in range(30))
        lines = feedback.explain("[ RUN      ] A.B\n" + printed, -7).splitlines()
        self.assertEqual(lines[1], "it died in A.B, after printing:")
        self.assertEqual(lines[2:2 + feedback.TAIL_LINES],
                         [f"  step {i}" for i in range(30 - feedback.TAIL_LINES, 30)])
        self.assertTrue(lines[-1].startswith("SIGBUS is a bad memory access"))

    def test_other_signals_get_no_asan_advice(self):
        msg = feedback.explain("[ RUN      ] A.B\nstep 1\n", -9)
        self.assertEqual(msg.splitlines(), ["crashed (killed by signal 9):",
                                            "it died in A.B, after printing:",
                                            "  step 1"])

    def test_no_test_running(self):
        msg = feedback.explain("loading\n", -11)
        self.assertEqual(msg.splitlines(), ["crashed (killed by signal 11):",
                                            "the last lines it printed:",
                                            "  loading", ASAN_ADVICE])

    def test_a_report_needs_no_advice(self):
        msg = feedback.explain(log("asan_use_after_free.log"), -11, own_dirs=OWN)
        self.assertNotIn("re-grade", msg)


class Relacy(unittest.TestCase):
    """Relacy's report of a memory-model test (exercise 05's mutant
    every_order_relaxed): the result, the iteration, the history's steps
    in the course's files, then gtest's failure that points above."""

    def explain(self, name, report_failure):
        failures = [{"failure": report_failure}]
        return feedback.explain(log(name), 1, report_failures=failures,
                                own_dirs=OWN).splitlines()

    def test_data_race(self):
        lines = self.explain("relacy_data_race.log",
                             "exercises/05_local_runq/runq_relacy_test.cc:56\n"
                             "Value of: every_run(...)\n(Relacy's history above)")
        self.assertEqual(lines[:4], [
            "DATA RACE (data race detected)",
            "iteration: 1",
            "execution history (41 steps; the last 25 in the course's files):",
            "  ... 16 steps left out (earlier, or in Relacy's own files)"])
        steps = lines[4:4 + feedback.MAX_HISTORY]
        self.assertTrue(all(feedback.RELACY_STEP.match(s) for s in steps))
        self.assertIn("[28] 0: <0x55c83d080578> atomic store, value=0x55c83d080510, "
                      "(prev value=0), order=relaxed, in bool gmp::exercises::runq::"
                      "LocalRunQueue::runqput(gmp::exercises::runq::G*), "
                      "exercises/05_local_runq/solution/runq.cc(13)", steps)
        self.assertEqual(steps[-1], "[40] 1: DATA RACE (data race detected), in "
                         "gmp::exercises::Plain<T>::operator T() const [with T = int], "
                         "exercises/testing/relacy_atomic.h(168)")
        self.assertNotIn("relacy/context.hpp", "\n".join(lines))
        # Each step once: not again from the per-thread histories.
        self.assertEqual(len(lines), 4 + feedback.MAX_HISTORY + 3)
        self.assertEqual(lines[-3:], [
            "exercises/05_local_runq/runq_relacy_test.cc:56: Failure",
            "Value of: every_run(...)", "(Relacy's history above)"])

    def test_user_assert_from_the_console(self):
        # No JSON report: gtest's block comes from the log.
        lines = feedback.explain(log("relacy_user_assert.log"), 1,
                                 own_dirs=OWN).splitlines()
        self.assertEqual(lines[1:4], [
            "USER ASSERT FAILED (assertion: owner_took + thief_took + "
            "victim.size() == kPut + kTaken)",
            "iteration: 2",
            "execution history (115 steps; the last 25 in the course's files):"])
        self.assertEqual(lines[-6], "[114] 1: USER ASSERT FAILED (assertion: "
                         "owner_took + thief_took + victim.size() == kPut + kTaken), "
                         "in after, exercises/05_local_runq/runq_relacy_test.cc(93)")
        self.assertEqual(lines[-5:], [
            "exercises/05_local_runq/runq_relacy_test.cc:101: Failure",
            "Value of: rl::simulate<TornPair>(p)",
            "  Actual: false",
            "Expected: true",
            "a thief trusted a head and a tail read far apart in time "
            "(Relacy's history above)"])

    def test_a_short_history_is_whole(self):
        text = ("DEADLOCK (deadlock detected)\niteration: 3\n\n"
                "execution history (2):\n"
                "[0] 0: <0x1> mutex: lock, in f, exercises/09_x/pool.cc(5)\n"
                "[1] 1: DEADLOCK (deadlock detected), in g, exercises/09_x/pool.cc(9)\n"
                "\nthread 0:\n"
                "[0] 0: <0x1> mutex: lock, in f, exercises/09_x/pool.cc(5)\n")
        self.assertEqual(feedback.relacy_reports(text, OWN), [[
            "DEADLOCK (deadlock detected)", "iteration: 3",
            "execution history (2 steps):",
            "[0] 0: <0x1> mutex: lock, in f, exercises/09_x/pool.cc(5)",
            "[1] 1: DEADLOCK (deadlock detected), in g, exercises/09_x/pool.cc(9)"]])

    def test_livelock_without_a_history(self):
        self.assertEqual(feedback.relacy_reports("LIVELOCK\niteration: 12\n\n"),
                         [["LIVELOCK", "iteration: 12"]])


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
