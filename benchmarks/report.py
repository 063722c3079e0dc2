#!/usr/bin/env python3
"""Renders the benchmark results: a Markdown report and SVG charts.

Usage: report.py RESULTS.json [GO.json] --out DIR [--machine TEXT]
                 [--merge EARLIER_DIR] [--dest DIR]

RESULTS.json is Google Benchmark's JSON output of //benchmarks:stages_bench;
GO.json the Go reference's (benchmarks/go), optional. Writes DIR/README.md
(tables: for each workload, one row per GOMAXPROCS, the stages as columns,
each cell the time per item and its ratio to stage 1 and to Go; then the
counters that explain them, and the other measurements) and DIR/*.svg
(throughput against GOMAXPROCS per workload, and the scheduler lock's wait
per stage). Needs python3-matplotlib for the charts (skipped without it).

It also writes DIR/benchmarks.json (and DIR/go.json): the results, each
stamped with the machine it ran on ("machine": TEXT). With --merge, the
results in EARLIER_DIR that this run did not remeasure (by name) are kept,
with their own machine: a run of a few workloads updates those rows only,
and the report says which machine each row comes from.
"""
import argparse
import json
import os
import re
import sys

STAGES = ["stage1_threadpool", "stage2_global_queue", "stage3_gmp",
          "stage4_syscalls", "stage5_preemption"]
SHORT = {"stage1_threadpool": "stage 1", "stage2_global_queue": "stage 2",
         "stage3_gmp": "stage 3", "stage4_syscalls": "stage 4",
         "stage5_preemption": "stage 5", "go": "Go 1.19"}
# The counters worth a column, in this order, when a row has them.
COUNTERS = ["threads", "lock/op", "contended%", "lockwait_ns/op", "steals",
            "stolen/op", "runnext/op", "grq_taken/op", "spin_ns/op", "parks/op",
            "rss_bytes/goroutine", "timer_lock/op", "timer_contended%",
            "timers_stolen/op", "warm_ups", "peak_rss_MB", "faults/goroutine",
            "max_alive", "G_reused%", "stack_refills",
            # The echo rows, per round trip (benchmarks/io_bench.h).
            "cpu_ns/rt", "sys/rt", "read/rt", "eagain/rt", "write/rt",
            "wake_w/rt", "epoll_wait/rt", "epoll_ctl/rt", "futex/rt", "cs/rt",
            "Ms_woken/rt", "parks/rt", "netpolls/rt", "switches/rt"]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# workload/stage/procs:N (workload names may contain '/': fan-out/fan-in).
NAME = re.compile(r"^(?P<workload>.+)/(?P<stage>[^/]+)/procs:(?P<procs>\d+)")
# The tracer's cost: trace/workload/stage/off|on (benchmarks/trace_bench.h).
TRACE = re.compile(r"^trace/(?P<workload>.+)/(?P<stage>stage[^/]+)/(?P<mode>off|on)(/|$)")
# The same work without the course's runtimes: workload/baseline.
BASELINES = {"os_threads": "OS threads", "boost_fiber": "Boost.Fiber"}
BASELINE = re.compile(r"^(?P<workload>.+)/(?P<kind>" + "|".join(BASELINES) + ")")


def read(path):
    """The document at path, its "benchmarks" a list (null when a filter
    matched nothing there, as an older Go side wrote it)."""
    with open(path) as f:
        doc = json.load(f)
    doc["benchmarks"] = doc.get("benchmarks") or []
    return doc


def run_name(b):
    """The benchmark a result measures: its name without an aggregate's
    suffix (Google Benchmark names a repeated one's median "..._median")."""
    return b.get("run_name", b["name"])


def reportable(doc):
    """The figure of each benchmark: the median of its repetitions when it
    was repeated (--benchmark_repetitions; `./course bench --publish`
    instead hands over the median of its passes, run_pairs.py), else its
    one run. Failed ones are left out."""
    ok = [b for b in doc["benchmarks"] if "error_occurred" not in b]
    medians = {run_name(b): dict(b, name=run_name(b)) for b in ok
               if b.get("aggregate_name") == "median"}
    return [medians[run_name(b)] if run_name(b) in medians else b for b in ok
            if b.get("aggregate_name") == "median" or
            (b.get("run_type", "iteration") == "iteration"
             and run_name(b) not in medians)]


