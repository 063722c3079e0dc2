#!/usr/bin/env python3
"""Runs the stages' benchmarks and the Go reference workload by workload.

`./course bench` calls it. A ratio to Go is only as good as the two
figures are close in time: on a shared 2-core VM, what waking the other
core costs can change by 2x within minutes (benchmarks/README.md,
"Reading the numbers"). So instead of the whole suite, then the whole Go
reference, it runs one workload's rows of the stages, then that
workload's Go rows, then the next workload, and writes the two merged
results, in Google Benchmark's JSON, where report.py reads them.

With --passes N it goes through the whole list N times, and each row's
figure is the median of its N runs: a slow minute on the VM then moves
one run of a row, not the row, on the stages' side and on Go's alike.

A workload is what comes before a row's stage (or baseline) in its name:
"parked goroutines" in "parked goroutines/stage3_gmp/procs:2/real_time".
Its Go rows are those of the same workload at the procs counts that the
filter kept ("parked goroutines/go/procs:2"), and, for a workload whose
rows have no procs count, "WORKLOAD/go" ("preemption latency/go").
"""
import argparse
import json
import re
import subprocess
import sys

# Where a row's workload ends: at its stage, or at a baseline's name.
_WORKLOAD_END = re.compile(r"/(stage[0-9]_|os_threads|boost_|gmp_context)")
_PROCS = re.compile(r"/procs:([0-9]+)(/|$)")
_META = re.compile(r"([\\.+*?()|\[\]{}^$])")


def escape(name):
    """`name` as a regular expression that Google Benchmark (POSIX
    extended) and Go (RE2) both read as that literal text."""
    return _META.sub(r"\\\1", name)


def exactly(names):
    """A filter that matches these names and no other."""
    return "^(" + "|".join(escape(n) for n in names) + ")$"


def workloads(names):
    """The rows of each workload, workloads in the suite's order."""
    groups = {}
    for n in names:
        m = _WORKLOAD_END.search(n)
        groups.setdefault(n[: m.start()] if m else n, []).append(n)
    return groups


def go_rows(workload, rows):
    """The Go reference's names for `workload` at the procs counts of its
    stage `rows` (module docstring)."""
    procs = sorted({int(m.group(1)) for r in rows if (m := _PROCS.search(r))})
    names = [f"{workload}/go/procs:{p}" for p in procs]
    if any(_PROCS.search(r) is None for r in rows):
        names.append(f"{workload}/go")
    return names


def run(cmd, out, stdout=None):
    """Runs `cmd`, which writes its results to file `out`; their JSON."""
    if subprocess.run(cmd, stdout=stdout).returncode != 0:
        sys.exit(f"run_pairs: failed: {' '.join(cmd)}")
    with open(out) as f:
        return json.load(f)


def run_go(cmd, out):
    """Runs the Go reference, which prints its results; their JSON."""
    with open(out, "w") as f:
        return run(cmd, out, stdout=f)


def medians(runs):
    """One row per name, in first-seen order: of a name's rows (one per
    pass), the one with the median real_time, its counters with it."""
    by_name = {}
    for row in runs:
        by_name.setdefault(row["name"], []).append(row)
    return [sorted(rows, key=lambda r: r.get("real_time", 0))[len(rows) // 2]
            for rows in by_name.values()]


def one_pass(a, groups, extra, stages, go):
    """Each workload's stage rows, then its Go rows, appended to the two
    results."""
    tmp = a.out + ".part"
    for workload, rows in groups.items():
        print(f"run_pairs: {workload}: {len(rows)} rows", file=sys.stderr)
        part = run([a.stages_bench, f"--benchmark_filter={exactly(rows)}",
                    f"--benchmark_out={tmp}", "--benchmark_out_format=json",
                    *extra], tmp)
        stages.setdefault("context", part.get("context", {}))
        stages["benchmarks"] += part.get("benchmarks", [])
        if a.go:
            quick = ["-quick"] if a.go_quick else []
            part = run_go([a.go, *quick, "-filter",
                           exactly(go_rows(workload, rows))], a.go_out + ".part")
            go.setdefault("context", part.get("context", {}))
            go["benchmarks"] += part.get("benchmarks", [])


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Arguments after -- go to every stages_bench run.")
    ap.add_argument("stages_bench", help="the stages_bench binary")
    ap.add_argument("--filter", required=True, help="rows of the stages")
    ap.add_argument("--go", help="the Go reference binary (benchmarks/go)")
    ap.add_argument("--go-quick", action="store_true",
                    help="the Go reference's -quick (smaller runs)")
    ap.add_argument("--passes", type=int, default=1,
                    help="times through the whole list; each row's figure "
                         "is then the median of its passes")
    ap.add_argument("--out", required=True, help="the stages' JSON")
    ap.add_argument("--go-out", help="the Go reference's JSON")
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    a = ap.parse_args(argv[: argv.index("--")] if "--" in argv else argv)

    listed = subprocess.run(
        [a.stages_bench, "--benchmark_list_tests", f"--benchmark_filter={a.filter}"],
        capture_output=True, text=True, check=True).stdout.split("\n")
    groups = workloads([n for n in listed if n])
    if not groups:
        sys.exit(f"run_pairs: no benchmark matches '{a.filter}'")
    stages, go = {"benchmarks": []}, {"benchmarks": []}
    for p in range(a.passes):
        if a.passes > 1:
            print(f"run_pairs: pass {p + 1} of {a.passes}", file=sys.stderr)
        one_pass(a, groups, extra, stages, go)
    for doc, out in ((stages, a.out), (go, a.go_out if a.go else None)):
        if out is None:
            continue
        doc["benchmarks"] = medians(doc["benchmarks"])
        with open(out, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
