"""What the grader says about a failed test: the part of its log that shows
the bug, bounded, and the command that runs that one test again.

A test's log is gtest's output and whatever the program, the harness or a
sanitizer printed. The last lines of it are rarely the point: a
ThreadSanitizer report ends in the stack that started the thread, a gtest
failure is cut mid-message. So each kind of report is found and kept whole,
with only its stacks shortened:

  - a sanitizer report (ThreadSanitizer, AddressSanitizer, LeakSanitizer,
    UndefinedBehaviorSanitizer): its WARNING/ERROR line, each section's
    header ("Write of size 4 ... by thread T2:", "Previous read ...",
    "freed by thread T0 here:") with the first MAX_FRAMES frames of its
    stack and a line counting the frames left out, and the SUMMARY line;
  - gtest failures: whole blocks, from "file:line: Failure" to the end of
    the message (values, the test's streamed text, "Google Test trace:"
    with the seed), at most MAX_FAILURES of them;
  - the lines a test or the harness prints to explain an end it cannot
    report through gtest (exercises/testing/harness.h's watchdog, "HANG:
    ... did not finish within N s"; "FATAL: ...", "fatal error: ...", a
    signal handler's "... while waiting for: ...", an uncaught exception's
    "terminate called ..." with its "what():");
  - a Relacy report (the memory-model tests, exercises/testing/atomic.h):
    its headline ("DATA RACE (data race detected)", "USER ASSERT FAILED
    (assertion: ...)", "DEADLOCK ...", "LIVELOCK ..."), the iteration, and
    the steps of its execution history that are in the course's own files
    (the last MAX_HISTORY of them, with a line counting the rest), above
    the gtest failure that says "(Relacy's history above)";
  - when none of these is in the log (a plain crash: a null pointer's
    SIGSEGV prints nothing), the test it was in, the last lines it printed,
    and for a crash on a bad address, which build shows the stack.

Everything here works on text, so tools/grade/feedback_test.py checks it
on logs captured from real failing tests (tools/grade/testdata/).
"""

import re
import shlex

# Frames kept of each stack of a sanitizer report: its top frame, then
# frames in the course's own files (a path relative to the workspace, as
# Bazel compiles), up to MAX_FRAMES in all. Frames in libraries (the C++
# library's headers, gtest under external/, the sanitizer's runtime, libc)
# are left out below the top and counted.
MAX_FRAMES = 6
# Sanitizer reports kept of one log (halt_on_error makes it one, but
# LeakSanitizer and a report without halting can print several).
MAX_REPORTS = 2
# Sections kept of one report (a leak report has one per leaked block).
MAX_SECTIONS = 8
# gtest failure blocks kept of one test, and lines of one block.
MAX_FAILURES = 5
MAX_BLOCK_LINES = 25
# Lines of the log shown when nothing in it is recognised (a plain crash)
# or the test timed out.
TAIL_LINES = 12

# Steps kept of a Relacy execution history (those in the course's files).
MAX_HISTORY = 25

FRAME = re.compile(r"^\s*#\d+ ")
# A frame's trailing "(binary+0x1234)" once a source line names the place;
# ASan's "0x55d0c1a2b3c4 in " before the function.
MODULE_OFFSET = re.compile(r"(:\d+(?::\d+)?) \([^()\s]+\+0x[0-9a-f]+\)$")
PC = re.compile(r"^(\s*#\d+ )0x[0-9a-f]+ in ")
# A frame's source location: "path:line" or "path:line:column".
LOCATION = re.compile(r" (\S+):\d+(?::\d+)?(?: \(\S+\))?$")

# Where a sanitizer report starts and ends. ThreadSanitizer's reports
# start "WARNING: ThreadSanitizer: data race" (or "==PID==ERROR: ..." for a
# crash it caught), AddressSanitizer's and LeakSanitizer's
# "==PID==ERROR: ...", UndefinedBehaviorSanitizer's "file:line:col: runtime
# error: ...". All but UBSan's (with GCC 12) end in a SUMMARY line.
START = re.compile(r"^(==\d+==)?(WARNING|ERROR): \w+Sanitizer: ")
UBSAN_START = re.compile(r"^\S+:\d+(:\d+)?: runtime error: ")
SUMMARY = re.compile(r"^SUMMARY: \w+Sanitizer: ")