def load(path):
    return reportable(read(path))


def stamp_and_merge(doc, machine, earlier_path):
    """doc's results stamped with machine (where they have none), then the
    results of earlier_path (if it exists) whose names doc lacks."""
    for b in doc["benchmarks"]:
        if machine:
            b.setdefault("machine", machine)
    if earlier_path and os.path.exists(earlier_path):
        # In the earlier order, each remeasured benchmark's results where
        # its old ones were; benchmarks new to the report at the end.
        now = {}
        for b in doc["benchmarks"]:
            now.setdefault(run_name(b), []).append(b)
        merged = []
        for b in read(earlier_path)["benchmarks"]:
            if run_name(b) not in now:
                merged.append(b)
            elif now[run_name(b)]:
                merged += now[run_name(b)]
                now[run_name(b)] = []  # placed
        doc["benchmarks"] = merged + [b for bs in now.values() for b in bs]
    return doc


class Machines:
    """Where each result was measured. One machine: the report's header
    names it. Several (a merged report): the header lists them as [A],
    [B], ..., and each table says which rows come from which."""

    def __init__(self, benchmarks):
        self.names = []
        for b in benchmarks:
            m = b.get("machine", "")
            if m not in self.names:
                self.names.append(m)
        self.mixed = len(self.names) > 1

    def label(self, b):
        return "[" + chr(ord("A") + self.names.index(b.get("machine", ""))) + "]"

    def header(self):
        if not self.mixed:
            return [f"Machine: {self.names[0]}", ""] if self.names and self.names[0] else []
        return ["Machines (a merged report: each table says where its rows "
                "were measured):", ""] + [
            f"- [{chr(ord('A') + i)}] {m or 'not recorded'}"
            for i, m in enumerate(self.names)] + [""]

    def rows(self, rows):
        """Which procs rows of a workload table came from which machine."""
        if not self.mixed:
            return []
        on = {}
        for procs in sorted(rows):
            for b in rows[procs].values():
                procs_list = on.setdefault(self.label(b), [])
                if procs not in procs_list:
                    procs_list.append(procs)
        parts = [f"procs {', '.join(map(str, ps))} on {m}"
                 for m, ps in sorted(on.items())]
        return ["Measured: " + "; ".join(parts) + ".", ""]


def ns_per_item(b):
    ips = b.get("items_per_second")
    return 1e9 / ips if ips else None


def human(ns):
    if ns is None:
        return "-"
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.2f} us"
    return f"{ns / 1e6:.2f} ms"


def split(benchmarks):
    """{workload: {procs: {stage: benchmark}}}, {workload: [baselines]},
    {(workload, stage): {"off"|"on": benchmark}}, and the other
    benchmarks."""
    table, baselines, traced, other = {}, {}, {}, []
    for b in benchmarks:
        m = NAME.match(b["name"])
        base = BASELINE.match(b["name"])
        t = TRACE.match(b["name"])
        if t:
            traced.setdefault((t["workload"], t["stage"]), {})[t["mode"]] = b
        elif m and (m["stage"] in STAGES or m["stage"] == "go"):
            table.setdefault(m["workload"], {}).setdefault(
                int(m["procs"]), {})[m["stage"]] = b
        elif base:
            baselines.setdefault(base["workload"], []).append(
                (BASELINES[base["kind"]], b))
        else:
            other.append(b)
    return table, baselines, traced, other


def trace_table(traced, machines):
    """The tracer's cost: per workload and stage, the time per item with
    tracing off and on, and their ratio."""
    if not traced:
        return []
    out = ["## What tracing costs", "",
           "The same workload at GOMAXPROCS 2 with the execution tracer off "
           "(the default: each event site tests a pointer) and on (a clock "
           "read and an append per event; the file is written after the "
           "timing). `on/off` is the price of recording.", "",
           "| workload | stage | off | on | on/off |", "|---|---|---|---|---|"]
    for (workload, stage), modes in traced.items():
        off, on = (ns_per_item(modes[k]) if k in modes else None
                   for k in ("off", "on"))
        ratio = f"{on / off:.2f}x" if off and on else "-"
        who = SHORT.get(stage, stage)
        if machines.mixed:
            who += " " + machines.label(next(iter(modes.values())))
        out.append(f"| {workload} | {who} | {human(off)} "
                   f"| {human(on)} | {ratio} |")
    out.append("")
    return out


