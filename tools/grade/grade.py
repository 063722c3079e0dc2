#!/usr/bin/env python3
"""The course's grader: builds the exercises, runs their tests, scores them.

Run it through the course entry script:

    ./course grade                 every exercise, the student's code
    ./course grade 05 07           exercises 05 and 07 only
    ./course grade --solutions     the reference solutions instead
    ./course grade --config tsan   built with ThreadSanitizer (or asan, ubsan)
    ./course grade --json F        also write a JSON report to F
    ./course grade --junit F       also write a JUnit XML report to F
    ./course grade --check         CI: every solution scores full marks,
                                   every test fails on every skeleton, and
                                   every wrong solution in mutants/ loses
                                   points

Each test runs in a process of its own (a crash or a hang costs that test
only), with a time limit, and with GMP_EXERCISE_SEED set to this run's seed
(printed; --seed replays one). Points per test come from each exercise's
points.json; the tests it lists under "tsan" (races that x86 hides) run
built with ThreadSanitizer unless --config names another sanitizer, and
those it lists under "relacy" (memory orders x86 hides) run in the
exercise's memory-model build, where Relacy explores what the C++ model
allows (exercises/testing/atomic.h), whatever --config says. A
failed test shows what in its log shows the bug (feedback.py: gtest's
failure blocks, a sanitizer's report, a watchdog's line) and the command
that runs it alone. Each grade of the student's code is recorded for
`./course progress` (state.py). Exit
status: 0 at full marks, 1 below, 2 when the grader itself cannot run
(unknown exercise, solutions stripped, points.json and the tests
disagree).
"""

import argparse
import concurrent.futures
import copy
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import tempfile
import threading
import xml.etree.ElementTree as ET

import feedback
import state

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXERCISES = ROOT / "exercises"


class GradeError(Exception):
    """The grader cannot run: a message for the user, exit status 2."""


class Exercise:
    """One exercises/NN_name folder and its points.json."""

    def __init__(self, folder):
        self.id = folder.name
        self.number = folder.name.split("_", 1)[0]
        self.folder = folder
        path = folder / "points.json"
        try:
            meta = json.loads(path.read_text())
            self.title = meta["title"]
            self.stage = meta["stage"]
            self.points = meta["points"]  # test name -> points, in report order
            if not isinstance(self.points, dict) or not all(
                    isinstance(v, int) for v in self.points.values()):
                raise ValueError('"points" is not an object of test names '
                                 'and integers')
        except (OSError, ValueError, KeyError, TypeError) as e:
            what = f"no {e}" if isinstance(e, KeyError) else str(e)
            shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            raise GradeError(f"{shown} cannot be read: {what}")
        # Tests graded under ThreadSanitizer whatever --config says
        # (unless it names another sanitizer): races x86 would hide.
        self.tsan = meta.get("tsan", [])
        # Tests of the memory-model build ({kind}_relacy_test), always run.
        self.relacy = meta.get("relacy", [])
        for key in ("tsan", "relacy"):
            unknown = [t for t in getattr(self, key) if t not in self.points]
            if unknown:
                raise GradeError(f"{folder.name}/points.json: \"{key}\" names "
                                 f"tests without points: {', '.join(unknown)}")
        self.has_solution = (folder / "solution").is_dir()

    def label(self, kind):
        return f"//exercises/{self.id}:{kind}_test"

    def relacy_label(self, kind):
        return f"//exercises/{self.id}:{kind}_relacy_test"

    def max_points(self):
        return sum(self.points.values())


def find_exercises(selectors):
    all_ex = [Exercise(f) for f in sorted(EXERCISES.iterdir())
              if f.is_dir() and (f / "points.json").is_file()]
    if not selectors:
        return all_ex
    chosen = []
    for s in selectors:
        match = [e for e in all_ex if e.id == s or e.number == s.zfill(2)]
        if not match:
            raise GradeError(f"no exercise '{s}'; there are: "
                             + " ".join(e.number for e in all_ex))
        chosen += [e for e in match if e not in chosen]
    return chosen


