"""The student's own record, kept in the git-ignored folder .course/ at the
course's root: which hint tiers of each exercise were shown (hints.json),
and the best score of each exercise and the last result of each lab
(progress.json). Written by `./course grade`, `./course lab NAME` and
`./course hint`; read by `./course progress` (tools/grade/loop.py).

Losing the folder loses nothing but this record.
"""

import datetime
import json
import os
import pathlib
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


def record_grades(results, config):
    """Keeps each graded exercise's best score (results: grade.py's, of
    the student's code) and its last one, with the config it ran under."""
    data = load("progress.json")
    exercises = data.setdefault("exercises", {})
    for r in results:
        old = exercises.get(r["id"], {})
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
    passed."""
    data = load("progress.json")
    labs = data.setdefault("labs", {})
    old = labs.get(name, {})
    labs[name] = {"passed": passed, "ever_passed": passed or old.get("ever_passed", False),
                  "when": _now()}
    save("progress.json", data)
