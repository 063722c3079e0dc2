#!/usr/bin/env python3
"""Turns an execution trace (trace/json.h) into one self-contained HTML
timeline: P lanes (and M lanes) over time, goroutines coloured by id, zoom,
pan and hover details. No network, no external script: the page is
timeline_template.html with the trace's slices written into it.

    timeline.py TRACE.json [-o TRACE.html]
"""
import argparse
import collections
import json
import pathlib
import re
import sys

TEMPLATE = pathlib.Path(__file__).with_name("timeline_template.html")
PLACEHOLDER = "/*TRACE_DATA*/null"


def lane_order(name):
    """Ps by number, then Ms by number, then sysmon and run()."""
    m = re.fullmatch(r"([PM])(\d+)", name)
    if m:
        return (0 if m[1] == "P" else 1, int(m[2]))
    return (2, name)


def track_names(doc):
    """{(pid, tid): track name} from the trace's thread_name records."""
    return {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "thread_name"}


def lane_names(doc):
    """The timeline's lanes, top to bottom: Ps, Ms, sysmon, run()."""
    return sorted(set(track_names(doc).values()), key=lane_order)


def build(doc, source):
    events = doc["traceEvents"]
    other = doc["otherData"]
    names = track_names(doc)
    ordered = lane_names(doc)
    lane_of_name = {n: i for i, n in enumerate(ordered)}
    lanes = [{"name": n, "kind": "P" if n.startswith("P") else "M"}
             for n in ordered]

    def lane(e):
        return lane_of_name.get(names.get((e["pid"], e["tid"])))

    labels, label_ix = [], {}
    reasons, reason_ix = [""], {"": 0}

    def intern(table, index, text):
        if text not in index:
            index[text] = len(table)
            table.append(text)
        return index[text]

    slices = []
    stacks = collections.defaultdict(list)
    timed = sorted((e for e in events if e.get("ph") in "BE"),
                   key=lambda e: e["ts"])
    for e in timed:
        key = (e["pid"], e["tid"])
        if e["ph"] == "B":
            stacks[key].append(e)
            continue
        if not stacks[key]:
            continue
        b = stacks[key].pop()
        args = b.get("args", {})
        why = e.get("args", {}).get("reason", "")
        if e.get("args", {}).get("wait"):
            why += ": " + e["args"]["wait"]
        other_side = ""
        if "m" in args:
            other_side = f"M{args['m']}"
        elif args.get("p", -1) >= 0:
            other_side = f"P{args['p']}"
        slices.append({
            "lane": lane(b), "start": b["ts"], "end": e["ts"],
            "depth": len(stacks[key]),
            "goid": args.get("goid", 0) if b.get("cat") == "goroutine" else 0,
            "name": b["name"], "label": intern(labels, label_ix, args.get("fn", "")),
            "reason": intern(reasons, reason_ix, why), "other": other_side,
        })
    flows = collections.defaultdict(dict)
    for e in events:
        if "bind_id" in e:
            flows[(e["cat"], e["bind_id"])]["from" if e.get("flow_out") else "to"] = e
    flow_list = [{"from": lane(f["from"]), "to": lane(f["to"]),
                  "ts": f["from"]["ts"], "kind": cat}
                 for (cat, _), f in flows.items() if "from" in f and "to" in f]
    marks = [{"lane": lane(e), "ts": e["ts"], "text": e["name"]}
             for e in events
             if e.get("ph") == "i" and e.get("cat") in ("sysmon", "grq")]
    stamps = [e["ts"] for e in events if "ts" in e and e.get("ph") != "M"]
    counts = collections.Counter(f["kind"] for f in flow_list)
    return {
        "stage": other.get("stage", "?"), "procs": other.get("procs", 0),
        "goroutines": other.get("goroutines_created", 0), "source": source,
        "start": min(stamps, default=0), "end": max(stamps, default=1),
        "lanes": lanes, "slices": slices, "labels": labels, "reasons": reasons,
        "flows": flow_list, "marks": marks,
        "counts": {"steal": counts["steal"], "handoff": counts["handoff"],
                   "preempted": sum(1 for s in slices if s["goid"] and
                                    reasons[s["reason"]] == "preempted" and
                                    lanes[s["lane"]]["kind"] == "M")},
    }


def render(data):
    page = TEMPLATE.read_text()
    if PLACEHOLDER not in page:
        raise SystemExit(f"timeline: {TEMPLATE} has no {PLACEHOLDER}")
    text = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    return page.replace(PLACEHOLDER, text)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("-o", "--output", help="default: TRACE with .html")
    args = ap.parse_args(argv)
    src = pathlib.Path(args.trace)
    try:
        doc = json.loads(src.read_text())
        data = build(doc, src.name)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"timeline: {src}: not a trace: {e}", file=sys.stderr)
        return 1
    out = pathlib.Path(args.output) if args.output else src.with_suffix(".html")
    out.write_text(render(data))
    print(f"timeline: {out} ({len(data['lanes'])} lanes, "
          f"{len(data['slices'])} slices)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