INDEX = ROOT / "docs" / "exercises.md"
WORKFLOW = ROOT / ".github" / "workflows" / "classroom.yml"
BEGIN = "<!-- exercises:begin (written by ./course grade --write-index) -->"
END = "<!-- exercises:end -->"

WORKFLOW_HEAD = """\
# GitHub Classroom autograding: one step per exercise, each worth its
# points when `./course grade NN` reaches full marks on it.
# Written by `./course grade --write-index` from exercises/*/points.json;
# CI checks that it is current.
name: Autograding Tests
on: [push, repository_dispatch]
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  run-autograding-tests:
    runs-on: ubuntu-latest
    # The course's packages are Debian 12's (Bazel 4.2.3 among them).
    container: debian:bookworm
    if: github.actor != 'github-classroom[bot]'
    steps:
      - name: Checkout code
        uses: actions/checkout@v4
      - name: Install the course's packages
        run: ./course setup
"""

WORKFLOW_STEP = """\
      - name: {name}
        id: ex{number}
        uses: classroom-resources/autograding-command-grader@v1
        with:
          test-name: {name}
          command: ./course grade {number}
          timeout: 20
          max-score: {points}
"""


def index_table(exercises):
    rows = ["| # | Exercise | Stage | Tests | Points |",
            "|---|---|---|---|---|"]
    for e in exercises:
        rows.append(f"| {e.number} | [{e.title}](../exercises/{e.id}/README.md)"
                    f" | `{e.stage}` | {len(e.points)} | {e.max_points()} |")
    rows.append(f"| | **Total** | | {sum(len(e.points) for e in exercises)}"
                f" | **{sum(e.max_points() for e in exercises)}** |")
    return "\n".join(rows)


def between_markers(path, body):
    """path's text with `body` between its BEGIN and END markers."""
    text = path.read_text()
    if BEGIN not in text or END not in text:
        raise GradeError(f"{path} lacks the markers {BEGIN} ... {END}")
    head, rest = text.split(BEGIN, 1)
    return head + BEGIN + "\n" + body + "\n" + END + rest.split(END, 1)[1]


def stage_list(exercises, stage):
    """The bullet list of a stage README's exercises."""
    return "\n".join(f"- [{e.number}: {e.title}](../exercises/{e.id}/README.md)"
                     f" ({e.max_points()} points)"
                     for e in exercises if e.stage == stage)


def generated_files(exercises):
    """The files written from points.json: {path: wanted text}: the index,
    each stage README's list and the Classroom workflow."""
    files = {INDEX: between_markers(INDEX, index_table(exercises))}
    for stage in sorted({e.stage for e in exercises}):
        readme = ROOT / stage / "README.md"
        files[readme] = between_markers(readme, stage_list(exercises, stage))
    ids = ",".join(f"ex{e.number}" for e in exercises)
    env = "".join(f"          EX{e.number}_RESULTS: \"${{{{steps.ex{e.number}.outputs.result}}}}\"\n"
                  for e in exercises)
    flow = WORKFLOW_HEAD + "".join(
        WORKFLOW_STEP.format(number=e.number, points=e.max_points(),
                             name=json.dumps(f"{e.number} {e.title}"))
        for e in exercises)
    flow += ("      - name: Autograding Reporter\n"
             "        uses: classroom-resources/autograding-grader-reporter@v1\n"
             "        env:\n" + env +
             "        with:\n"
             f"          runners: {ids}\n")
    files[WORKFLOW] = flow
    return files


def bazel_flags(args):
    flags = []
    # Warnings are errors only for the course's own check: a student's code
    # (GitHub Classroom sets CI=true too) is graded on its tests, not on
    # the compiler's warnings, which still show.
    if args.check:
        flags.append("--config=ci")
    if args.config:
        flags.append(f"--config={args.config}")
    return flags


