"""Tests of the grader's command line and the student's loop around it
(grade.py, state.py, loop.py), run as the course script runs them, on a
course of their own: a temporary folder with copies of the grader, two
small exercises, a fake `bazel` (it "builds" by reporting success and
"has built" gtest-like scripts) and a fake `course` script (what `watch`
runs), with GMP_COURSE_STATE pointing into the folder. Nothing here reads
or writes the real course's .course/."""

import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

HERE = pathlib.Path(os.path.abspath(__file__)).parent
PYTHON = sys.executable or "/usr/bin/python3"

# A gtest binary's behaviour, as much as the grader reads of it: it lists
# TESTS; Fake.Passes passes (gtest's JSON report says so); Fake.Crashes
# prints a line (with the watchdog limit it was given) and dies of SIGSEGV,
# as a null pointer's dereference does, printing nothing more.
FAKE_TEST = """\
#!{python}
import json, os, signal, sys
TESTS = {tests!r}
args = sys.argv[1:]
if "--gtest_list_tests" in args:
    print("Fake.")
    for t in TESTS:
        print("  " + t.split(".")[1])
    sys.exit(0)
name = [a.split("=", 1)[1] for a in args if a.startswith("--gtest_filter=")][0]
report = [a.split(":", 1)[1] for a in args if a.startswith("--gtest_output=json:")]
print("Note: Google Test filter = " + name)
print("[==========] Running 1 test from 1 test suite.")
print("[ RUN      ] " + name, flush=True)
if name == "Fake.Crashes":
    print("limit " + os.environ.get("GMP_EXERCISE_TEST_LIMIT", "unset"), flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)
print("[       OK ] " + name + " (0 ms)")
suite, test = name.split(".")
with open(report[0], "w") as f:
    json.dump({{"testsuites": [{{"name": suite, "testsuite": [
        {{"name": test, "result": "COMPLETED"}}]}}]}}, f)
"""

# `bazel build ... --build_event_json_file=F LABELS`: every label built;
# `bazel info ... bazel-bin`: the folder of the fake test binaries.
FAKE_BAZEL = """\
#!{python}
import json, sys
args = sys.argv[1:]
if args[0] == "info":
    print({bin!r})
    sys.exit(0)
events = [a.split("=", 1)[1] for a in args if a.startswith("--build_event_json_file=")][0]
with open(events, "w") as f:
    for label in [a for a in args if a.startswith("//")]:
        f.write(json.dumps({{"id": {{"targetCompleted": {{"label": label}}}},
                             "completed": {{"success": True}}}}) + "\\n")
"""

# What `./course watch` runs: each call's arguments, one line per call.
FAKE_COURSE = """\
#!/usr/bin/env bash
echo "$*" >> "$(dirname "$0")/calls"
"""

README = """\
# The first exercise

<details><summary>Hint 1: where</summary>

Look at `std::atomic<G*>` and <b>bold</b> &amp; [the queue](../../x.md).

</details>
<details><summary>Hint 2: how</summary>

Second.

</details>
<details><summary>Hint 3: the answer</summary>

Third.

</details>
"""

EXERCISES = {
    "01_first": {"Fake.Passes": 2},
    "05_second": {"Fake.Passes": 1, "Fake.Crashes": 1},
}


class Course(unittest.TestCase):
    """A fresh fake course per test."""

    def setUp(self):
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="loop_test."))
        self.addCleanup(shutil.rmtree, self.root, ignore_errors=True)
        grade_dir = self.root / "tools" / "grade"
        grade_dir.mkdir(parents=True)
        for name in ("grade.py", "state.py", "feedback.py", "loop.py"):
            shutil.copy(HERE / name, grade_dir / name)
        bindir = self.root / "bin"
        for ex, points in EXERCISES.items():
            folder = self.root / "exercises" / ex
            folder.mkdir(parents=True)
            (folder / "points.json").write_text(json.dumps(
                {"title": f"Exercise {ex[:2]}", "stage": "stage3_gmp",
                 "points": points}))
            (folder / "README.md").write_text(README)
            self.script(bindir / "exercises" / ex / "student_test",
                        FAKE_TEST.format(python=PYTHON, tests=list(points)))
        (self.root / "labs").mkdir()
        (self.root / "labs" / "README.md").write_text(
            "| Lab | What | Do first |\n|---|---|---|\n"
            "| [runq](runq/README.md) | the queue | 05 |\n")
        (self.root / ".bazelrc").write_text("")
        self.bazel = self.script(self.root / "fakebazel",
                                 FAKE_BAZEL.format(python=PYTHON, bin=str(bindir)))
        self.script(self.root / "course", FAKE_COURSE)
        self.state = self.root / "state"

    def script(self, path, text):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o755)
        return path

    def env(self, state=None):
        return dict(os.environ, GMP_COURSE_STATE=str(state or self.state))

    def run_tool(self, tool, *args, state=None):
        return subprocess.run(
            [PYTHON, str(self.root / "tools" / "grade" / tool), *args],
            capture_output=True, text=True, env=self.env(state), timeout=120)

    def grade(self, *args, state=None):
        return self.run_tool("grade.py", "--bazel", str(self.bazel), "--jobs", "1",
                             *args, state=state)

    def progress_json(self, data):
        self.state.mkdir(exist_ok=True)
        (self.state / "progress.json").write_text(json.dumps(data))

    def assertClean(self, res, code=0):
        """Exit status `code` and no Python traceback."""
        self.assertNotIn("Traceback", res.stderr + res.stdout)
        self.assertEqual(res.returncode, code, res.stdout + res.stderr)