GTEST_FAILURE = re.compile(r"^(.*):(\d+): Failure$|^unknown file: Failure$")
GTEST_BLOCK_END = ("[  FAILED  ]", "[       OK ]", "[ RUN      ]", "[----------]",
                   "[  SKIPPED ]", "[==========]")

# Lines a test or the harness prints to say why it ends the program.
EXPLANATION = re.compile(r"^(HANG: |FATAL: |fatal error: |terminate called |"
                         r"\S+: SIG[A-Z]+.* while waiting for: )")
# gtest's banners: not worth a line of the tail.
NOISE = ("Note: Google Test filter", "[==", "[--", "[ RUN", "unknown file")

# Relacy's report: its result ("DATA RACE (data race detected)"; the names
# are relacy/test_result.hpp's) on the line above "iteration: N", then
# "execution history (N):" and one line per step, "[10] 1: <0x...> atomic
# load, ..., in FUNCTION, FILE(LINE)", up to a blank line; then the same
# steps again per thread (left out: the history has them in order).
RELACY_ITERATION = re.compile(r"^iteration: \d+$")
RELACY_RESULT = re.compile(r"^[A-Z][A-Z ./-]*[A-Z]( \(.*\))?$")
RELACY_HISTORY = re.compile(r"^execution history \((\d+)\):$")
RELACY_STEP = re.compile(r"^\[\d+\] \d+: ")
RELACY_PLACE = re.compile(r", (?:\./)?(\S+)\((\d+)\)$")

# The test gtest was running: the last "[ RUN      ] Suite.Name" line.
GTEST_RUN = re.compile(r"^\[ RUN      \] (\S+)")
# Signals of a bad memory access, which AddressSanitizer reports with the
# stack of the access (ASan's "SEGV on unknown address ... #0 ...").
BAD_ACCESS = {11: "SIGSEGV", 7: "SIGBUS"}

TOOLS = {"ThreadSanitizer": "ThreadSanitizer", "AddressSanitizer": "AddressSanitizer",
         "LeakSanitizer": "LeakSanitizer (AddressSanitizer's leak check)",
         "runtime error": "UndefinedBehaviorSanitizer"}


def tail(text, n=TAIL_LINES):
    """The last n lines worth reading: no gtest banners, no blank lines."""
    lines = [l for l in text.splitlines()
             if l.strip() and not l.lstrip().startswith(NOISE)]
    return "\n".join(lines[-n:])


def _frame(line):
    """A stack frame without the addresses a reader does not need."""
    return MODULE_OFFSET.sub(r"\1", PC.sub(r"\1", line.rstrip()))


def _own_place(path, own_dirs):
    """Whether a source path is the course's (see _own_frame)."""
    if path.startswith(("/", "external/", "../")):
        return False
    return own_dirs is None or path.split("/", 1)[0] in own_dirs


def _own_frame(line, own_dirs):
    """Whether a frame is in the course's code: a source path relative to
    the workspace (not gtest's, under external/), in one of `own_dirs`
    (the workspace's top folders) if given."""
    m = LOCATION.search(line.rstrip())
    return bool(m) and _own_place(m.group(1), own_dirs)


def _report_end(lines, start):
    """The index just past the report that starts at lines[start]."""
    ubsan = bool(UBSAN_START.match(lines[start]))
    i = start + 1
    while i < len(lines):
        line = lines[i]
        if SUMMARY.match(line):
            return i + 1
        if ubsan and line.strip() and not FRAME.match(line):
            return i  # UBSan's report is one line and its stack
        if START.match(line):
            return i  # the next report, without a summary between
        i += 1
    return i


def _left_out(n):
    return f"    ... {n} frame{'s' if n > 1 else ''} left out (libraries', or deeper)"


def _shorten(report, own_dirs):
    """A report with each stack cut to MAX_FRAMES frames (see there; a line
    counts the rest) and at most MAX_SECTIONS sections, a section being
    a line such as "Previous write of size 4 ... by thread T2:" or "freed
    by thread T0 here:" with the stack below it."""
    out, kept, left_out, sections, dropped, skipping = [], 0, 0, 0, 0, False
    for n, line in enumerate(report):
        if FRAME.match(line):
            if not skipping:
                if kept < MAX_FRAMES and (kept == 0 and not left_out
                                          or _own_frame(line, own_dirs)):
                    out.append(_frame(line))
                    kept += 1
                else:
                    left_out += 1
            continue
        if left_out:
            out.append(_left_out(left_out))
        kept = left_out = 0
        if not line.strip():
            if out and out[-1]:
                out.append("")
            continue
        if SUMMARY.match(line):
            if dropped:
                out.append(f"  ... {dropped} more section{'s' if dropped > 1 else ''}"
                           " like the ones above")
        elif n > 0:
            sections += 1
            skipping = sections > MAX_SECTIONS
            if skipping:
                dropped += 1
                continue
        out.append(line.rstrip())
    if left_out:
        out.append(_left_out(left_out))
    while out and not out[-1]:
        out.pop()
    return out