def build(args, labels):
    """Builds the labels (keeping going past failures); returns the set of
    labels that built. The compiler's messages go to the terminal."""
    with tempfile.TemporaryDirectory() as tmp:
        events = pathlib.Path(tmp) / "events.json"
        cmd = [args.bazel, "build", *bazel_flags(args), "--keep_going",
               "--ui_event_filters=-info", "--noshow_progress", "--show_result=0",
               f"--build_event_json_file={events}", *labels]
        subprocess.run(cmd, cwd=ROOT, stdout=sys.stderr)
        if not events.is_file():
            raise GradeError("bazel build did not run: " + " ".join(cmd))
        built = set()
        for line in events.read_text().splitlines():
            ev = json.loads(line)
            done = ev.get("id", {}).get("targetCompleted")
            if done and ev.get("completed", {}).get("success"):
                built.add(done["label"])
        return built


def bazel_bin(args):
    cmd = [args.bazel, "info", *bazel_flags(args), "bazel-bin"]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        raise GradeError("bazel info failed:\n" + out.stderr)
    return pathlib.Path(out.stdout.strip())


def list_tests(binary):
    """The tests in a gtest binary, or an error message if it cannot say."""
    try:
        out = subprocess.run([binary, "--gtest_list_tests"], capture_output=True,
                             text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return [], "the test binary hangs before running any test"
    if out.returncode != 0:
        return [], ("the test binary does not start (status "
                    f"{out.returncode}):\n" + feedback.tail(out.stdout + out.stderr))
    tests, suite = [], None
    for line in out.stdout.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            suite = line.split()[0]
        else:
            tests.append(suite + line.split()[0])
    return tests, None


def sanitizer_env(config):
    """The test environment .bazelrc gives `bazel test --config=CONFIG`
    (its `test:CONFIG --test_env=NAME=VALUE` lines: ASAN_OPTIONS...), so
    that a test the grader runs itself behaves as under bazel test."""
    env = {}
    if not config:
        return env
    for line in (ROOT / ".bazelrc").read_text().splitlines():
        words = line.split()
        if words[:1] != [f"test:{config}"]:
            continue
        for w in words[1:]:
            if w.startswith("--test_env=") and "=" in w[len("--test_env="):]:
                name, value = w[len("--test_env="):].split("=", 1)
                env[name] = value
    return env


# The test processes running now (run_process), and whether the grade was
# interrupted: stop_running kills them, and no new one starts.
RUNNING = set()
RUNNING_LOCK = threading.Lock()
STOPPING = False


def run_process(cmd, env, timeout):
    """Runs cmd in a session of its own; on timeout kills the whole
    session (the test and any process it started). Returns (returncode,
    stdout, stderr), returncode None on timeout (with what it printed)."""
    with RUNNING_LOCK:
        if STOPPING:
            raise GradeError("the grade was interrupted")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env,
                                start_new_session=True)
        RUNNING.add(proc)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        return None, stdout, stderr
    except BaseException:  # Ctrl-C or SIGTERM in a test run here
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    finally:
        with RUNNING_LOCK:
            RUNNING.discard(proc)
    return proc.returncode, stdout, stderr


def stop_running():
    """Ctrl-C or SIGTERM: kills every test process running (their own
    sessions do not get the signal) and starts no other."""
    global STOPPING
    with RUNNING_LOCK:
        STOPPING = True
        for proc in RUNNING:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


# The workspace's top folders: the frames of a sanitizer's stack that are
# the course's code (feedback.py keeps those).
OWN_DIRS = {d.name for d in ROOT.iterdir() if d.is_dir()}


def shown_path(binary):
    """A test binary's path as a student types it in the course's folder:
    through the bazel-out link when the binary is under it (Bazel's
    bazel-bin link follows the last build's config, bazel-out holds every
    config's tree), else absolute."""
    out = ROOT / "bazel-out"
    try:
        return out.name + "/" + str(binary.relative_to(out.resolve()))
    except (OSError, ValueError):
        return str(binary)


