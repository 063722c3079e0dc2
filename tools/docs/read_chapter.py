#!/usr/bin/env python3
"""Prints a course chapter for a terminal, with its code and tables in place.

Usage: read_chapter.py [CHAPTER]   (run from the repository's root)

CHAPTER is a page of docs/course/ by its anchor (stage3, glossary;
index or mainpage for the first page) or a Markdown file's path; without
one, the chapters are listed. The chapters are written for Doxygen
(`./course docs` builds them into the site); read raw, their commands
would show instead of what they pull in. Here:

- @snippet FILE NAME: the code between FILE's two `[NAME]` markers, the
  code the site shows, with its file name;
- @include FILE: the whole file;
- @htmlinclude X.html: the table the site would show, as text (the
  benchmark tables and exercise lists, generated from the checked-in
  results and statements as `./course docs` does);
- @dotfile / @image: the figure's caption, its file, and where the site
  draws it;
- @ref NAME ["text"]: the text (or the page's title) and where it leads,
  a chapter's file or a section's file and heading; {#anchor},
  @tableofcontents and the figures' source tags (<!-- fig ... -->) go.
"""

import atexit
import glob
import html
import html.parser
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

COURSE = "docs/course"


def pages():
    """{anchor: (title, path)} for every chapter of docs/course/."""
    out = {}
    for path in sorted(glob.glob(os.path.join(COURSE, "*.md"))):
        with open(path, encoding="utf-8") as f:
            first = f.readline()
        m = re.match(r"#\s+(.*?)\s*\{#(\w+)\}", first)
        if m:
            out[m.group(2)] = (m.group(1), path)
    return out


def sections():
    """{anchor: (heading, path)} for every heading with an anchor below a
    chapter's title ("## Note 000: ... {#notes_000}")."""
    out = {}
    for path in sorted(glob.glob(os.path.join(COURSE, "*.md"))):
        with open(path, encoding="utf-8") as f:
            for line in f.readlines()[1:]:
                m = re.match(r"#{2,}\s+(.*?)\s*\{#(\w+)\}", line)
                if m:
                    out[m.group(2)] = (m.group(1), path)
    return out


def snippet(path, name):
    """The lines of `path` between its two `[name]` marker lines."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    marks = [i for i, line in enumerate(lines) if f"[{name}]" in line]
    if len(marks) < 2:
        return f"(snippet [{name}] not found in {path})"
    return "\n".join(lines[marks[0] + 1:marks[1]])


class TableText(html.parser.HTMLParser):
    """An HTML table as text rows: cells joined by ' | '."""

    def __init__(self):
        super().__init__()
        self.rows, self.cell, self.row = [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append("".join(self.cell).strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.rows.append(self.row)
            self.row = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def table_text(fragment):
    """The rows of an HTML fragment's tables, aligned in columns."""
    parser = TableText()
    parser.feed(fragment)
    width = {}
    for row in parser.rows:
        if len(row) > 1:
            for i, cell in enumerate(row):
                width[i] = max(width.get(i, 0), len(cell))
    out = []
    for row in parser.rows:
        if len(row) == 1:
            out.append(f"\n  {row[0]}")
        else:
            out.append("  " + " | ".join(c.ljust(width[i])
                                         for i, c in enumerate(row)).rstrip())
    return "\n".join(out)


def generated_dir(cache={}):
    """A folder holding the fragments ./course docs generates (benchmark
    tables, exercise lists), made once per run and removed at exit."""
    if not cache:
        cache["dir"] = tempfile.mkdtemp(prefix="gmp-read.")
        atexit.register(shutil.rmtree, cache["dir"], True)
        here = os.path.dirname(os.path.abspath(__file__))
        for tool, source in (("bench_tables.py", "docs/benchmarks"),
                             ("exercise_lists.py", "exercises")):
            subprocess.run([sys.executable, os.path.join(here, tool), source,
                            cache["dir"]], check=True,
                           stdout=subprocess.DEVNULL)
    return cache["dir"]


def generated(name):
    """The fragment `name` that ./course docs generates, as text."""
    path = os.path.join(generated_dir(), name)
    if not os.path.exists(path):
        return f"(no generated table {name})"
    with open(path, encoding="utf-8") as f:
        return table_text(f.read())


def figure(kind, rest):
    """A figure's caption, its file, and where the site draws it."""
    m = re.match(r'(?:html\s+)?(\S+)\s*(?:"(.*)")?', rest)
    name, caption = m.group(1), m.group(2) or ""
    where = {"dotfile": "docs/figures/"}.get(kind, "docs/benchmarks/")
    if kind != "dotfile" and not os.path.exists(where + name):
        found = glob.glob(f"docs/**/{name}", recursive=True)
        where = os.path.dirname(found[0]) + "/" if found else ""
    return (f"[Figure: {caption}. Source: {where}{name}; the site draws it"
            f" (./course docs, then site/html/index.html).]")


def render(text, anchors):
    """The chapter's Markdown with its Doxygen commands resolved."""
    out = []
    for line in text.split("\n"):
        line = re.sub(r"\s*\{#\w+\}", "", line)
        line = re.sub(r"<!-- (fig|exercises:|stages:)[^>]*-->", "", line)
        m = re.match(r"\s*[@\\](\w+)\s*(.*)$", line)
        cmd, rest = (m.group(1), m.group(2)) if m else (None, "")
        if cmd == "tableofcontents":
            continue
        if cmd == "snippet":
            path, name = rest.split(None, 1)  # a name may hold spaces
            out += [f"```cpp  // {path}", snippet(path, name), "```"]
        elif cmd == "include":
            with open(rest.strip(), encoding="utf-8") as f:
                out += [f"```  // {rest.strip()}", f.read().rstrip(), "```"]
        elif cmd == "htmlinclude":
            out.append(generated(rest.strip()))
        elif cmd in ("dotfile", "image"):
            out.append(figure(cmd, rest))
        else:
            out.append(REF.sub(lambda r: ref(r, anchors), line))
    return "\n".join(out)


# @ref NAME, or @ref NAME "the text to show".
REF = re.compile(r'@ref (\w+)(?: "([^"]*)")?')


def ref(match, anchors):
    """@ref as its text and where it leads: a page's title and file, a
    section's heading and file, or a Markdown file's path."""
    name, text = match.group(1), match.group(2)
    if name in anchors:
        title, path = anchors[name]
        where = path if name in PAGES else f"{path}: {title}"
        return f"{text} ({where})" if text else f'"{title}" ({where})'
    if name.startswith("md_"):  # Doxygen's name of a Markdown file's page
        path = name[3:].replace("_", "/", name.count("_") - 1) + ".md"
        return f"{text} ({path})" if text else path
    return text or name


PAGES = pages()


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends us quietly
    anchors = {**sections(), **PAGES}
    if len(argv) < 2:
        print("Chapters (./course read NAME):")
        for name, (title, _) in PAGES.items():
            print(f"  {name:12} {title}")
        return 0
    want = {"index": "mainpage"}.get(argv[1], argv[1])
    path = PAGES[want][1] if want in PAGES else want
    if not path.endswith(".md") or not os.path.isfile(path):
        print(f"read: no chapter '{want}' (one of: {' '.join(PAGES)}; or "
              "a Markdown file's path)", file=sys.stderr)
        return 2
    with open(path, encoding="utf-8") as f:
        print(render(f.read(), anchors))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