def sanitizer_reports(text, own_dirs=None):
    """The sanitizer reports in a log, each shortened (_shorten) to a list
    of lines; at most MAX_REPORTS. own_dirs: see _own_frame."""
    lines = text.splitlines()
    reports, i = [], 0
    while i < len(lines) and len(reports) < MAX_REPORTS:
        if START.match(lines[i]) or UBSAN_START.match(lines[i]):
            end = _report_end(lines, i)
            reports.append(_shorten(lines[i:end], own_dirs))
            i = end
        else:
            i += 1
    return reports


def sanitizer_name(report):
    """Which sanitizer wrote a report (its first line), for the headline."""
    for key, name in TOOLS.items():
        if key in report[0]:
            return name
    return "a sanitizer"


def _bounded_block(lines):
    """One failure block, at most MAX_BLOCK_LINES lines."""
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    if len(lines) > MAX_BLOCK_LINES:
        more = len(lines) - MAX_BLOCK_LINES
        lines = lines[:MAX_BLOCK_LINES] + [f"... {more} more lines of this failure"]
    return lines


def gtest_failures_from_log(text):
    """gtest's failure blocks in its console output, each a list of lines:
    from "file:line: Failure" up to the next gtest line, the next failure
    or a sanitizer report."""
    blocks, current = [], None
    for line in text.splitlines():
        if GTEST_FAILURE.match(line):
            if current:
                blocks.append(current)
            current = [line]
        elif current is not None:
            if (line.startswith(GTEST_BLOCK_END) or START.match(line)
                    or UBSAN_START.match(line)
                    or line.startswith("==================")):
                blocks.append(current)
                current = None
            else:
                current.append(line)
    if current:
        blocks.append(current)
    return [_bounded_block(b) for b in blocks]


def gtest_failures_from_report(failures):
    """The same blocks from gtest's JSON report (--gtest_output=json): its
    "failure" texts are "file:line\\nmessage"; rendered as the console
    writes them."""
    blocks = []
    for f in failures:
        lines = f.get("failure", "").splitlines() or [""]
        lines[0] += ": Failure"
        blocks.append(_bounded_block(lines))
    return blocks


def explanations(text, shown=()):
    """The lines a test, the harness or the C++ runtime printed to explain
    how the program ended (EXPLANATION), each with the indented or
    "what():" lines that follow it; minus lines already in `shown`."""
    out, follow = [], False
    for line in text.splitlines():
        stripped = line.strip()
        if EXPLANATION.match(stripped):
            follow = True
            if stripped not in shown:
                out.append(stripped)
        elif follow and line.startswith((" ", "\t")) and stripped:
            if stripped not in shown:
                out.append("  " + stripped)
        else:
            follow = False
    return out


def relacy_reports(text, own_dirs=None):
    """Relacy's reports in a log, each a list of lines: the result, the
    iteration, and the history's steps in the course's files (own_dirs:
    see _own_frame), the last MAX_HISTORY of them after a line counting
    the steps left out; at most MAX_REPORTS."""
    lines = text.splitlines()
    reports = []
    for i, line in enumerate(lines):
        if not RELACY_ITERATION.match(line) or len(reports) >= MAX_REPORTS:
            continue
        out = []
        if i > 0 and RELACY_RESULT.match(lines[i - 1]):
            out.append(lines[i - 1])
        out.append(line)
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        m = RELACY_HISTORY.match(lines[j]) if j < len(lines) else None
        if m:
            steps = []
            j += 1
            while j < len(lines) and RELACY_STEP.match(lines[j]):
                steps.append(lines[j].rstrip())
                j += 1
            own = [s for s in steps if (p := RELACY_PLACE.search(s))
                   and _own_place(p.group(1), own_dirs)]
            kept = own[-MAX_HISTORY:]
            left = len(steps) - len(kept)
            if not left:
                out.append(f"execution history ({len(steps)} steps):")
            else:
                out.append(f"execution history ({len(steps)} steps; the last "
                           f"{len(kept)} in the course's files):")
                out.append(f"  ... {left} step{'s' if left > 1 else ''} left out "
                           "(earlier, or in Relacy's own files)")
            out += [RELACY_PLACE.sub(lambda p: f", {p.group(1)}({p.group(2)})", s)
                    for s in kept]
        reports.append(out)
    return reports