def test_env(args):
    """The variables the grader sets for a test that change what it does,
    in the order a rerun command shows them: the seed, the per-test limit
    of the harness's watchdog (exercises/testing/harness.h; 10 s below
    --timeout, so that the watchdog names a hung test before the grader
    kills it without a word), the iterations if the grader was given
    them, the sanitizer's options. (The grader also sets TEST_TMPDIR, as
    bazel test does; no test reads it, so a rerun leaves it out.)"""
    env = {"GMP_EXERCISE_SEED": str(args.seed),
           "GMP_EXERCISE_TEST_LIMIT": str(max(1, args.timeout - 10))}
    if os.environ.get("GMP_EXERCISE_ITERATIONS"):
        env["GMP_EXERCISE_ITERATIONS"] = os.environ["GMP_EXERCISE_ITERATIONS"]
    env.update(sanitizer_env(args.config))
    return env


def run_test(binary, name, args):
    """Runs one test in its own process; returns (passed, message, rerun):
    rerun is the command that runs it again by hand (feedback.py)."""
    rerun = feedback.rerun_command(shown_path(binary), name, test_env(args))
    with tempfile.TemporaryDirectory() as tmp:
        report = pathlib.Path(tmp) / "report.json"
        env = dict(os.environ, TEST_TMPDIR=tmp, **test_env(args))
        code, stdout, stderr = run_process(
            [binary, f"--gtest_filter={name}", f"--gtest_output=json:{report}"],
            env, args.timeout)
        log = stdout + stderr
        if code is None:
            return False, feedback.explain(log, None, timeout=args.timeout,
                                           own_dirs=OWN_DIRS), rerun
        ran = None
        try:
            suites = json.loads(report.read_text()).get("testsuites", [])
        except (OSError, ValueError):  # no report: the process died first
            suites = []
        for suite in suites:
            for t in suite.get("testsuite", []):
                if f"{suite['name']}.{t['name']}" == name:
                    ran = t
        if code == 0 and ran and not ran.get("failures") \
                and ran.get("result") == "COMPLETED":
            return True, "", ""
        if ran and ran.get("result") == "SKIPPED" and not ran.get("failures"):
            return False, "skipped: " + feedback.tail(stdout, 3), rerun
        failures = ran.get("failures") if ran else None
        return False, feedback.explain(log, code, report_failures=failures,
                                       own_dirs=OWN_DIRS), rerun


# Relacy models a seq_cst fence more weakly than C++20 does: a correct
# pairing of a seq_cst fence with seq_cst operations on the other side can
# fail there (docs/course/memory_order.md). Said next to such a failure.
RELACY_FENCE_NOTE = (
    "note: your code uses std::atomic_thread_fence. The memory-model checker "
    "(Relacy) follows acquire and release fences, but models a seq_cst fence "
    "more weakly than C++20, so a correct seq_cst fence can fail here: put "
    "seq_cst on the operations themselves, as Go's runtime does.")


def fences_in_student_code(e):
    """Whether the student's files of exercise e call a fence."""
    names = [f.name for f in (e.folder / "solution").iterdir()] \
        if e.has_solution else [f.name for f in e.folder.glob("*.cc")]
    for name in names:
        path = e.folder / name
        if path.is_file() and "atomic_thread_fence" in path.read_text():
            return True
    return False


# The message of a test that --check's wrong solutions did not run, because
# another test of the exercise had failed already (grade_one).
NOT_RUN = "not run: another test failed first"


def runs_alone(name):
    """Whether a test races threads on every core: its suite's name ends
    in Stress. The grader runs such a test with nothing else running, after
    the exercise's other tests: beside another test its threads would often
    take turns on one core, and a race the test is there to catch (a load
    and a store where an exchange belongs) would then rarely happen."""
    return name.split(".", 1)[0].endswith("Stress")


