#!/usr/bin/env python3
"""Writes each course chapter's list of graded exercises.

Usage: exercise_lists.py EXERCISES_DIR OUT_DIR

Reads every EXERCISES_DIR/NN_name/points.json (its title, its stage and the
points of its tests) and writes OUT_DIR/<stage>_exercises.html, an HTML
fragment the chapter pulls in with \\htmlinclude: number, title, points,
a link to the statement's page (md_exercises_NN_name_README.html: the
name Doxygen gives that README's page, in the site since the Doxyfile lists
it) and the command that grades it. The same source as
`./course grade --write-index`, so the site and the READMEs agree.
"""
import html
import json
import os
import sys

STAGES = ["stage1_threadpool", "stage2_global_queue", "stage3_gmp",
          "stage4_syscalls", "stage5_preemption"]


def exercises(root):
    out = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name, "points.json")
        if not (name[:2].isdigit() and os.path.isfile(path)):
            continue
        with open(path) as f:
            doc = json.load(f)
        out.append((name, doc["title"], doc["stage"],
                    sum(doc["points"].values())))
    return out


def fragment(items):
    if not items:
        return "<p>No graded exercise belongs to this stage yet.</p>\n"
    rows = [f"<tr><td>{html.escape(n[:2])}</td><td>{html.escape(t)}</td>"
            f"<td>{p}</td><td><a href='md_exercises_{html.escape(n)}_README"
            f".html'>exercises/{html.escape(n)}/README.md</a>"
            f"</td><td><code>./course grade {html.escape(n[:2])}"
            "</code></td></tr>" for n, t, _, p in items]
    return ("<table class='markdownTable'>\n<tr><th>#</th><th>exercise</th>"
            "<th>points</th><th>statement</th><th>grade it</th></tr>\n"
            + "\n".join(rows) + "\n</table>\n")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: exercise_lists.py EXERCISES_DIR OUT_DIR")
    root, out_dir = sys.argv[1:]
    items = exercises(root)
    if not items:
        sys.exit(f"exercise_lists: no exercises in {root}")
    unknown = sorted({s for _, _, s, _ in items} - set(STAGES))
    if unknown:
        sys.exit(f"exercise_lists: unknown stage(s) {unknown} in points.json")
    os.makedirs(out_dir, exist_ok=True)
    for stage in STAGES:
        with open(os.path.join(out_dir, f"{stage}_exercises.html"), "w") as f:
            f.write(fragment([e for e in items if e[2] == stage]))


if __name__ == "__main__":
    main()
