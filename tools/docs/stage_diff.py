#!/usr/bin/env python3
"""What changed in Go's functions from one stage of the course to another.

Usage: stage_diff.py STAGE_A STAGE_B [FUNCTION] [--side-by-side]
       (run from the repository's root; `./course diff` runs it)

A stage is `stage3`, `3` or `stage3_gmp`. Without FUNCTION: the functions
of docs/course/go_map.md that either stage defines, in lists: new in
STAGE_B, changed, the same, and gone (defined in STAGE_A only), each by
Go's name and the course's, with where each stage defines it. With
FUNCTION (the course's name, `find_runnable`, or Go's, `findRunnable`):
why it changed, in the words of STAGE_B's chapter, then a unified diff of
its two bodies (--side-by-side: two columns), coloured when stdout is a
terminal.

Where the names come from: go_map.md's tables (the Go column and the
Course column; see parse_row for how a row pairs them). Where the bodies
come from: the stage's folder, searched each time (nothing here names a
file of a stage): `Runtime::NAME(...) {` in any source, an inline body in
the header's `class Runtime`, or a free function `NAME(...) {` at the
start of a line; test and demo sources are left out. A stage that does
not define NAME has an earlier stage's: the one whose NAME it calls by
name (stage 3 calls stage2::mcall), or else its Runtime's base stage's
(`class Runtime : public stage3::Runtime`: inherited). Such a function is
"the same" in both stages, and the functions its body calls that the two
stages do not share (the hooks a later stage overrides) are named.

Errors (an unknown stage or function, a function neither stage defines):
one line on stderr, exit status 2.
"""

import argparse
import difflib
import functools
import glob
import os
import re
import shutil
import sys
import textwrap

GO_MAP = "docs/course/go_map.md"
COURSE = "docs/course"


class UsageError(Exception):
    """A bad argument: main prints it on one line and exits with 2."""


# ---------------------------------------------------------------------------
# Stages


def stages():
    """{number: folder} for every stageN_* folder with sources in it."""
    out = {}
    for path in sorted(glob.glob("stage[0-9]*_*")):
        m = re.fullmatch(r"stage(\d+)_\w+", path)
        if m and glob.glob(os.path.join(path, "*.h")):
            out[int(m.group(1))] = path
    return out


def parse_stage(arg, known):
    """The stage number `arg` names: `3`, `stage3` or `stage3_gmp`."""
    m = re.fullmatch(r"(?:stage)?(\d+)", arg)
    if m and int(m.group(1)) in known:
        return int(m.group(1))
    for n, folder in known.items():
        if arg.rstrip("/") == folder:
            return n
    accepted = ", ".join(f"stage{n}" for n in known)
    raise UsageError(f"unknown stage '{arg}' (one of {accepted}; also "
                     f"written as 3 or {known.get(3, 'stage3_gmp')})")


# ---------------------------------------------------------------------------
# C++ text: comments and literals masked, braces matched


def mask(text):
    """`text` with every comment, string and char literal (and every
    preprocessor line) turned into spaces, newlines kept: the same length
    and line numbers, so a position found in the mask is one in `text`."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c == "#" and text[text.rfind("\n", 0, i) + 1:i].strip() == "":
            j = i  # a preprocessor line, with its continuations
            while True:
                j = text.find("\n", j)
                if j < 0 or text[j - 1] != "\\":
                    break
                j += 1
            j = n if j < 0 else j
        elif c == '"' and re.search(r"(?<!\w)(?:u8|[uUL])?R$", text[:i]):
            close = ")" + text[i + 1:text.find("(", i)] + '"'
            j = text.find(close, i)
            j = n if j < 0 else j + len(close)
        elif c in "\"'" and not (c == "'" and _digit_separator(text, i)):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            i += 1
            continue
        blank(i, j)
        i = j
    return "".join(out)


def _digit_separator(text, i):
    """Whether the quote at `i` is C++14's digit separator (1'000'000)."""
    m = re.search(r"[\w.']+$", text[:i])
    return bool(m) and m.group(0)[0].isdigit()


