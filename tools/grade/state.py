"""The student's own record, kept in the git-ignored folder .course/ at the
course's root: which hint tiers of each exercise were shown (hints.json),
and the best score of each exercise and the last result of each lab
(progress.json). Written by `./course grade`, `./course lab NAME` and
`./course hint`; read by `./course progress` (tools/grade/loop.py).

Losing the folder loses nothing but this record, and the record never
stops a command: a file that is not what this module writes counts as
absent (entry by entry), and a folder that cannot be written costs a
warning.
"""

import datetime
import json
import os
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
# GMP_COURSE_STATE moves the folder (the tests use a temporary one).
DIR = pathlib.Path(os.environ.get("GMP_COURSE_STATE", ROOT / ".course"))


def load(name):
    """The JSON object in .course/NAME, or {} if there is none (or it is
    not JSON: the record is a convenience, never a reason to fail)."""
    try:
        data = json.loads((DIR / name).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save(name, data):
    """Writes .course/NAME whole (a new file renamed over the old)."""
    DIR.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=DIR, prefix=name, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, DIR / name)


def _now():
    return datetime.datetime.now().isoformat(timespec="seconds")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def exercise_record(data, exercise_id):
    """An exercise's entry in progress.json's `data`, {"best", "max",
    "last", "config", "when"}, or None if there is none or it is not one
    (a hand-edited or older file): a bad entry counts as absent."""
    exercises = data.get("exercises")
    r = exercises.get(exercise_id) if isinstance(exercises, dict) else None
    if not isinstance(r, dict):
        return None
    if not all(_is_int(r.get(k)) and r[k] >= 0 for k in ("best", "max", "last")):
        return None
    if r["last"] > r["best"] or not all(isinstance(r.get(k), str)
                                        for k in ("config", "when")):
        return None
    return r


def lab_record(data, name):
    """A lab's entry in progress.json's `data`, {"passed", "ever_passed",
    "when"}, or None if there is none or it is not one."""
    labs = data.get("labs")
    r = labs.get(name) if isinstance(labs, dict) else None
    if not isinstance(r, dict):
        return None
    if not all(isinstance(r.get(k), bool) for k in ("passed", "ever_passed")) \
            or not isinstance(r.get("when"), str):
        return None
    return r


def _section(data, key):
    """progress.json's `key` object, made one (empty) if it is not."""
    if not isinstance(data.get(key), dict):
        data[key] = {}
    return data[key]


def record_grades(results, config):
    """Keeps each graded exercise's best score (results: grade.py's, of
    the student's code) and its last one, with the config it ran under.
    Raises OSError if the folder cannot be written (the grader warns and
    goes on)."""
    data = load("progress.json")
    exercises = _section(data, "exercises")
    for r in results:
        old = exercise_record(data, r["id"]) or {}
        exercises[r["id"]] = {
            "best": max(r["score"], old.get("best", 0)),
            "max": r["max"],
            "last": r["score"],
            "config": config or "plain",
            "when": _now(),
        }
    save("progress.json", data)


def record_lab(name, passed):
    """Keeps a lab's last result (`./course lab NAME`) and whether it ever
    passed. Raises OSError as record_grades does."""
    data = load("progress.json")
    labs = _section(data, "labs")
    old = lab_record(data, name) or {}
    labs[name] = {"passed": passed, "ever_passed": passed or old.get("ever_passed", False),
                  "when": _now()}
    save("progress.json", data)


def warn_unrecorded(what, error):
    """The one line saying that the record could not be written: the
    command itself went on."""
    print(f"course: warning: {what} not recorded in {DIR} ({error})",
          file=sys.stderr)