def ratio(row, c, k):
    """Column c's time over column k's in one row, or None: only between
    figures of one machine (a merged report may hold a row's stages from
    different runs)."""
    a, b = row.get(c), row.get(k)
    if not a or not b or a.get("machine") != b.get("machine"):
        return None
    va, vb = ns_per_item(a), ns_per_item(b)
    return va / vb if va and vb else None


def workload_table(name, rows, has_go, baselines, machines):
    cols = STAGES + (["go"] if has_go else [])
    out = [f"### {name}", ""] + machines.rows(rows) + [
           "| procs | " + " | ".join(SHORT[c] for c in cols) + " |",
           "|---|" + "---|" * len(cols)]
    for procs in sorted(rows):
        row = rows[procs]
        cells = []
        for c in cols:
            v = ns_per_item(row[c]) if c in row else None
            cell = human(v)
            if v is not None and c != "go":
                ratios = []
                base = ratio(row, c, "stage1_threadpool")
                if base and c != "stage1_threadpool":
                    ratios.append(f"{base:.2f}x s1")
                go = ratio(row, c, "go")
                if go:
                    ratios.append(f"{go:.2f}x Go")
                if ratios:
                    cell += " (" + ", ".join(ratios) + ")"
            cells.append(cell)
        out.append(f"| {procs} | " + " | ".join(cells) + " |")
    out.append("")
    for label, b in baselines:
        out += [f"Baseline, {label}: {human(ns_per_item(b))} per item.", ""]
    # The counters, at every procs, for the stages that have them.
    lines = []
    for procs in sorted(rows):
        for c in STAGES + ["go"]:
            b = rows[procs].get(c)
            if not b:
                continue
            have = [k for k in COUNTERS if k in b]
            if have:
                vals = ", ".join(f"{k} {b[k]:.3g}" for k in have)
                lines.append(f"| {procs} | {SHORT[c]} | {vals} |")
    if lines:
        out += ["<details><summary>counters</summary>", "",
                "| procs | stage | counters |", "|---|---|---|"] + lines + \
               ["", "</details>", ""]
    return out


# Issue 41's goal: every row of stages 3-5 at most this times Go's time.
GOAL = 0.8
# For a row above the goal: what the row measures there, and the counters
# of the row that show it (with Go's, where Go counts the same), by the
# first rule whose workload prefix and procs test match. "cores": more Ps
# than the machine's cores.
WHY = [
    ("echo", "any", "round trips on the cores the client shares; most of "
     "a round trip is the kernel's TCP work in the server's system calls",
     ["cpu_ns/rt", "sys/rt", "cs/rt", "futex/rt", "Ms_woken/rt"]),
    ("cold", "any", "a fresh process: the first run's page faults and "
     "stack mappings", ["faults/goroutine", "peak_rss_MB", "max_alive"]),
    ("", "cores", "more Ps than cores: how Ms that find no work spin and "
     "steal while others wait for a core, as much as the work",
     ["spin_ns/op", "steals", "stolen/op"]),
    ("parked goroutines", "any", "a walk over 100,000 parked goroutines' "
     "memory: each keeps a stack of a page, Go's one of 2 KiB",
     ["rss_bytes/goroutine", "stolen/op"]),
    ("yield", "any", "one goroutine hands the core to another: two switches "
     "through g0 per item, no lock", ["runnext/op", "stolen/op"]),
    ("chan ping-pong", "any", "one goroutine hands the core to another: a "
     "park, a ready through runnext, two switches through g0 per item",
     ["runnext/op", "parks/op", "stolen/op"]),
    ("select", "any", "a handoff per item, through select's lock-all pass",
     ["runnext/op", "parks/op", "stolen/op"]),
    ("timer", "any", "timers set, stopped or fired on per-P heaps",
     ["timer_lock/op", "timers_stolen/op", "spin_ns/op"]),
    ("", "1", "goroutines made, run and freed on the one P",
     ["runnext/op", "parks/op"]),
    ("", "any", "goroutines made on one P and run by whichever M takes "
     "them: stolen work moves G structures and stacks between cores",
     ["stolen/op", "steals", "spin_ns/op"]),
]