def match_close(masked, i):
    """The index of the bracket that closes the one at masked[i]."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    opening, closing = masked[i], pairs[masked[i]]
    depth = 0
    for j in range(i, len(masked)):
        if masked[j] == opening:
            depth += 1
        elif masked[j] == closing:
            depth -= 1
            if depth == 0:
                return j
    return None


# After a definition's parameter list: qualifiers, a trailing return type,
# then its body's brace. A declaration or a call ends otherwise.
TAIL = re.compile(r"(?:\s*(?:const|noexcept(?:\s*\([^()]*\))?|override|final"
                  r"|volatile|&&|&|->[^{;=]+))*\s*\{")


def body_end(masked, paren):
    """For a name followed by the "(" at `paren`: the index just past the
    closing brace of its body, or None if it is no definition."""
    close = match_close(masked, paren)
    if close is None:
        return None
    tail = TAIL.match(masked, close + 1)
    if not tail:
        return None
    brace = match_close(masked, tail.end() - 1)
    return None if brace is None else brace + 1


def definition_start(masked, pos):
    """Where the definition whose name is at `pos` begins: its return type,
    template line or attribute, after the statement or label before it."""
    k = max(masked.rfind(ch, 0, pos) for ch in ";{}")
    k += 1
    label = re.compile(r"\s*(?:public|protected|private)\s*:(?!:)")
    m = label.match(masked, k)
    if m:
        k = m.end()
    while k < pos and masked[k].isspace():
        k += 1
    return k


# ---------------------------------------------------------------------------
# Definitions in a stage's folder


class Definition:
    """One definition of a function: where it is and its text."""

    def __init__(self, name, path, line, text):
        self.name, self.path, self.line = name, path, line
        self.text = text

    def where(self):
        """path:line, the line where the definition begins."""
        return f"{self.path}:{self.line}"


@functools.lru_cache(maxsize=None)
def sources(folder):
    """The stage's sources, tests and demos left out, as (path, text,
    masked) tuples; read once."""
    out = []
    for path in sorted(glob.glob(os.path.join(folder, "*.h")) +
                       glob.glob(os.path.join(folder, "*.cc"))):
        base = os.path.basename(path)
        if re.search(r"_test\.|_suite\.h$|^demo", base):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        out.append((path, text, mask(text)))
    return tuple(out)


def class_runtime_bodies(masked):
    """(start, end) of the body of each `class Runtime {...}` in a file."""
    out = []
    for m in re.finditer(r"\bclass\s+Runtime\b(?:\s+final)?\s*(?::[^;{]*)?\{",
                         masked):
        end = match_close(masked, m.end() - 1)
        if end is not None:
            out.append((m.end(), end))
    return out


# A name followed by "(", not a member named through an object or a scope.
NAME_PAREN = re.compile(r"(?<![\w:.>~])([A-Za-z_]\w*)\s*\(")


def candidates(masked):
    """(where it begins, its "(", the name) of every place in one file
    where a function may be defined: `Runtime::name(`; `name(` directly in
    the body of `class Runtime` (not in a nested class or a body); `name(`
    on a line that starts at column 0 (a free function)."""
    out = set()
    for m in re.finditer(r"(?<![\w:])Runtime\s*::\s*(\w+)\s*\(", masked):
        out.add((m.start(), m.end() - 1, m.group(1)))
    for start, end in class_runtime_bodies(masked):
        depth, at = 0, start
        for m in NAME_PAREN.finditer(masked, start, end):
            seg = masked[at:m.start()]
            depth, at = depth + seg.count("{") - seg.count("}"), m.start()
            if depth == 0:
                out.add((m.start(), m.end() - 1, m.group(1)))
    for line in re.finditer(r"^\S.*$", masked, re.M):
        for m in NAME_PAREN.finditer(masked, line.start(), line.end()):
            out.add((m.start(), m.end() - 1, m.group(1)))
    return sorted(out)


@functools.lru_cache(maxsize=None)
def definitions(folder):
    """{name: its definitions in the stage's own folder, in file order
    (several for overloads)}; found once per folder."""
    out = {}
    for path, text, masked in sources(folder):
        for pos, paren, name in candidates(masked):
            end = body_end(masked, paren)
            if end is None:
                continue
            start = definition_start(masked, pos)
            line = text.count("\n", 0, start) + 1
            out.setdefault(name, []).append(
                Definition(name, path, line, text[start:end]))
    return out


def find_definitions(folder, name):
    """Every definition of `name` in the stage's own folder."""
    return definitions(folder).get(name, [])


@functools.lru_cache(maxsize=None)
def base_stage(folder):
    """The stage whose Runtime this stage's Runtime derives from, or None."""
    for _path, _text, masked in sources(folder):
        m = re.search(r"\bclass\s+Runtime\b(?:\s+final)?\s*:[^{;]*?"
                      r"\bpublic\s+(?:gmp::)?stage(\d+)::Runtime\b", masked)
        if m:
            return int(m.group(1))
    return None


@functools.lru_cache(maxsize=None)
def qualified_calls(folder):
    """{name: stage} for every earlier stage's function this stage's
    sources call by its qualified name (stage 3 calls stage2::mcall)."""
    out = {}
    for _path, _text, masked in sources(folder):
        for m in re.finditer(r"(?<![\w:])stage(\d+)::(\w+)\s*\(", masked):
            out.setdefault(m.group(2), int(m.group(1)))
    return out