class Recording(Course):
    """A grade is printed, scored and reported whatever .course/ holds."""

    def test_a_bad_exercises_section_is_replaced(self):
        self.progress_json({"exercises": []})
        out = self.root / "report.json"
        res = self.grade("01", "--json", str(out))
        self.assertClean(res, 0)
        self.assertIn("Score: 2/2", res.stdout)
        self.assertEqual(json.loads(out.read_text())["score"], 2)
        saved = json.loads((self.state / "progress.json").read_text())
        self.assertEqual(saved["exercises"]["01_first"]["best"], 2)

    def test_a_bad_entry_counts_as_absent(self):
        self.progress_json({"exercises": {"01_first": {"best": "x"}}})
        res = self.grade("01")
        self.assertClean(res, 0)
        saved = json.loads((self.state / "progress.json").read_text())
        self.assertEqual(saved["exercises"]["01_first"]["best"], 2)

    def test_an_unwritable_folder_costs_a_warning(self):
        (self.root / "file").write_text("")
        junit = self.root / "report.xml"
        res = self.grade("01", "--junit", str(junit),
                         state=self.root / "file" / "x")
        self.assertClean(res, 0)
        self.assertIn("Score: 2/2", res.stdout)
        self.assertTrue(junit.is_file())
        warnings = [l for l in res.stderr.splitlines() if "warning" in l]
        self.assertEqual(len(warnings), 1, res.stderr)
        self.assertIn("not recorded", warnings[0])


class Crash(Course):
    def test_a_plain_crash_says_where_and_what_to_do(self):
        res = self.grade("05", "--timeout", "40", "--seed", "7")
        self.assertClean(res, 1)
        lines = [l.strip() for l in res.stdout.splitlines()]
        at = lines.index("crashed (killed by signal 11):")
        self.assertEqual(lines[at + 1:at + 3], [
            "it died in Fake.Crashes, after printing:", "limit 30"])
        self.assertIn("re-grade with --config asan to see where", lines[at + 3])
        # The rerun command gives the test the limit the grader gave it.
        rerun = lines[at + 4]
        self.assertTrue(rerun.startswith(
            "run it alone: GMP_EXERCISE_SEED=7 GMP_EXERCISE_TEST_LIMIT=30 "), rerun)
        self.assertTrue(rerun.endswith("--gtest_filter=Fake.Crashes"), rerun)


class PointsJson(Course):
    def test_a_broken_points_json_is_the_graders_error(self):
        (self.root / "exercises" / "01_first" / "points.json").write_text("{")
        for res in (self.grade("05"), self.run_tool("loop.py", "hint", "05"),
                    self.run_tool("loop.py", "progress")):
            self.assertClean(res, 2)
            self.assertIn("exercises/01_first/points.json cannot be read", res.stderr)

    def test_points_missing(self):
        (self.root / "exercises" / "01_first" / "points.json").write_text(
            '{"title": "t", "stage": "s"}')
        res = self.grade("01")
        self.assertClean(res, 2)
        self.assertIn("points.json cannot be read: no 'points'", res.stderr)