def last_test(text):
    """The test gtest was running when the log ends (its last "[ RUN ]"
    line) and the lines printed after that line, banners left out."""
    name, after = None, []
    for line in text.splitlines():
        m = GTEST_RUN.match(line)
        if m:
            name, after = m.group(1), []
        elif name and line.strip() and not line.lstrip().startswith(NOISE):
            after.append(line.rstrip())
    return name, after


def where_it_died(log, returncode):
    """For a crash the log does not explain: the test it was in, the last
    lines that test printed, and which build shows where it died."""
    name, printed = last_test(log)
    if name is None:
        printed = tail(log).splitlines()
    printed = printed[-TAIL_LINES:]
    out = []
    if name:
        out.append(f"it died in {name}" + (", after printing:" if printed else
                                            ", having printed nothing"))
    elif printed:
        out.append("the last lines it printed:")
    out += ["  " + l for l in printed]
    if returncode is not None and -returncode in BAD_ACCESS:
        out.append(f"{BAD_ACCESS[-returncode]} is a bad memory access (a null or "
                   "dangling pointer?); re-grade with --config asan to see where: "
                   "AddressSanitizer prints the stack of the access")
    return out


def rerun_command(binary, name, env):
    """The shell command that runs one test as the grader ran it: `env`
    (the variables the grader set that change what the test does), the
    binary, the filter."""
    words = [f"{k}={shlex.quote(v)}" for k, v in env.items()]
    words += [shlex.quote(str(binary)), shlex.quote(f"--gtest_filter={name}")]
    return " ".join(words)


def _limit(blocks, what):
    """At most MAX_FAILURES blocks, then a line saying how many more."""
    lines = []
    for b in blocks[:MAX_FAILURES]:
        lines += b
    if len(blocks) > MAX_FAILURES:
        more = len(blocks) - MAX_FAILURES
        lines.append(f"... and {more} more {what}{'s' if more > 1 else ''} "
                     "(the rerun command below shows them all)")
    return lines


def explain(log, returncode, timeout=None, report_failures=None, own_dirs=None):
    """The message for a failed test: a headline where gtest's own failure
    needs none, then what shows the bug (the module comment).

    log: the test's stdout and stderr; returncode: its exit status
    (negative: a signal), None if the grader killed it after `timeout`
    seconds; report_failures: the test's "failures" in gtest's JSON report
    if the program wrote the report (it ran to its end); own_dirs: the
    workspace's top folders, whose frames a stack keeps (_own_frame).
    """
    reports = sanitizer_reports(log, own_dirs)
    if report_failures:
        blocks = gtest_failures_from_report(report_failures)
    else:
        blocks = gtest_failures_from_log(log)
    body = []
    for r in relacy_reports(log, own_dirs):
        body += r  # above the failure that says "(Relacy's history above)"
    body += _limit(blocks, "failure")
    for r in reports:
        body += r
    said = explanations(log, shown={l.strip() for l in body})
    body += said
    if returncode is None:
        last = tail(log).splitlines()
        body.append("the last lines it printed:" if last else
                    "it printed nothing after gtest's banner")
        body += ["  " + l for l in last]
        return "\n".join([f"timed out after {timeout} s (a hang?): the grader "
                          "killed it"] + body)
    if report_failures and returncode == 1 and not reports:
        return "\n".join(body)  # gtest failed the test: its blocks say why
    how = (f"killed by signal {-returncode}" if returncode < 0
           else f"exit status {returncode}")
    tools = []
    for r in reports:
        if sanitizer_name(r) not in tools:
            tools.append(sanitizer_name(r))
    if tools:
        how += "; " + " and ".join(tools) + " reported an error"
    head = "crashed"
    if any(l.startswith("HANG: ") for l in said):
        head = "hung: its watchdog ended it"
    if not body:
        body = where_it_died(log, returncode)
    return "\n".join([f"{head} ({how}):"] + body)