def stage_used(folder, names):
    """The earlier stage whose function of one of `names` this stage
    calls by its qualified name, or None."""
    calls = qualified_calls(folder)
    return next((calls[n] for n in names if n in calls), None)


def resolve(known, n, names):
    """(the stage that defines it, its definitions, how stage n has it:
    "own", "uses", "uses K" (stage K's inherited code calls it) or
    "inherited") for the function that stage `n` has by one of
    `names(n)`: its own definition; else the earlier stage's whose
    function it calls by name (stage 3 calls stage2::mcall); else its
    Runtime's base stage's (stage 4's Runtime derives from stage 3's).
    (None, [], "") if no stage has it."""
    seen, how = set(), "own"
    while n is not None and n in known and n not in seen:
        seen.add(n)
        for name in names(n):
            defs = find_definitions(known[n], name)
            if defs:
                return n, defs, how
        used = stage_used(known[n], names(n))
        nxt = used if used is not None else base_stage(known[n])
        if used is not None:
            # A call wins over inheritance: stage 5 inherits stage 4's
            # code, which calls stage 2's mcall ("uses 4").
            how = "uses" if how == "own" else f"uses {n}"
        elif how == "own":
            how = "inherited"
        n = nxt
    return None, [], ""


# ---------------------------------------------------------------------------
# docs/course/go_map.md: Go's names and the course's


class Entry:
    """A function of the course, by its name, with Go's names for it, the
    names it has in particular stages, and the map's row it came from."""

    def __init__(self, course, row):
        self.course, self.go, self.aliases, self.row = course, [], {}, row
        self.row_go = []  # Go's names of its row that pair with no name

    def names(self, n):
        """Its names in stage n, the stage's own spelling first."""
        own = self.aliases.get(n)
        return [own, self.course] if own else [self.course]

    def go_label(self):
        """Go's names for it, or "-" when none pairs with it (its row's Go
        cell describes a part of a Go function: go_cell)."""
        return ", ".join(self.go) if self.go else "-"

    def go_cell(self, width=60):
        """Its row's Go cell, cut to `width` characters."""
        return self.row if len(self.row) <= width else \
            self.row[:width - 3] + "..."


def snake(go):
    """Go's camelCase name in the course's snake_case: findRunnable,
    find_runnable; LockOSThread, lock_os_thread."""
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", go)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


def same_name(go, course):
    """Whether the course's name spells Go's: in snake_case, or with the
    same letters (addtimer, add_timer)."""
    return snake(go) == course or go.lower() == course.replace("_", "")


def plain(cell):
    """A table cell as text: no backticks, spaces squeezed."""
    return re.sub(r"\s+", " ", cell.replace("`", "")).strip()


def parenthesis_after(cell, i):
    """The text of the parenthesis that opens right after cell[i:] (spaces
    aside), or ''."""
    m = re.match(r"\s*\(", cell[i:])
    if not m:
        return ""
    depth, start = 0, i + m.end() - 1
    for j in range(start, len(cell)):
        depth += {"(": 1, ")": -1}.get(cell[j], 0)
        if depth == 0:
            return cell[start + 1:j]
    return cell[start + 1:]


# A name of the Course column: `Runtime::name`, `name` or `name()` in
# backticks, or gmp::name / gmp::stageN::name (a free function, as Doxygen
# links it). Class members (`P::schedtick`), types and fields (`midle_`)
# are not functions a stage's Runtime defines, and are passed over.
COURSE_NAME = re.compile(r"`(?:Runtime::)?([a-z_][a-z0-9_]*?)(?:\(\))?`"
                         r"|\bgmp::(?:stage\d+::)?([a-z_][a-z0-9_]*)\b(?!::)")


def course_names(cell):
    """[(name, the parenthesis right after it)] of a Course cell: the names
    at the top level, before a colon that starts prose (`gostartcallfn`: at
    the goroutine's first run...); a parenthesis is read for what it says of
    the name before it."""
    out, depth, i = [], 0, 0
    while i < len(cell):
        c = cell[i]
        if c in "()":
            depth += 1 if c == "(" else -1
        elif c == ":" and depth == 0 and cell[i:i + 2] != "::" and \
                cell[i - 1] != ":" and cell[i + 1:i + 2] in (" ", ""):
            break  # prose follows
        elif depth == 0:
            m = COURSE_NAME.match(cell, i)
            if m:
                name = m.group(1) or m.group(2)
                if not name.endswith("_"):  # a field, such as midle_
                    out.append((name, parenthesis_after(cell, m.end())))
                i = m.end()
                continue
            if c == "`":  # some other code span: skip it whole
                i = cell.find("`", i + 1) + 1 or len(cell)
                continue
        i += 1
    return out


