#!/usr/bin/env python3
"""The student's loop around the grader, run through the course script:

    ./course hint NN [--all | --reset]
        the next hint tier of exercise NN, from its README's <details>
        blocks, one per call (the tiers shown are remembered in
        .course/hints.json); --all: every tier; --reset: start again
    ./course watch NN [GRADE OPTIONS]
        grades exercise NN, then again whenever a file of its folder
        changes (checked every second), with one seed throughout (--seed's,
        or one chosen and printed at the start); Ctrl-C ends it
    ./course progress
        every exercise's best score so far (and its last, when lower) and
        every lab's last result (.course/progress.json, written by
        ./course grade and ./course lab), and what to do next: the first
        exercise graded below full marks, else the first not graded

Exit status 2 for a bad exercise or option, as the grader's.
"""

import argparse
import html
import pathlib
import random
import re
import subprocess
import sys
import time

import grade
import state

ROOT = grade.ROOT
COURSE = ROOT / "course"
LABS_README = ROOT / "labs" / "README.md"

DETAILS = re.compile(r"<details>\s*<summary>(.*?)</summary>(.*?)</details>", re.S)
FENCE = re.compile(r"^\s*```")
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
TAG = re.compile(r"</?[A-Za-z][^<>]*>")
# An inline code span (`std::atomic<G*>`): left as written.
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")


def one_exercise(selector):
    """The exercise a selector names (05 or 05_local_runq); GradeError if
    none."""
    if not selector:
        raise grade.GradeError("which exercise? (a number, e.g. 05)")
    return grade.find_exercises([selector])[0]


def hints(e):
    """The hint tiers of an exercise's README: (summary, body) pairs, in
    order."""
    text = (e.folder / "README.md").read_text()
    return [(TAG.sub("", s).strip(), body) for s, body in DETAILS.findall(text)]


def render(body, folder):
    """A hint's Markdown for a terminal: code blocks and inline code spans
    as written; elsewhere HTML tags dropped, entities decoded and links
    written as "text (path)", a link into the course as a path from the
    course's folder."""
    out, in_code = [], False
    for line in body.strip("\n").splitlines():
        if FENCE.match(line):
            in_code = not in_code
            out.append(line)
            continue
        if in_code:
            out.append(line)
            continue
        line = LINK.sub(lambda m: f"{m.group(1)} ({_target(m.group(2), folder)})",
                        line)
        text, at = [], 0
        for m in CODE_SPAN.finditer(line):
            text += [html.unescape(TAG.sub("", line[at:m.start()])), m.group(0)]
            at = m.end()
        text.append(html.unescape(TAG.sub("", line[at:])))
        out.append("".join(text))
    return "\n".join(out)


def _target(url, folder):
    """A link's target as a reader opens it: a URL as is, a file of the
    course as its path from the course's folder."""
    if re.match(r"^[a-z]+:", url) or url.startswith("#"):
        return url
    path, _, anchor = url.partition("#")
    resolved = (folder / path).resolve()
    try:
        shown = str(resolved.relative_to(ROOT))
    except ValueError:
        return url
    return shown + (f"#{anchor}" if anchor else "")


def tiers_shown(seen, exercise_id, count):
    """How many of an exercise's `count` hint tiers were shown, from
    hints.json's `seen`: an int in 0..count, anything else (a hand-edited
    file) counts as none."""
    n = seen.get(exercise_id, 0)
    if isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= count:
        return n
    return 0


def _save_hints(seen):
    try:
        state.save("hints.json", seen)
    except OSError as e:
        state.warn_unrecorded("the hints shown are", e)