def grade_one(e, binary, ok_build, pool, args, tsan=None, relacy=None,
              stop_at_failure=False):
    """Runs one exercise's tests; returns its result (a dict). `tsan`,
    if given, is (binary, built, args) of the ThreadSanitizer build, for
    the tests in e.tsan; `relacy` the same of the memory-model build, for
    the tests in e.relacy. With stop_at_failure (the wrong solutions of
    --check, which only need to lose a point), a failed test cancels the
    tests not yet started; they are reported as not run."""
    res = {"id": e.id, "title": e.title, "stage": e.stage, "tests": [],
           "problems": []}
    # Each test's build: (binary, built, args, what a build failure says).
    where = {}
    for name in e.points:
        if relacy and name in e.relacy:
            where[name] = relacy + ("the memory-model build",)
        elif tsan and name in e.tsan:
            where[name] = tsan + ("ThreadSanitizer",)
        else:
            where[name] = (binary, ok_build, args, None)
    listed = {}  # binary -> (its tests, why it cannot list them)
    for b, built, _, _ in where.values():
        if b not in listed:
            listed[b] = list_tests(b) if built else ([], None)
    present = {t for tests, _ in listed.values() for t in tests}
    res["problems"] += [f"test {t} has no points in points.json"
                        for t in sorted(present) if t not in e.points]
    jobs, alone = {}, []
    for name in e.points:
        b, built, b_args, _ = where[name]
        if not built or listed[b][1]:
            continue
        if name not in listed[b][0]:
            res["problems"].append(f"points.json names {name}, which the tests lack")
            continue
        if runs_alone(name):
            alone.append(name)
        else:
            jobs[name] = pool.submit(run_test, b, name, b_args)
    # Each test's (passed, message, rerun), the ones that run alone last,
    # when the others are done and the machine is theirs.
    failed = False
    for job in concurrent.futures.as_completed(jobs.values()):
        if job.cancelled():
            continue
        failed = failed or not job.result()[0]
        if failed and stop_at_failure:
            for other in jobs.values():
                other.cancel()  # the ones not started yet
    results = {name: job.result() for name, job in jobs.items()
               if not job.cancelled()}
    for name in alone:
        if failed and stop_at_failure:
            break
        b, _, b_args, _ = where[name]
        results[name] = run_test(b, name, b_args)
        failed = failed or not results[name][0]
    for name, pts in e.points.items():
        b, built, _, build_name = where[name]
        rerun = ""
        if not built and build_name is None:
            passed, msg = False, "does not compile (see the compiler's messages above)"
        elif not built:
            passed, msg = False, (f"does not compile in {build_name} "
                                  "(see the compiler's messages above)")
        elif listed[b][1]:
            passed, msg = False, listed[b][1]
        elif (name in jobs or name in alone) and name not in results:
            passed, msg = False, NOT_RUN
        elif name not in results:
            passed, msg = False, "no such test"
        else:
            passed, msg, rerun = results[name]
        if not passed and build_name == "the memory-model build" and \
                fences_in_student_code(e):
            msg += "\n" + RELACY_FENCE_NOTE
        res["tests"].append({"name": name, "max": pts,
                             "points": pts if passed else 0,
                             "passed": passed, "message": msg, "rerun": rerun,
                             "tsan": build_name == "ThreadSanitizer",
                             "relacy": build_name == "the memory-model build"})
    res["score"] = sum(t["points"] for t in res["tests"])
    res["max"] = e.max_points()
    return res


def show(e, res):
    """Prints one exercise's tests, failure messages and score."""
    print(f"\n== {e.number} {e.title} ({e.stage})")
    last = None
    for t in res["tests"]:
        mark = "PASS" if t["passed"] else "FAIL"
        name = t["name"] + (" [tsan]" if t.get("tsan") else "") + (
            " [relacy]" if t.get("relacy") else "")
        print(f"  {mark}  {name:<60} {t['points']}/{t['max']}")
        if t["message"] != last:  # say a shared reason once
            # Bounded already (feedback.py): each report whole, its stacks cut.
            for line in t["message"].splitlines():
                print(f"        {line}".rstrip())
        elif t["message"]:
            print("        (the same failure as the test above)")
        last = t["message"]
        if t.get("rerun"):
            print(f"        run it alone: {t['rerun']}")
    for p in res["problems"]:
        print(f"  grader: {p}")
    print(f"  {e.id}: {res['score']}/{res['max']}")


