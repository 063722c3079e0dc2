#!/usr/bin/env python3
"""Writes each course chapter's benchmark table from the checked-in results.

Usage: bench_tables.py RESULTS_DIR OUT_DIR

Reads RESULTS_DIR/benchmarks.json (and go.json when present): the results
`./course bench --publish` checked in under docs/benchmarks/. Writes
OUT_DIR/<stage>_bench.html for every stage, an HTML fragment that the
chapter pulls in with \\htmlinclude: for the workloads that show the stage's
idea, the time per item of the previous stage, this stage and Go at each
GOMAXPROCS, and the stage's own other measurements. Nothing is typed by
hand, so the chapters cannot drift from the results.
"""
import html
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "benchmarks"))
import report  # noqa: E402  (benchmarks/report.py: loading and formatting)

# The workloads that show each stage's idea (the tables of benchmarks/
# README.md explain them), and the prefixes of its other measurements.
FOCUS = {
    "stage1_threadpool": (["spawn+join", "chan ping-pong", "parked goroutines"],
                          ["echo/stage1_threadpool"]),
    "stage2_global_queue": (["spawn+join", "yield", "chan ping-pong",
                             "spawn storm", "timers 100k x 1ms"],
                            ["context switch/"]),
    "stage3_gmp": (["spawn+join", "yield", "spawn storm", "imbalanced spawn",
                    "skynet", "fan-out/fan-in", "timers 100k x 1ms",
                    "timer set/stop churn"],
                   ["handoff 8x200ms on 1 P/stage3_gmp"]),
    "stage4_syscalls": (["spawn+join", "chan ping-pong"],
                        ["echo/", "handoff 8x200ms on 1 P/",
                         "blocking(getppid)/stage4_syscalls"]),
    "stage5_preemption": (["spawn+join", "yield"],
                          ["preemption latency/", "blocking(getppid)/"]),
}


def cell(b):
    return html.escape(report.human(report.ns_per_item(b))) if b else "-"


def workload_table(name, rows, stage):
    prev = report.STAGES[report.STAGES.index(stage) - 1] \
        if stage != report.STAGES[0] else None
    cols = ([prev] if prev else []) + [stage] + ["go"]
    head = "".join(f"<th>{html.escape(report.SHORT[c])}</th>" for c in cols)
    out = [f"<tr><th colspan='{len(cols) + 2}' class='bench-workload'>"
           f"{html.escape(name)}</th></tr>",
           f"<tr><th>procs</th>{head}<th>{'vs previous' if prev else ''}</th>"
           "</tr>"]
    for procs in sorted(rows):
        r = rows[procs]
        cells = "".join(f"<td>{cell(r.get(c))}</td>" for c in cols)
        ratio = ""
        if prev and r.get(prev) and r.get(stage) and \
                r[prev].get("machine") == r[stage].get("machine"):
            a, b = report.ns_per_item(r[stage]), report.ns_per_item(r[prev])
            if a and b:
                ratio = f"{a / b:.2f}x"
        out.append(f"<tr><td>{procs}</td>{cells}<td>{ratio}</td></tr>")
    return out


UNIT_NS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
# How a reader says a benchmark's parameters (key:value in its name).
PARAMS = {"conns": lambda v: v + (" connection" if v == "1"
                                  else " connections"),
          "calls": "{} calls",
          "other": lambda v: "nothing else runnable" if v == "0"
          else "another goroutine runnable"}


def variant(parts):
    """A benchmark name's parts after the first, as a reader says them:
    "stage4_syscalls/conns:1000" -> "stage 4, 1000 conns"; Google
    Benchmark's own annotations (iterations:N, manual_time) left out."""
    words = []
    for p in parts:
        if p == "manual_time" or p.startswith("iterations:"):
            continue
        if p in report.SHORT:
            words.append(report.SHORT[p])
        elif ":" in p:
            key, value = p.split(":", 1)
            say = PARAMS.get(key, "{} " + key)
            words.append(say(value) if callable(say) else say.format(value))
        else:
            words.append(p)
    return ", ".join(words)


def other_rows(other, prefixes):
    """The stage's other measurements, grouped under their name, each with
    its time in readable units (and per call, when the name counts calls)."""
    out, group = [], None
    mine = [b for b in other if any(b["name"].startswith(p) for p in prefixes)]
    order = {}
    for b in mine:  # groups in order of first appearance, rows kept in order
        order.setdefault(b["name"].split("/")[0], len(order))
    for b in sorted(mine, key=lambda b: order[b["name"].split("/")[0]]):
        parts = b["name"].split("/")
        if parts[0] != group:
            group = parts[0]
            out.append(f"<tr><th colspan='2' class='bench-workload'>"
                       f"{html.escape(group)}</th></tr>")
        ns = b["real_time"] * UNIT_NS.get(b.get("time_unit", "ns"), 1)
        t = report.human(ns)
        calls = [int(p.split(":")[1]) for p in parts if p.startswith("calls:")]
        if calls:
            t += f" ({report.human(ns / calls[0])} per call)"
        out.append(f"<tr><td>{html.escape(variant(parts[1:]) or group)}</td>"
                   f"<td>{html.escape(t)}</td></tr>")
    return out


def fragment(stage, table, other):
    workloads, prefixes = FOCUS[stage]
    out = ["<table class='markdownTable bench'>"]
    for name in workloads:
        if name in table:
            out += workload_table(name, table[name], stage)
    out.append("</table>")
    rows = other_rows(other, prefixes)
    if rows:
        out += ["<table class='markdownTable bench'>"] + rows + ["</table>"]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bench_tables.py RESULTS_DIR OUT_DIR")
    results, out_dir = sys.argv[1:]
    benchmarks = report.load(os.path.join(results, "benchmarks.json"))
    go = os.path.join(results, "go.json")
    if os.path.exists(go):
        benchmarks += report.load(go)
    table, _, _, other = report.split(benchmarks)
    if not table:
        sys.exit(f"bench_tables: no results in {results}/benchmarks.json")
    os.makedirs(out_dir, exist_ok=True)
    for stage in report.STAGES:
        with open(os.path.join(out_dir, f"{stage}_bench.html"), "w") as f:
            f.write(fragment(stage, table, other))


if __name__ == "__main__":
    main()