def cmd_hint(argv):
    p = argparse.ArgumentParser(prog="course hint",
                                description="the next hint tier of an exercise")
    p.add_argument("exercise", help="its number (05) or folder name")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--all", action="store_true", help="show every tier")
    how.add_argument("--reset", action="store_true",
                     help="forget the tiers shown: the next call shows the first")
    args = p.parse_args(argv)
    e = one_exercise(args.exercise)
    tiers = hints(e)
    if not tiers:
        raise grade.GradeError(f"{e.id}/README.md has no hints (<details> blocks)")
    seen = state.load("hints.json")
    if args.reset:
        seen.pop(e.id, None)
        _save_hints(seen)
        print(f"course hint: {e.number}: the tiers shown are forgotten; "
              f"`./course hint {e.number}` shows hint 1 of {len(tiers)}")
        return 0
    shown = tiers_shown(seen, e.id, len(tiers))
    if args.all:
        picked = range(len(tiers))
    elif shown >= len(tiers):
        print(f"course hint: {e.number}: all {len(tiers)} hints were shown. "
              f"`./course hint {e.number} --all` shows them again; "
              f"--reset starts over.")
        return 0
    else:
        picked = [shown]
    for i in picked:
        title, body = tiers[i]
        print(f"== {e.number} {e.title}: {title} ({i + 1} of {len(tiers)})\n")
        print(render(body, e.folder))
        print()
    seen[e.id] = max(shown, picked[-1] + 1)
    _save_hints(seen)
    left = len(tiers) - seen[e.id]
    if left:
        print(f"{left} more hint{'s' if left > 1 else ''}, each giving away "
              f"more: ./course hint {e.number}")
    else:
        print("That was the last hint. The statement's \"Where to look\" "
              f"names the code to read: exercises/{e.id}/README.md")
    return 0


def watched_files(e):
    """The files of an exercise's folder that a change regrades: its own
    files (the student's sources, the interface, the tests, points.json),
    not solution/ or mutants/."""
    return sorted(f for f in e.folder.iterdir() if f.is_file())


def stamps(files):
    """Each file's modification time (None if it is gone)."""
    out = {}
    for f in files:
        try:
            out[f] = f.stat().st_mtime_ns
        except OSError:
            out[f] = None
    return out


def watch_command(e, grade_options, seed):
    """The grade command a watch runs at every change: one seed for the
    whole watch (`seed`, --seed's, or one chosen now and printed), so that
    a change's effect is not a new schedule's."""
    if seed is None:
        seed = random.SystemRandom().randrange(1, 2**32)
        grade_options = [*grade_options, "--seed", str(seed)]
        print(f"course watch: seed {seed} for every grade of this watch "
              f"(--seed {seed} replays it; --seed S chooses another)", flush=True)
    return [str(COURSE), "grade", e.number, *grade_options]


def cmd_watch(argv):
    p = argparse.ArgumentParser(
        prog="course watch",
        description="grade one exercise again whenever its files change")
    p.add_argument("exercise", help="its number (05) or folder name")
    p.epilog = ("Other options go to ./course grade (--config tsan, --seed S, "
                "--timeout N).")
    args, grade_options = p.parse_known_args(argv)
    e = one_exercise(args.exercise)
    # The grade options are checked now, with the grader's own parser, so
    # that a bad one fails here instead of on every change.
    options = grade.parser(prog="course watch").parse_args(
        [e.number, *grade_options])
    if options.exercises != [e.number]:
        raise grade.GradeError("watch grades one exercise; give the others "
                               "their own watch")
    if options.check or options.write_index or options.solutions:
        raise grade.GradeError("watch grades your code: --check, --solutions "
                               "and --write-index are not for it")
    files = watched_files(e)
    cmd = watch_command(e, grade_options, options.seed)
    try:
        while True:
            subprocess.run(cmd, cwd=ROOT)
            print(f"\ncourse watch: watching {len(files)} files of "
                  f"exercises/{e.id}/ (Ctrl-C ends it)", flush=True)
            before = stamps(files)
            while True:
                time.sleep(1)
                now = stamps(files)
                if now != before:
                    changed = [f.name for f in files if now[f] != before[f]]
                    print(f"course watch: {', '.join(changed)} changed; "
                          "grading again\n", flush=True)
                    break
    except KeyboardInterrupt:
        print("\ncourse watch: stopped")
        return 0


def labs():
    """The labs, in labs/README.md's order: (name, the exercises it names
    under "Do first")."""
    out = []
    for line in LABS_README.read_text().splitlines():
        m = re.match(r"^\| \[(\w+)\]\(\1/README\.md\) \|.*\| ([^|]*) \|$", line)
        if m:
            out.append((m.group(1), re.findall(r"\b\d\d\b", m.group(2))))
    return out