def grade(args, exercises, kind, quiet=False, stop_at_failure=False):
    """Builds and runs `kind` (student or solution) of each exercise.
    Returns a list of per-exercise results (dicts); stop_at_failure: see
    grade_one."""
    if kind == "solution":
        stripped = [e.id for e in exercises if not e.has_solution]
        if stripped:
            raise GradeError("no reference solution in: " + " ".join(stripped)
                             + " (stripped for a graded offering?)")
    built = build(args, [e.label(kind) for e in exercises])
    bindir = bazel_bin(args)
    # The race tests' build: plain grading (or --config tsan itself) runs
    # them under ThreadSanitizer; asan or ubsan grading runs them as asked.
    racy = [e for e in exercises if e.tsan] if args.config in (None, "tsan") else []
    tsan_args = copy.copy(args)
    tsan_args.config = "tsan"
    tsan_built, tsan_bindir = set(), None
    if racy:
        tsan_built = build(tsan_args, [e.label(kind) for e in racy])
        tsan_bindir = bazel_bin(tsan_args)
    # The memory-model tests' build: plain (Relacy runs the threads itself,
    # under no sanitizer), whatever --config says.
    ordered = [e for e in exercises if e.relacy]
    relacy_args = copy.copy(args)
    relacy_args.config = None
    relacy_built, relacy_bindir = set(), None
    if ordered:
        relacy_built = build(relacy_args, [e.relacy_label(kind) for e in ordered])
        relacy_bindir = bazel_bin(relacy_args)
    results = []
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs)
    try:
        for e in exercises:
            binary = bindir / "exercises" / e.id / f"{kind}_test"
            tsan = None
            if e in racy:
                tsan = (tsan_bindir / "exercises" / e.id / f"{kind}_test",
                        e.label(kind) in tsan_built, tsan_args)
            relacy = None
            if e in ordered:
                relacy = (relacy_bindir / "exercises" / e.id / f"{kind}_relacy_test",
                          e.relacy_label(kind) in relacy_built, relacy_args)
            res = grade_one(e, binary, e.label(kind) in built, pool, args,
                            tsan, relacy, stop_at_failure)
            results.append(res)
            if not quiet:
                show(e, res)
    except BaseException:
        # Ctrl-C or SIGTERM (check_mutants's stop_by_exit): the tests not
        # started are dropped and the running ones killed, so that the
        # caller's cleanup (the students' files restored) comes at once,
        # not after every queued test has run to its time limit.
        pool.shutdown(wait=False, cancel_futures=True)
        stop_running()
        raise
    finally:
        pool.shutdown(wait=True)
    return results


def totals(results):
    return (sum(r["score"] for r in results), sum(r["max"] for r in results))


def write_json(path, results, args, kind):
    score, top = totals(results)
    pathlib.Path(path).write_text(json.dumps(
        {"variant": kind, "seed": args.seed, "config": args.config or "plain",
         "score": score, "max": top, "exercises": results}, indent=2) + "\n")


def write_junit(path, results):
    score, top = totals(results)
    root = ET.Element("testsuites", name="gmp-course exercises",
                      tests=str(sum(len(r["tests"]) for r in results)),
                      failures=str(sum(not t["passed"] for r in results
                                       for t in r["tests"])))
    for r in results:
        suite = ET.SubElement(root, "testsuite", name=r["id"],
                              tests=str(len(r["tests"])),
                              failures=str(sum(not t["passed"] for t in r["tests"])))
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="score", value=f"{r['score']}/{r['max']}")
        for t in r["tests"]:
            case = ET.SubElement(suite, "testcase", classname=r["id"], name=t["name"])
            cprops = ET.SubElement(case, "properties")
            ET.SubElement(cprops, "property", name="points",
                          value=f"{t['points']}/{t['max']}")
            if not t["passed"]:
                first = (t["message"].splitlines() or [""])[0]
                text = t["message"]
                if t.get("rerun"):
                    text += "\nrun it alone: " + t["rerun"]
                ET.SubElement(case, "failure", message=first).text = text
    root.set("score", f"{score}/{top}")
    ET.ElementTree(root).write(path, encoding="unicode", xml_declaration=True)