def why(name, procs, cores):
    for prefix, when, text, counters in WHY:
        if not name.startswith(prefix):
            continue
        if (when == "any" or (when == "1" and procs == 1) or
                (when == "cores" and cores and procs > cores)):
            return text, counters
    raise AssertionError("WHY ends with a rule that matches every row")


def cores_of(b):
    """The cores of the machine a result names ("2 cores"), or None."""
    m = re.search(r"(\d+) cores", b.get("machine", ""))
    return int(m[1]) if m else None


def goal_table(table):
    """The rows of stages 3-5 above GOAL times Go's (same machine), each
    with what it measures there and its counters."""
    out = []
    for name, rows in table.items():
        for procs in sorted(rows):
            go = rows[procs].get("go")
            for stage in STAGES[2:]:
                r = ratio(rows[procs], stage, "go")
                if r is None or r <= GOAL:
                    continue
                b = rows[procs][stage]
                text, counters = why(name, procs, cores_of(b))
                vals = ", ".join(
                    f"{k} {b[k]:.3g}" + (f" (Go {go[k]:.3g})" if k in go else "")
                    for k in counters if k in b)
                out.append(f"| {name} | {procs} | {SHORT[stage]} | "
                           f"{r:.2f}x | {text} | {vals} |")
    if not out:
        return [f"## Rows above {GOAL}x Go", "",
                f"Every row of stages 3-5 takes at most {GOAL}x Go's time.", ""]
    return [f"## Rows above {GOAL}x Go", "",
            f"The rows of stages 3-5 that take more than {GOAL} times Go's time "
            "on the same row, with what the row measures there and the "
            "counters of the row that show it (benchmarks/README.md, "
            "\"Reading the numbers\", says more).", "",
            "| workload | procs | stage | x Go | what it measures there | counters |",
            "|---|---|---|---|---|---|"] + out + [""]


def other_table(other, machines):
    out = ["## Other measurements", "",
           "| benchmark | time | counters |", "|---|---|---|"]
    for b in other:
        where = f" {machines.label(b)}" if machines.mixed else ""
        t = f"{b['real_time']:.3g} {b.get('time_unit', 'ns')}"
        skip = {"name", "run_name", "run_type", "repetitions", "repetition_index",
                "threads", "iterations", "real_time", "cpu_time", "time_unit",
                "family_index", "per_family_instance_index", "aggregate_name"}
        extra = ", ".join(f"{k} {v:.4g}" for k, v in b.items()
                          if k not in skip and isinstance(v, (int, float)))
        out.append(f"| {b['name']}{where} | {t} | {extra} |")
    out.append("")
    return out


def slug(name):
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def bar_chart(plt, rows, cols, counter, ylabel, title, path, label,
              log=False):
    """Bars of one counter: a group per procs, a bar per column (stage or
    Go). Returns (label, file name) for the report."""
    fig, ax = plt.subplots(figsize=(6, 3.6))
    procs = sorted(rows)
    width = 0.8 / max(len(cols), 1)
    for i, c in enumerate(cols):
        vals = [rows[p].get(c, {}).get(counter, 0) for p in procs]
        ax.bar([k + i * width for k in range(len(procs))], vals, width,
               label=SHORT[c])
    ax.set_xticks([k + 0.4 - width / 2 for k in range(len(procs))])
    ax.set_xticklabels([str(p) for p in procs])
    if log:
        ax.set_yscale("log")
    ax.set_xlabel("GOMAXPROCS")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return label, os.path.basename(path)