class Progress(Course):
    def progress(self):
        res = self.run_tool("loop.py", "progress")
        self.assertClean(res, 0)
        return res.stdout

    def entry(self, best, last):
        return {"best": best, "max": 2, "last": last, "config": "plain",
                "when": "a time"}  # any string will do

    def test_bad_entries_count_as_absent(self):
        for data in ({"exercises": {"05_second": {"best": 11}}},
                     {"labs": {"runq": {}}}, {"labs": []}, {"exercises": []},
                     {"exercises": {"05_second": None}},
                     {"exercises": {"05_second": {"best": 1, "max": 2, "last": 2,
                                                  "config": "plain", "when": "x"}}}):
            self.progress_json(data)
            out = self.progress()
            self.assertIn("05    -/2  Exercise 05 (not graded yet)", out)
            self.assertIn("runq   not run yet", out)

    def test_an_exercise_graded_below_full_marks_comes_next(self):
        self.progress_json({"exercises": {"05_second": self.entry(1, 1)}})
        out = self.progress()
        self.assertIn("Next: exercise 05, Exercise 05 (1/2)", out)

    def test_a_lost_full_mark_shows_the_last_grade_and_is_next(self):
        self.progress_json({"exercises": {"01_first": self.entry(2, 2),
                                          "05_second": self.entry(2, 0)}})
        out = self.progress()
        self.assertIn("05    2/2  Exercise 05 (last 0/2, plain,", out)
        self.assertIn("loses points it once", out)
        self.assertIn("Next: exercise 05, Exercise 05 (last 0/2, best 2)", out)
        # The lab waits for exercise 05 at full marks again.
        self.assertIn("do exercise 05 first", out)

    def test_every_exercise_at_full_marks(self):
        self.progress_json({"exercises": {"01_first": self.entry(2, 2),
                                          "05_second": self.entry(2, 2)}})
        out = self.progress()
        self.assertIn("Every exercise is at full marks (2 of 2).", out)
        self.assertNotIn("last", out.split("):", 1)[1])

    def test_an_unwritable_folder_keeps_the_lab_result_quiet(self):
        (self.root / "file").write_text("")
        res = self.run_tool("loop.py", "record-lab", "runq", "pass",
                            state=self.root / "file" / "x")
        self.assertClean(res, 0)
        self.assertIn("not recorded", res.stderr)


class Hints(Course):
    def hint(self, *args):
        res = self.run_tool("loop.py", "hint", "01", *args)
        self.assertClean(res, 0)
        return res.stdout

    def test_a_corrupted_count_starts_over(self):
        for bad in ("x", None, 1.5, -1, 4, True, [1]):
            self.state.mkdir(exist_ok=True)
            (self.state / "hints.json").write_text(json.dumps({"01_first": bad}))
            out = self.hint()
            self.assertIn("Hint 1: where (1 of 3)", out, bad)
            self.assertIn("2 more hints", out, bad)

    def test_tiers_in_order_then_done(self):
        self.assertIn("(1 of 3)", self.hint())
        self.assertIn("(2 of 3)", self.hint())
        self.assertIn("(3 of 3)", self.hint())
        self.assertIn("all 3 hints were shown", self.hint())

    def test_inline_code_keeps_its_angle_brackets(self):
        out = self.hint()
        self.assertIn("Look at `std::atomic<G*>` and bold & the queue (x.md).", out)

    def test_an_unwritable_folder_still_shows_the_hint(self):
        (self.root / "file").write_text("")
        res = self.run_tool("loop.py", "hint", "01", state=self.root / "file" / "x")
        self.assertClean(res, 0)
        self.assertIn("(1 of 3)", res.stdout)
        self.assertIn("not recorded", res.stderr)


class Watch(Course):
    """`./course watch` runs the (fake) course script's grade at the start
    and after each change, with one seed throughout."""

    def watch(self, *args):
        calls = self.root / "calls"
        proc = subprocess.Popen(
            [PYTHON, str(self.root / "tools" / "grade" / "loop.py"), "watch", "01",
             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=self.env())
        try:
            for want in (1, 2):
                deadline = time.time() + 30
                while time.time() < deadline and (
                        not calls.is_file()
                        or len(calls.read_text().splitlines()) < want):
                    time.sleep(0.1)
                self.assertEqual(len(calls.read_text().splitlines()), want)
                if want == 1:
                    time.sleep(1.2)  # a new mtime, after the first stamps
                    readme = self.root / "exercises" / "01_first" / "README.md"
                    readme.write_text(readme.read_text() + "\n")
        finally:
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
        self.assertNotIn("Traceback", err)
        return out, calls.read_text().splitlines()

    def test_one_seed_for_every_grade(self):
        out, calls = self.watch("--timeout", "9")
        first = out.splitlines()[0]
        self.assertTrue(first.startswith("course watch: seed "), out)
        seed = first.split()[3]
        self.assertEqual(calls, [f"grade 01 --timeout 9 --seed {seed}"] * 2)

    def test_a_given_seed_is_kept(self):
        out, calls = self.watch("--seed", "5")
        self.assertEqual(calls, ["grade 01 --seed 5"] * 2)
        self.assertNotIn("course watch: seed", out)


if __name__ == "__main__":
    unittest.main()
