#!/usr/bin/env python3
"""Checks that every file the text and the comments name exists.

Usage: file_refs.py [ROOT]

A reader told to open "labs/runq/README.md" must find it there. In every
text file of the repository (git's files, tracked or not ignored, or every
file under ROOT when ROOT is not a git checkout), outside #include lines
(the compiler checks those), outside third_party/, results/ and testdata/
folders (captured logs name other machines' files) and outside the
tools' Python and shell tests (their fixtures name made-up files), three
kinds of name are checked, and each must exist on disk:

- a path whose first folder is one of the repository's top-level folders,
  or within two letters of one (stage3_gpm/ is a slip for stage3_gmp/):
  it must exist from the repository's root or from the naming file's
  folder;
- a path that starts with ../ (../../exercises/README.md from this
  folder) and stays inside the repository: it must exist from the naming
  file's folder;
- a bare Markdown file name (README.md): a file of that name must exist
  somewhere in the repository.

A name right after "'s " is another project's ("Go's HACKING.md"), and a
line that holds "file_refs: ignore" is passed over (a text that names a
file that must not exist).
Names of files outside the repository (proc.go, gtest/gtest.h) are neither
kind, so they pass. Prints each missing name as FILE:LINE: NAME and exits
with status 1 if there is one.
"""

import os
import re
import subprocess
import sys

# What a named file may end with: the repository's kinds of text.
EXTENSIONS = (r"(?:md|h|cc|S|s|py|sh|bzl|bazel|json|txt|css|dot|cfg|patch|"
              r"yml|svg|png)")
NAME = re.compile(r"(?<![\w./-])((?:\.\./|\./)*(?:[\w.-]+/)*[\w.-]+\." +
                  EXTENSIONS + r")(?![\w/-])")
SKIPPED_FOLDERS = ("third_party/", "results/", "site/", "bazel-")
# A line holding this names files that need not exist (on purpose).
IGNORE = "file_refs: ignore"


def repository_files(root):
    """Every file of the repository, as paths relative to root: git's
    tracked files and those it would track (not ignored), or every file."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "--cached",
                              "--others", "--exclude-standard"], check=True,
                             capture_output=True, text=True).stdout
        return sorted({f for f in out.split("\n") if f})
    except (OSError, subprocess.CalledProcessError):
        files = []
        for folder, _, names in os.walk(root):
            rel = os.path.relpath(folder, root)
            for n in names:
                files.append(os.path.normpath(os.path.join(rel, n)))
        return files


def folders_of(files):
    """Every folder that holds a file, at any depth."""
    out = set()
    for f in files:
        d = os.path.dirname(f)
        while d:
            out.add(d)
            d = os.path.dirname(d)
    return out


def near(a, b):
    """a and b differ by at most two letters (a typing slip)."""
    if abs(len(a) - len(b)) > 2:
        return False
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1,
                                       prev + (ca != cb))
    return row[-1] <= 2


def missing_names(root, files):
    """(file, line, name) for each named file that does not exist."""
    on_disk = [f for f in files if os.path.lexists(os.path.join(root, f))]
    exists = set(on_disk) | folders_of(on_disk)
    basenames = {os.path.basename(f) for f in on_disk}
    tops = {f.split("/")[0] for f in files if "/" in f}
    out = []
    for f in files:
        if (f.startswith(SKIPPED_FOLDERS) or "/testdata/" in f
                or re.search(r"_test\.(py|sh)$", f)):
            continue  # others' files, generated ones, logs, tests' fixtures
        try:
            with open(os.path.join(root, f), encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError):
            continue  # a binary file or a dangling link: not text
        for number, line in enumerate(text.split("\n"), 1):
            if line.lstrip().startswith("#include") or IGNORE in line:
                continue
            for m in NAME.finditer(line):
                name = m.group(1)
                if line[:m.start()].endswith("'s "):
                    continue  # "Go's HACKING.md": another project's file
                plain = name.lstrip("./") if name.startswith("./") else name
                here = os.path.normpath(os.path.join(os.path.dirname(f), plain))
                if plain.startswith("../"):
                    if here.startswith("..") or here in exists:
                        continue  # outside the repository, or there
                elif "/" in plain:
                    first = plain.split("/")[0]
                    if first not in tops and not any(near(first, t)
                                                     for t in tops):
                        continue  # not one of ours, nor a slip for one
                    if plain in exists or here in exists:
                        continue
                elif not plain.endswith(".md") or plain in basenames:
                    continue
                out.append((f, number, name))
    return out


def main(argv):
    root = argv[1] if len(argv) > 1 else "."
    files = repository_files(root)
    bad = missing_names(root, files)
    if not bad:
        print(f"file_refs: every file named in {len(files)} files exists")
        return 0
    report = [f"{f}:{n}: {name}: no such file in the repository"
              for f, n, name in bad]
    report.append(f"file_refs: {len(bad)} named files do not exist (above)")
    print("\n".join(report), file=sys.stderr)
    return 1

if __name__ == "__main__":
    sys.exit(main(sys.argv))