def mutant_sources(e, patch):
    """The student files a mutant makes: the reference solution's files,
    one of them patched. Returns {path: text}; raises GradeError if the
    patch does not apply."""
    files = {e.folder / f.name: f.read_text()
             for f in sorted((e.folder / "solution").iterdir()) if f.is_file()}
    target = None
    for line in patch.read_text().splitlines():
        if line.startswith("+++ b/solution/"):
            target = e.folder / line[len("+++ b/solution/"):].split("\t")[0]
    if target not in files:
        raise GradeError(f"{patch.relative_to(ROOT)}: patches no file of solution/")
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / target.name
        res = subprocess.run(["patch", "--silent", "-o", str(out),
                              str(e.folder / "solution" / target.name), str(patch)],
                             capture_output=True, text=True)
        if res.returncode != 0:
            raise GradeError(f"{patch.relative_to(ROOT)} does not apply to the "
                             f"solution:\n{res.stdout}{res.stderr}")
        files[target] = out.read_text()
    return files


def check_mutants(args, exercises):
    """CI: each exercise's wrong solutions (mutants/*.patch, applied to its
    reference solution) lose points on one plain grade. A round writes one
    wrong solution of every exercise into the students' files and grades
    them together (each build the grade needs, plain, ThreadSanitizer and
    memory-model, made once for all of them; then each one's tests); the
    files are restored afterwards, also after Ctrl-C, SIGTERM or SIGHUP.
    A wrong solution's tests stop at its first failure (stop_at_failure).
    A patch that does not apply is a problem of its own; the others are
    graded. Returns problems."""
    queues = {e: sorted((e.folder / "mutants").glob("*.patch")) for e in exercises}
    queues = {e: q for e, q in queues.items() if q}
    kept = {e.folder / f.name: (e.folder / f.name).read_bytes()
            for e in queues for f in (e.folder / "solution").iterdir() if f.is_file()}
    bad, caught, total = [], 0, 0
    # A SIGTERM or SIGHUP (a `timeout`, a closed terminal) would end Python
    # without running the `finally` below, and leave wrong solutions in the
    # students' files: it raises SystemExit instead, as Ctrl-C raises
    # KeyboardInterrupt.
    previous = {sig: signal.signal(sig, stop_by_exit)
                for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        for r in range(max((len(q) for q in queues.values()), default=0)):
            batch = []
            for e, q in queues.items():
                if r >= len(q):
                    continue
                try:
                    sources = mutant_sources(e, q[r])
                except GradeError as err:  # a problem; the others go on
                    print(f"  {e.id}: {q[r].stem}: DOES NOT APPLY")
                    bad.append(str(err))
                    total += 1
                    continue
                for path, text in sources.items():
                    path.write_text(text)
                batch.append((e, q[r]))
            if not batch:
                continue
            results = grade(args, [e for e, _ in batch], "student",
                            quiet=True, stop_at_failure=True)
            for (e, patch), res in zip(batch, results):
                total += 1
                problem = judge_mutant(e, patch, res)
                if problem:
                    bad.append(problem)
                else:
                    caught += 1
    finally:
        for path, data in kept.items():
            path.write_bytes(data)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print(f"  wrong solutions caught: {caught} of {total}")
    return bad


def stop_by_exit(signum, frame):
    """A signal handler: ends the program with the status a shell gives a
    program the signal killed (128 + its number), through SystemExit, so
    that `finally` blocks run."""
    raise SystemExit(128 + signum)


def judge_mutant(e, patch, res):
    """Prints whether one wrong solution lost points; returns the problem
    if it did not, else None."""
    if any(t["message"].startswith("does not compile") for t in res["tests"]):
        # Losing every point to a compiler error proves nothing about the
        # tests.
        print(f"  {e.id}: {patch.stem}: DOES NOT BUILD")
        return (f"{e.id}: the wrong solution {patch.name} does not build "
                "(with CI's warnings as errors)")
    lost = [t["name"] for t in res["tests"]
            if not t["passed"] and t["message"] != NOT_RUN]
    if not lost:
        print(f"  {e.id}: {patch.stem}: NOT CAUGHT (full marks)")
        return f"{e.id}: the wrong solution {patch.name} scores full marks"
    # The score would count the tests not run as lost: the failures only.
    print(f"  {e.id}: {patch.stem}: caught by "
          f"{', '.join(lost[:3])}{' ...' if len(lost) > 3 else ''}")
    return None


def check(args, exercises):
    """CI: the exercises are sound. Returns the exit status."""
    bad = [f"{path.relative_to(ROOT)} is stale: run ./course grade --write-index"
           for path, text in generated_files(find_exercises([])).items()
           if not path.is_file() or path.read_text() != text]
    print("course grade --check: the reference solutions must score full marks")
    sol = grade(args, exercises, "solution")
    print("\ncourse grade --check: every test must fail on the skeletons")
    skel = grade(args, exercises, "student", quiet=True)
    for r in sol:
        bad += [f"{r['id']}: {p}" for p in r["problems"]]
        bad += [f"{r['id']}: the solution fails {t['name']}"
                for t in r["tests"] if not t["passed"]]
    # A skeleton must build and start, so that a student begins from code
    # that compiles and tests that fail on their own assertions.
    unusable = ("does not compile", "the test binary", "no such test")
    for r in skel:
        bad += [f"{r['id']}: skeleton: {p}" for p in r["problems"]]
        bad += [f"{r['id']}: the skeleton passes {t['name']}"
                for t in r["tests"] if t["passed"]]
        bad += sorted({f"{r['id']}: the skeleton cannot be graded: "
                       f"{t['message'].splitlines()[0]}"
                       for t in r["tests"]
                       if t["message"].startswith(unusable)})
        print(f"  {r['id']}: skeleton {r['score']}/{r['max']}")
    print("\ncourse grade --check: every wrong solution in mutants/ must lose points")
    bad += check_mutants(args, exercises)
    s_sol, top = totals(sol)
    s_skel, _ = totals(skel)
    print(f"\nSolutions: {s_sol}/{top}. Skeletons: {s_skel}/{top}. "
          f"Exercises: {len(exercises)}, tests: {sum(len(e.points) for e in exercises)}.")
    for b in bad:
        print(f"course grade --check: {b}")
    return 1 if bad else 0


def parser(prog=None):
    """The grader's command line (also what `./course watch` checks its
    grade options with, under its own name `prog`)."""
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    p.add_argument("exercises", nargs="*", help="numbers (05) or folder names")
    p.add_argument("--solutions", action="store_true",
                   help="grade the reference solutions")
    p.add_argument("--config", choices=["tsan", "asan", "ubsan"])
    p.add_argument("--seed", type=int, default=None,
                   help="GMP_EXERCISE_SEED for every test (default: random)")
    p.add_argument("--timeout", type=int, default=300, help="seconds per test")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--json", metavar="FILE")
    p.add_argument("--junit", metavar="FILE")
    p.add_argument("--check", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--write-index", action="store_true",
                   help="rewrite docs/exercises.md's table and the Classroom workflow")
    p.add_argument("--bazel", default="bazel", help=argparse.SUPPRESS)
    return p


def main():
    args = parser().parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1, 2**32)
    try:
        exercises = find_exercises(args.exercises)
        if args.write_index:
            for path, text in generated_files(find_exercises([])).items():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                print(f"course grade: wrote {path.relative_to(ROOT)}")
            return 0
        print(f"course grade: seed {args.seed} (replay with --seed {args.seed})")
        if args.check:
            return check(args, exercises)
        kind = "solution" if args.solutions else "student"
        results = grade(args, exercises, kind)
    except GradeError as e:
        print(f"course grade: {e}", file=sys.stderr)
        return 2
    if kind == "student":
        try:
            state.record_grades(results, args.config)  # for ./course progress
        except Exception as e:  # noqa: BLE001 -- the record never stops a grade
            state.warn_unrecorded("this grade was", e)
    if args.json:
        write_json(args.json, results, args, kind)
    if args.junit:
        write_junit(args.junit, results)
    score, top = totals(results)
    problems = [p for r in results for p in r["problems"]]
    print(f"\nScore: {score}/{top}")
    if problems:
        return 2
    return 0 if score == top else 1


if __name__ == "__main__":
    sys.exit(main())