def parse_row(go_cell, course_cell):
    """The Entries of one row of go_map.md. How a row pairs Go's names with
    the course's:
    - by spelling: a course name that is Go's in snake_case, or Go's with
      underscores (findRunnable, find_runnable; addtimer, add_timer);
    - by saying so, in the parenthesis after the course's name:
      `Runtime::mstart` (the loop, Go's `schedule`);
    - "the same names on `Runtime`": Go's names, in snake_case.
    A parenthesis that says "`other_name` in stage N" gives the name the
    function has in stage N: `Runtime::ready` (`ready_locked` in stage 2)."""
    go_names = re.findall(r"`(\w+)`", go_cell)
    if re.search(r"\bthe same names? on `Runtime`", course_cell):
        named = [(snake(g), "") for g in go_names]
    else:
        named = course_names(course_cell)
    row = plain(go_cell)
    out = []
    for name, paren in named:
        e = Entry(name, row)
        e.go = [g for g in go_names if same_name(g, name)]
        said = re.findall(r"\bGo's `(\w+)`", paren)
        e.go += [g for g in said if g not in e.go]
        for alias, n in re.findall(r"`(\w+)` in stage (\d+)", paren):
            e.aliases[int(n)] = alias
        out.append(e)
    return out, go_names


def table_rows(path):
    """(Go cell, Course cell) of every row of every table with a Go and a
    Course column."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, cols = [], None
    for line in lines:
        if not line.startswith("|"):
            cols = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cols is None:
            cols = (cells.index("Go"), cells.index("Course")) \
                if "Go" in cells and "Course" in cells else ()
        elif cols and not re.fullmatch(r"[-: |]+", line):
            out.append((cells[cols[0]], cells[cols[1]]))
    return out


class GoMap:
    """go_map.md's functions: by the course's name, and Go's names with
    the course's functions each stands for."""

    def __init__(self, path=GO_MAP):
        self.entries, self.by_go = {}, {}
        unpaired = []  # (Go's name, the course's names of its row)
        for go_cell, course_cell in table_rows(path):
            entries, go_names = parse_row(go_cell, course_cell)
            paired = {g for e in entries for g in e.go}
            left = [g for g in go_names if g not in paired]
            for e in entries:
                e.row_go = list(left)
                self._add(e)
            unpaired += [(g, [e.course for e in entries]) for g in left]
        for e in self.entries.values():
            for g in e.go:
                self.by_go.setdefault(g, []).append(e.course)
        # A row's other Go names speak for its functions only where they
        # pair with nothing in the whole map (entersyscallblock does;
        # findRunnable, in the rows of its steps, does not).
        for e in self.entries.values():
            e.row_go = [g for g in e.row_go if g not in self.by_go]
        # A Go name that pairs with nothing by name stands for its row's.
        for g, names in unpaired:
            if g not in self.by_go and names:
                self.by_go[g] = names

    def _add(self, e):
        """Merges an Entry into one of the same course name."""
        have = self.entries.setdefault(e.course, e)
        if have is not e:
            have.go += [g for g in e.go if g not in have.go]
            have.row_go += [g for g in e.row_go if g not in have.row_go]
            have.aliases.update(e.aliases)
            if not have.go:
                have.row = e.row


# ---------------------------------------------------------------------------
# Why: the chapter's sentence that names the function


def chapter_files(n, known):
    """Stage n's chapter (the page of docs/course/ whose anchor is stageN)
    and its README, those that exist."""
    out = []
    for path in sorted(glob.glob(os.path.join(COURSE, "*.md"))):
        with open(path, encoding="utf-8") as f:
            if re.search(rf"\{{#stage{n}\}}", f.readline()):
                out.append(path)
    readme = os.path.join(known[n], "README.md")
    return out + ([readme] if os.path.exists(readme) else [])


