#!/usr/bin/env python3
"""Writes, and checks, the demo output that a stage's README shows.

Usage: demo_blocks.py write README OUTPUT [MACHINE]
       demo_blocks.py check README OUTPUT

A README shows one run of its stage's demo between two markers:

    <!-- demo:begin (written by ./course demo STAGE --publish) -->
    ...
    <!-- demo:end -->

`write` (run by `./course demo STAGE --publish`) replaces what is between
them with the demo's output OUTPUT, fenced, after a line naming the
machine it ran on, so the figures in it come from a real run, never from
a hand. `check` (run by each stage's demo_test, on a quick run) fails
unless the block's lines are the demo's lines, all of them and in the
same order (blank lines aside), where numbers stand for any number and
runs of spaces for any spacing: so the check sees a line that the demo's
code dropped, added, reworded or moved, not a machine's speed nor the
quick run's smaller sizes. (Two lines that differ only in a number, such
as "with 2 workers" and "with 3 workers", look alike to it.)
"""

import re
import sys

BEGIN = re.compile(r"<!-- demo:begin[^>]*-->\n")
END = "<!-- demo:end -->"


def shape(line):
    """A line with its numbers as '#' and its spacing as one space."""
    line = re.sub(r"[0-9]+(\.[0-9]+)?", "#", line)
    return re.sub(r"\s+", " ", line).strip()


def block(text, readme):
    """(start, end) of the text between the README's markers."""
    m = BEGIN.search(text)
    end = text.find(END, m.end()) if m else -1
    if not m or end < 0:
        raise SystemExit(f"demo_blocks: {readme} has no <!-- demo:begin ... "
                         f"--> ... {END} block")
    return m.end(), end


def output_lines(text):
    """The lines inside the block's code fence."""
    m = re.search(r"```\n(.*?)```", text, re.S)
    return m.group(1).split("\n") if m else []


def write(readme, output, machine):
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    with open(output, encoding="utf-8") as f:
        run = f.read().rstrip("\n")
    start, end = block(text, readme)
    body = f"One run, on {machine}:\n\n```\n{run}\n```\n"
    with open(readme, "w", encoding="utf-8") as f:
        f.write(text[:start] + body + text[end:])
    print(f"demo_blocks: {readme}: the demo's output written")
    return 0


def check(readme, output):
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    with open(output, encoding="utf-8") as f:
        printed = [shape(line) for line in f.read().split("\n") if line.strip()]
    start, end = block(text, readme)
    shown = [line for line in output_lines(text[start:end]) if line.strip()]
    if not shown:
        print(f"demo_blocks: {readme}'s demo block shows no output",
              file=sys.stderr)
        return 1
    # The same lines in the same order, numbers and spacing aside: a line
    # dropped, added, reworded or moved is a difference.
    for i, (a, b) in enumerate(zip(shown, printed)):
        if shape(a) != b:
            print(f"demo_blocks: {readme}'s demo block, line {i + 1} of the "
                  f"run shown: {a.strip()!r}; the demo now prints a line of "
                  f"another shape there: {b!r}", file=sys.stderr)
            break
    else:
        if len(shown) == len(printed):
            print(f"demo_blocks: all {len(shown)} lines of {readme}'s demo "
                  "block are the demo's lines, in its order")
            return 0
        print(f"demo_blocks: {readme}'s demo block shows {len(shown)} lines; "
              f"the demo prints {len(printed)}", file=sys.stderr)
    print("demo_blocks: rewrite the block with ./course demo STAGE --publish",
          file=sys.stderr)
    return 1


def main(argv):
    if len(argv) >= 4 and argv[1] == "write":
        return write(argv[2], argv[3], argv[4] if len(argv) > 4 else
                     "this machine")
    if len(argv) == 4 and argv[1] == "check":
        return check(argv[2], argv[3])
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