def charts(table, out_dir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("report: no matplotlib (apt-get install python3-matplotlib): "
              "charts skipped", file=sys.stderr)
        return []
    made = []
    for name, rows in table.items():
        fig, ax = plt.subplots(figsize=(6, 3.6))
        for c in STAGES + ["go"]:
            pts = [(p, rows[p][c]["items_per_second"]) for p in sorted(rows)
                   if c in rows[p] and rows[p][c].get("items_per_second")]
            if pts:
                ax.plot([p for p, _ in pts], [v for _, v in pts], marker="o",
                        label=SHORT[c], linestyle="--" if c == "go" else "-")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(rows))
        ax.set_xticklabels([str(p) for p in sorted(rows)])
        ax.set_xlabel("GOMAXPROCS (2 cores)")
        ax.set_ylabel("items per second")
        ax.set_title(name)
        ax.legend(fontsize="small")
        fig.tight_layout()
        path = os.path.join(out_dir, f"{slug(name)}.svg")
        fig.savefig(path)
        plt.close(fig)
        made.append((name, os.path.basename(path)))
    # The scheduler lock's wait per item, per stage, on the spawn storm.
    storm = table.get("spawn storm", {})
    if storm:
        made.append(bar_chart(
            plt, storm, STAGES, "lockwait_ns/op",
            "sched lock wait, ns per goroutine",
            "spawn storm: waiting for the scheduler's lock",
            os.path.join(out_dir, "lock-wait.svg"), "lock wait (spawn storm)"))
    # The cold runs' memory: peak RSS per stage and Go, at each procs.
    for name, rows in table.items():
        if name.startswith("cold "):
            cols = [c for c in STAGES + ["go"]
                    if any(r.get(c, {}).get("peak_rss_MB") for r in rows.values())]
            made.append(bar_chart(
                plt, rows, cols, "peak_rss_MB", "peak RSS, MB (log scale)",
                f"{name}: the process's peak memory",
                os.path.join(out_dir, f"{slug(name)}-rss.svg"),
                f"{name}: peak RSS", log=True))
    return made


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("go", nargs="?")
    ap.add_argument("--out", required=True)
    ap.add_argument("--machine", default="")
    ap.add_argument("--merge", metavar="EARLIER_DIR")
    # Where the report will be read (its links are relative to it), when
    # --out is only a staging folder.
    ap.add_argument("--dest", metavar="DIR")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    benchmarks = []
    for path, file in ((args.results, "benchmarks.json"), (args.go, "go.json")):
        earlier = os.path.join(args.merge, file) if args.merge else None
        if path and os.path.exists(path):
            doc = stamp_and_merge(read(path), args.machine, earlier)
        elif earlier and os.path.exists(earlier):
            doc = read(earlier)  # this run had no Go side: keep the last
        else:
            continue
        with open(os.path.join(args.out, file), "w") as f:
            json.dump(doc, f, indent=2)
        benchmarks += reportable(doc)
    machines = Machines(benchmarks)
    table, baselines, traced, other = split(benchmarks)
    has_go = any("go" in r for rows in table.values() for r in rows.values())
    md = ["# Benchmark results", "",
          "Generated by `./course bench` (benchmarks/report.py) from "
          "`benchmarks.json`" + (" and `go.json`" if has_go else "") + ".",
          "How to read each benchmark: [benchmarks/README.md]("
          + os.path.relpath(os.path.join(REPO, "benchmarks", "README.md"),
                            os.path.abspath(args.dest or args.out)) + ").", ""]
    md += machines.header()
    md += ["Time per item (goroutine, yield, round trip, job, skynet leaf, "
           "select or timer); "
           "lower is better. In brackets: the ratio to stage 1 (s1) and to "
           "Go on the same row (below 1: faster).", "", "## Workloads", ""]
    for name, rows in table.items():
        md += workload_table(name, rows, has_go, baselines.get(name, []),
                             machines)
    if has_go:
        md += goal_table(table)
    md += trace_table(traced, machines)
    md += other_table(other, machines)
    made = charts(table, args.out)
    if made:
        md += ["## Charts", ""] + [f"![{n}]({f})" for n, f in made] + [""]
    with open(os.path.join(args.out, "README.md"), "w") as f:
        f.write("\n".join(md))
    print(f"report: {args.out}/README.md and {len(made)} charts")


if __name__ == "__main__":
    main()