def _exercises(numbers):
    return f"exercise{'s' if len(numbers) > 1 else ''} {', '.join(numbers)}"


def next_exercise(exercises, record):
    """The exercise to work on: the lowest-numbered one graded below full
    marks (last time: a regression counts), else the first not graded
    yet; None when every one's last grade is full. `record`: progress.json."""
    graded, fresh = [], []
    for e in exercises:
        r = state.exercise_record(record, e.id)
        if r is None:
            fresh.append(e)
        elif r["last"] < e.max_points():
            graded.append(e)
    return (graded + fresh or [None])[0]


def cmd_progress(argv):
    p = argparse.ArgumentParser(prog="course progress",
                                description="best scores so far, and what is next")
    p.parse_args(argv)
    record = state.load("progress.json")
    exercises = grade.find_exercises([])
    print("Exercises (best score of ./course grade so far; \"last\" when the "
          "latest grade is lower:\nthe code as it is now loses points it once "
          "earned):")
    full = set()  # exercises whose latest grade is full marks
    for e in exercises:
        r = state.exercise_record(record, e.id)
        top = e.max_points()
        if r is None:
            score, note = f"-/{top}", "not graded yet"
        else:
            score = f"{r['best']}/{top}"
            note = f"{r['config']}, {r['when']}"
            if r["last"] < r["best"]:
                note = f"last {r['last']}/{top}, " + note
            if r["last"] >= top:
                full.add(e.number)
        print(f"  {e.number} {score:>6}  {e.title} ({note})")
    lab_list = labs()
    print("\nLabs (./course lab NAME: stage 3's own tests with your piece):")
    for name, first in lab_list:
        r = state.lab_record(record, name)
        if r is None:
            note = "not run yet"
        elif r["passed"]:
            note = f"passes ({r['when']})"
        else:
            note = f"fails ({r['when']})" + (", passed before" if r["ever_passed"] else "")
        print(f"  {name:<6} {note} (do first: {_exercises(first)})")
    e = next_exercise(exercises, record)
    print()
    if e:
        r = state.exercise_record(record, e.id)
        if r is None:
            where = "not graded yet"
        elif r["last"] < r["best"]:
            where = f"last {r['last']}/{e.max_points()}, best {r['best']}"
        else:
            where = f"{r['last']}/{e.max_points()}"
        print(f"Next: exercise {e.number}, {e.title} ({where}): "
              f"exercises/{e.id}/README.md; `./course grade {e.number}` grades "
              f"it, `./course hint {e.number}` gives a hint, "
              f"`./course watch {e.number}` grades it at every save.")
    else:
        print(f"Every exercise is at full marks ({len(exercises)} of "
              f"{len(exercises)}).")
    open_labs = [(n, f) for n, f in lab_list
                 if not (state.lab_record(record, n) or {}).get("passed")]
    if open_labs:
        name, first = open_labs[0]
        missing = [n for n in first if n not in full]
        after = (f" (labs/README.md: do {_exercises(missing)} first)"
                 if missing else "")
        print(f"Next lab: {name}, `./course lab {name}`{after}.")
    else:
        print("Every lab passes stage 3's tests.")
    return 0


def cmd_record_lab(argv):
    """`./course lab NAME` records its result here (not for students)."""
    p = argparse.ArgumentParser(prog="loop.py record-lab")
    p.add_argument("name", choices=[n for n, _ in labs()])
    p.add_argument("result", choices=["pass", "fail"])
    args = p.parse_args(argv)
    try:
        state.record_lab(args.name, args.result == "pass")
    except OSError as e:
        state.warn_unrecorded("the lab's result is", e)
    return 0


COMMANDS = {"hint": cmd_hint, "watch": cmd_watch, "progress": cmd_progress,
            "record-lab": cmd_record_lab}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        return 2
    name = sys.argv[1]
    try:
        return COMMANDS[name](sys.argv[2:])
    except grade.GradeError as e:
        print(f"course {name}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