def what_changed(path):
    """The paragraphs and list items of a file's "What changed since ..."
    section, each as (its first line number, its text on one line)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, inside, fenced, start, buf = [], False, False, 0, []
    for i, line in enumerate(lines + [""], 1):
        new_item = re.match(r"\s*(?:[-*]|\d+\.)\s", line)
        if buf and (not line.strip() or new_item or
                    line.startswith(("#", "|", "@", "```"))):
            out.append((start, " ".join(buf)))
            buf = []
        if re.match(r"##\s", line):
            inside = re.match(r"##\s+What changed since", line) is not None
        elif line.startswith("```"):
            fenced = not fenced  # a code block: not prose
        elif inside and not fenced and line.strip() and \
                not line.startswith(("#", "|", "@")):
            start = start if buf else i
            buf.append(line.strip())
    return out


def unmark(text):
    """Markdown and Doxygen marks out of a paragraph: @ref's text, links'
    text, no HTML comments, no list bullet (bold stays: names_it reads
    it)."""
    text = re.sub(r"<!--.*?-->", "", text)
    text = re.sub(r'@ref\s+\w+\s+"([^"]*)"', r"\1", text)
    text = re.sub(r"@ref\s+(\w+)", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"^\s*(?:[-*]|\d+\.)\s+", "", text)


def sentences(paragraph):
    """A paragraph cut into sentences: at a full stop, question or
    exclamation mark before a capital letter, a backtick or a bracket."""
    return re.split(r"(?<=[.!?])\s+(?=[A-Z`(*])", paragraph)


def names_it(sentence, names):
    """Whether the sentence names one of `names`: in backticks (as code,
    maybe with a call's parentheses) or in bold (**sysmon**), or bare when
    the name cannot be an English word (it has an underscore or a capital
    inside)."""
    for name in names:
        if re.search(rf"`(?:gmp::)?(?:stage\d+::)?(?:Runtime::)?"
                     rf"{re.escape(name)}(?:\(\))?`|"
                     rf"\*\*{re.escape(name)}\*\*", sentence):
            return True
        if re.search(r"_|[a-z][A-Z]", name) and \
                re.search(rf"(?<![\w`]){re.escape(name)}(?![\w`])", sentence):
            return True
    return False


def reasons(n, names, known):
    """[(path:line, sentence)]: the first sentence of stage n's chapter,
    then of its README, that names the function in "What changed"."""
    out = []
    for path in chapter_files(n, known):
        for line, paragraph in what_changed(path):
            said = sentences(unmark(paragraph))
            hit = [i for i, s in enumerate(said) if names_it(s, names)]
            if hit:
                out.append((f"{path}:{line}", one_reason(said, hit[0])))
                break
    return out


def one_reason(said, i):
    """Sentence i, with the ones after it while it is too short to say
    why ("The lazy syscall hand-off (Go's `entersyscall`).")."""
    text = said[i].strip()
    while len(text.split()) < 12 and i + 1 < len(said):
        i += 1
        text += " " + said[i].strip()
    return text.replace("**", "")


# ---------------------------------------------------------------------------
# Comparing one function across two stages


class Side:
    """One stage's version of a function: the stage, the stage whose
    definition it is (itself, or a base it inherits from), and the
    definitions (none if the stage has no such function)."""

    def __init__(self, known, n, entry):
        self.n, self.entry = n, entry
        self.owner, self.defs, self.how = resolve(known, n, entry.names)

    def name(self):
        """The function's name where it is defined (stage 2's ready_locked)."""
        return self.defs[0].name if self.defs else self.entry.course

    def shared(self):
        """How it has another stage's definition: "inherited from stage 3"
        (the Runtime's base), "stage 2's, which it calls"."""
        if self.how == "inherited":
            return f"inherited from stage {self.owner}"
        if self.how.startswith("uses "):  # called by code it inherits
            caller = self.how.split()[1]
            return (f"stage {self.owner}'s, which stage {caller} calls "
                    f"(inherited by stage {self.n})")
        return f"stage {self.owner}'s, which stage {self.n} calls"

    def text(self):
        """Its definitions' text (overloads one after the other)."""
        return "\n\n".join(d.text for d in self.defs)

    def where(self):
        """file:line of its definition, with +N for overloads."""
        if not self.defs:
            return "-"
        more = f" (+{len(self.defs) - 1})" if len(self.defs) > 1 else ""
        return self.defs[0].where() + more


def verdict(a, b):
    """How b's version stands to a's: "new", "gone", "changed", "same"
    (one text, two copies) or "shared" (one definition both have)."""
    if not a.defs:
        return "new"
    if not b.defs:
        return "gone"
    if a.owner == b.owner:
        return "shared"
    same = [line.rstrip() for line in a.text().split("\n")] == \
        [line.rstrip() for line in b.text().split("\n")]
    return "same" if same else "changed"


NOT_CALLS = ("if", "for", "while", "switch", "return", "sizeof")


def called(text):
    """The names a body calls (NAME_PAREN), each once, in order."""
    out = []
    for name in NAME_PAREN.findall(mask(text)):
        if name not in out and name not in NOT_CALLS:
            out.append(name)
    return out


def differing_callees(known, sa, sb, depth=2):
    """Of the functions a shared body calls, directly or through functions
    both stages share (up to `depth` calls down), those both stages have
    from different definitions: the hooks one stage overrides. Stage 3's
    find_runnable calls poll_network, which stage 4 overrides; its handoffp
    calls duty_unwatched, which calls idle_duty_wanted
    ("duty_unwatched > idle_duty_wanted"). Breadth first: a function the
    body calls itself is walked from there, even if a callee calls it too
    (find_runnable calls gcstopm, which calls stopm; find_runnable calls
    stopm too, which calls idle_wait: "stopm > idle_wait")."""
    out, seen = [], set()
    level = [(sb.text(), [])]
    for left in range(depth, 0, -1):
        below = []
        for text, path in level:
            for c in called(text):
                if c in seen:
                    continue
                seen.add(c)
                owner_a, _, _ = resolve(known, sa.n, lambda n, c=c: [c])
                owner_b, defs_b, _ = resolve(known, sb.n, lambda n, c=c: [c])
                if None in (owner_a, owner_b):
                    continue
                if owner_a != owner_b:  # (one stage's helper of that name is no hook)
                    out.append(" > ".join(path + [c]))
                elif left > 1:
                    below += [(d.text, path + [c]) for d in defs_b]
        level = below
    return out


def compare_all(gomap, known, a, b):
    """{verdict: [(entry, side a, side b)]} for every go_map function that
    stage a or stage b has."""
    out = {}
    for entry in gomap.entries.values():
        sa, sb = Side(known, a, entry), Side(known, b, entry)
        if sa.defs or sb.defs:
            out.setdefault(verdict(sa, sb), []).append((entry, sa, sb))
    return out


# ---------------------------------------------------------------------------
# Output


class Paint:
    """ANSI colours when stdout is a terminal (and NO_COLOR is unset)."""

    CODES = {"bold": "1", "red": "31", "green": "32", "cyan": "36",
             "dim": "2"}

    def __init__(self, on):
        self.on = on

    def __call__(self, style, text):
        if not self.on or not text:
            return text
        return f"\033[{self.CODES[style]}m{text}\033[0m"


def stage_label(n, known):
    """"stage 3 (stage3_gmp)"."""
    return f"stage {n} ({known[n]})"


def print_lists(gomap, known, a, b, paint):
    """The functions of go_map.md either stage has, in lists: new in b,
    changed, the same, and (if any) gone."""
    groups = compare_all(gomap, known, a, b)
    groups.setdefault("same", []).extend(groups.pop("shared", []))
    total = sum(len(v) for v in groups.values())
    print(paint("bold", f"{stage_label(a, known)} -> {stage_label(b, known)}:"
                f" {total} functions of {GO_MAP}"))
    headings = [("new", f"New in stage {b}"), ("changed", "Changed"),
                ("same", "The same"), ("gone", f"Only in stage {a}")]
    for key, heading in headings:
        rows = sorted(groups.get(key, []), key=lambda r: r[0].course)
        if not rows and key == "gone":
            continue
        print()
        print(paint("bold", f"{heading} ({len(rows)}):"))
        for entry, sa, sb in rows:
            print(list_row(known, entry, sa, sb))
    print()
    print(f"One of them: ./course diff stage{a} stage{b} FUNCTION "
          "(Go's name or the course's)")


def list_row(known, entry, sa, sb):
    """One function of a list: Go's name, the course's (and a stage's own
    name for it), and where each stage has it."""
    go = entry.go_label()
    go = go if len(go) <= 28 else go[:25] + "..."
    course = course_label(entry, sa, sb)
    if sa.defs and sb.defs and sa.owner == sb.owner:
        side = sb if sb.how != "own" else sa
        where = f"{sb.where()} ({side.shared()})"
        hooks = [] if any(x.how.startswith("uses") for x in (sa, sb)) else \
            differing_callees(known, sa, sb)
        if hooks:
            where += f"; of what it calls, these differ: {', '.join(hooks)}"
    else:
        where = "  ".join(s.where() for s in (sa, sb) if s.defs)
    return f"  {go:28} {course:24} {where}"


def course_label(entry, *sides):
    """The course's name, and the name a stage has for it where that
    differs: "ready (ready_locked in stage 2)"."""
    label = entry.course
    for side in sides:
        other = f" ({side.name()} in stage {side.owner})"
        if side.defs and side.name() != entry.course and other not in label:
            label += other
    return label


VERDICTS = {
    "new": "new in stage {b} (stage {a} has none)",
    "gone": "only in stage {a} (stage {b} has none)",
    "changed": "changed from stage {a} to stage {b}",
    "same": "the same text in both stages' folders",
}


def print_function(known, a, b, entry, opts, paint):
    """One function: its verdict, the chapters' reason, then its diff."""
    sa, sb = Side(known, a, entry), Side(known, b, entry)
    v = verdict(sa, sb)
    heir = sb if sb.how != "own" else sa
    said = f"the same ({heir.shared()})" if v == "shared" else \
        VERDICTS[v].format(a=a, b=b)
    title = f"{entry.go_label()} / " if entry.go else ""
    print(paint("bold", f"{title}{course_label(entry, sa, sb)}: {said}"))
    if not entry.go:
        print(f"Go: {entry.go_cell()}")
    print_reasons(known, a, b, entry, paint)
    if v == "shared":
        print(f"Both run {sb.where()}.")
        print_hooks(known, sa, sb, paint)
    elif v == "same":
        print(f"{sa.where()} and {sb.where()} read the same.")
    elif opts.side_by_side:
        print_side_by_side(sa, sb, paint)
    else:
        print_unified(sa, sb, opts.context, paint)


def print_hooks(known, sa, sb, paint):
    """For a body both stages inherit: the functions it calls that they
    do not share (not for a body a stage calls by name: that body calls
    its own stage's functions)."""
    if any(x.how.startswith("uses") for x in (sa, sb)):
        return
    hooks = differing_callees(known, sa, sb)
    if hooks:
        print(f"Of what it calls (a > b: it calls a, which calls b), stage "
              f"{sa.n} and stage {sb.n} differ in: {', '.join(hooks)}; see "
              + paint("bold", f"./course diff stage{sa.n} stage{sb.n} "
                      f"{hooks[0].split(' > ')[-1]}"))


def print_reasons(known, a, b, entry, paint):
    """Why, in the words of the chapters of the stages after the earlier
    of the two, up to the later: each one's sentence that names it."""
    names = [entry.course, *entry.go, *entry.aliases.values(),
             *entry.row_go]
    lo, hi = min(a, b), max(a, b)
    found = False
    for n in range(lo + 1, hi + 1):
        for where, sentence in reasons(n, names, known)[:1]:
            found = True
            print(wrapped(f"why ({where}): ", sentence, paint))
    if not found:
        files = ", ".join(chapter_files(hi, known))
        print(paint("dim", f"why: the chapter does not name it ({files}, "
                    "\"What changed since ...\")"))


def wrapped(label, text, paint):
    """`label` and `text` wrapped to the terminal, the label in colour."""
    width = min(shutil.get_terminal_size((100, 24)).columns, 100)
    lines = textwrap.wrap(label + text, width=width,
                          subsequent_indent="    ")
    first = lines[0][len(label):] if lines[0].startswith(label) else None
    if first is None:
        return "\n".join(lines)
    return "\n".join([paint("cyan", label) + first] + lines[1:])


def side_lines(side):
    """A side's lines, and the file line of the first (1 when its text is
    several definitions, or none)."""
    lines = side.text().expandtabs(8).split("\n") if side.defs else []
    first = side.defs[0].line if len(side.defs) == 1 else 1
    return lines, first


def print_unified(sa, sb, context, paint):
    """A unified diff of the two bodies, its hunks numbered as the files'
    lines."""
    (left, la), (right, lb) = side_lines(sa), side_lines(sb)
    head = f"stage {sa.n}: {sa.where()}", f"stage {sb.n}: {sb.where()}"
    for line in difflib.unified_diff(left, right, *head, n=context,
                                     lineterm=""):
        m = re.match(r"@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@", line)
        if m:
            ra = int(m.group(1)) + (la - 1 if left else 0)
            rb = int(m.group(3)) + (lb - 1 if right else 0)
            line = f"@@ -{ra}{m.group(2) or ''} +{rb}{m.group(4) or ''} @@"
            print(paint("cyan", line))
        elif line.startswith(("---", "+++")):
            print(paint("bold", line))
        elif line.startswith("-"):
            print(paint("red", line))
        elif line.startswith("+"):
            print(paint("green", line))
        else:
            print(line)


def print_side_by_side(sa, sb, paint):
    """The two bodies in two columns, numbered as the files' lines:
    `|` changed, `<` only on the left, `>` only on the right."""
    (left, la), (right, lb) = side_lines(sa), side_lines(sb)
    width = shutil.get_terminal_size((160, 24)).columns
    w = max((width - 3) // 2, 30)
    print(paint("bold", cell(f"stage {sa.n}: {sa.where()}", w) + "   " +
                f"stage {sb.n}: {sb.where()}"))
    ops = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for tag, i1, i2, j1, j2 in ops.get_opcodes():
        for k in range(max(i2 - i1, j2 - j1)):
            i, j = i1 + k, j1 + k
            lt = cell(f"{la + i:4} {left[i]}", w) if i < i2 else " " * w
            rt = cell(f"{lb + j:4} {right[j]}", w).rstrip() if j < j2 else ""
            mark = " " if tag == "equal" else \
                "|" if i < i2 and j < j2 else "<" if i < i2 else ">"
            if tag != "equal":
                lt = paint("red", lt) if i < i2 else lt
                rt = paint("green", rt)
            print(f"{lt} {mark} {rt}".rstrip())


def cell(text, w):
    """`text` in a column `w` wide: cut with an ellipsis, or padded."""
    return text[:w - 3] + "..." if len(text) > w else text.ljust(w)


# ---------------------------------------------------------------------------
# Arguments


class Parser(argparse.ArgumentParser):
    """argparse, with its errors as one line and status 2 (UsageError)."""

    def error(self, message):
        raise UsageError(f"{message} (usage: ./course diff STAGE_A STAGE_B "
                         "[FUNCTION] [--side-by-side])")


def parse_args(argv):
    """The command line, checked: a UsageError if it is not sound."""
    p = Parser(prog="./course diff",
               description="What changed in Go's functions between two "
               "stages of the course (docs/course/go_map.md's functions).")
    p.add_argument("stage_a", metavar="STAGE_A",
                   help="stage3, 3 or stage3_gmp")
    p.add_argument("stage_b", metavar="STAGE_B")
    p.add_argument("function", metavar="FUNCTION", nargs="?",
                   help="the course's name (find_runnable) or Go's "
                   "(findRunnable); without it, the lists")
    p.add_argument("--side-by-side", action="store_true",
                   help="the two bodies in two columns")
    p.add_argument("-U", "--context", type=int, default=3, metavar="N",
                   help="lines of context around a change (default 3)")
    # Options may come anywhere, also between STAGE_B and FUNCTION
    # (`2 3 --side-by-side find_runnable`), which parse_args refuses.
    opts = p.parse_intermixed_args(argv)
    if opts.side_by_side and opts.function is None:
        raise UsageError("--side-by-side needs a FUNCTION "
                         "(./course diff stage2 stage3 find_runnable "
                         "--side-by-side)")
    if opts.context < 0:
        raise UsageError(f"-U {opts.context}: the context is 0 lines or more")
    return opts


def lookup(gomap, known, a, b, name):
    """The Entries FUNCTION names: a course name of go_map.md, a Go name
    (exactly, or in another case: Go 1.18's findrunnable), or a function
    one of the stages defines that the map does not list."""
    if name in gomap.entries:
        return [gomap.entries[name]]
    go = [g for g in gomap.by_go if g == name] or \
        [g for g in gomap.by_go if g.lower() == name.lower()]
    if go:
        return [gomap.entries[c] for c in gomap.by_go[go[0]]]
    entry = Entry(name, "not in go_map.md")
    if re.fullmatch(r"\w+", name) and any(
            Side(known, n, entry).defs for n in (a, b)):
        return [entry]
    raise UsageError(
        f"unknown function '{name}': give a course name or a Go name from "
        f"{GO_MAP} (find_runnable or findRunnable), or a function stage {a} "
        f"or stage {b} defines")


def check_defined(known, a, b, entries, name):
    """The entries one of the two stages has; a UsageError if none."""
    have = [e for e in entries
            if Side(known, a, e).defs or Side(known, b, e).defs]
    if have:
        return have
    where = sorted({Side(known, n, e).owner for e in entries for n in known}
                   - {None})
    elsewhere = (f"stage {', '.join(map(str, where))} "
                 f"{'defines' if len(where) == 1 else 'define'} it"
                 if where else "no stage folder defines it (it may be in "
                 "common/, which every stage shares)")
    named = "; ".join(e.course + (f", Go's {', '.join(e.go)}" if e.go else "")
                      for e in entries)
    raise UsageError(f"neither stage {a} nor stage {b} has '{name}' "
                     f"({named}): {elsewhere}")


def main(argv):
    known = stages()
    opts = parse_args(argv)
    a = parse_stage(opts.stage_a, known)
    b = parse_stage(opts.stage_b, known)
    if a == b:
        raise UsageError(f"STAGE_A and STAGE_B are both stage {a}: "
                         "give two different stages")
    paint = Paint(sys.stdout.isatty() and "NO_COLOR" not in os.environ)
    gomap = GoMap()
    if opts.function is None:
        print_lists(gomap, known, a, b, paint)
        return 0
    entries = check_defined(known, a, b,
                            lookup(gomap, known, a, b, opts.function),
                            opts.function)
    for i, entry in enumerate(entries):
        if i:
            print()
        print_function(known, a, b, entry, opts, paint)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        print(f"course diff: {e}", file=sys.stderr)
        sys.exit(2)
    except BrokenPipeError:  # | head: the reader has what it wanted
        sys.stderr.close()
        sys.exit(0)
