#!/usr/bin/env python3
"""Checks the structure of an execution trace written by a runtime
(trace/json.h), and prints what it holds.

    check_trace.py TRACE.json [--expect steal,handoff,preempt,syscall]

Exit status 0 if every check passes, 1 with one line per problem otherwise.
The checks:
  - the file is JSON with "traceEvents" and "otherData";
  - every event has a phase, a process, a thread and a time >= 0;
  - slices balance on every track: each "E" closes a "B" of its track,
    no later than it, and nothing is left open; no event was dropped and the
    writer closed nothing by force;
  - a P runs one goroutine at a time, and a goroutine runs on one M at a
    time;
  - every goroutine created ends (returns, unwinds, or is dropped unrun),
    and the counts agree with "otherData";
  - every flow has one start and one end: steals go from one real P track
    ("P<n>", n < procs) to another, hand-offs from an M (or sysmon) to an M,
    and their arguments name those tracks;
  - every track has a name; queue lengths are within bounds (256 local).
--expect lists kinds of events that must appear at least once.
"""
import argparse
import collections
import json
import re
import sys


class Trace:
    def __init__(self, doc):
        self.events = doc["traceEvents"]
        self.other = doc["otherData"]
        self.names = {}  # (pid, tid) -> thread name
        self.process = {}  # pid -> process name
        for e in self.events:
            if e.get("ph") == "M" and e.get("name") == "thread_name":
                self.names[(e["pid"], e["tid"])] = e["args"]["name"]
            if e.get("ph") == "M" and e.get("name") == "process_name":
                self.process[e["pid"]] = e["args"]["name"]

    def track(self, e):
        return self.names.get((e["pid"], e["tid"]), f"{e['pid']}/{e['tid']}")


def check_fields(t, bad):
    for i, e in enumerate(t.events):
        for key in ("ph", "pid"):
            if key not in e:
                bad.append(f"event {i} has no {key!r}: {e}")
        if e.get("ph") != "M":
            ts = e.get("ts")
            if not isinstance(ts, (int, float)) or ts < 0:
                bad.append(f"event {i} has no valid ts: {e}")


def check_slices(t, bad):
    """B/E balance per track; one goroutine per P and per goroutine."""
    stacks = collections.defaultdict(list)
    running_on = {}  # goid -> M track running it
    timed = sorted((e for e in t.events if e["ph"] in "BE"),
                   key=lambda e: e["ts"])  # stable: file order at equal ts
    for e in timed:
        key = (e["pid"], e["tid"])
        if e["ph"] == "B":
            stack = stacks[key]
            goid = e.get("args", {}).get("goid")
            if e.get("cat") == "goroutine":
                if t.process.get(e["pid"]) == "Ps" and stack:
                    bad.append(f"{t.track(e)} starts G{goid} at {e['ts']} "
                               f"while running {stack[-1]['name']}")
                if t.process.get(e["pid"]) == "Ms":
                    if goid in running_on:
                        bad.append(f"G{goid} starts on {t.track(e)} at "
                                   f"{e['ts']} while running on "
                                   f"{running_on[goid]}")
                    running_on[goid] = t.track(e)
            stack.append(e)
        else:
            if not stacks[key]:
                bad.append(f"{t.track(e)}: an 'E' at {e['ts']} closes nothing")
                continue
            b = stacks[key].pop()
            if e["ts"] < b["ts"]:
                bad.append(f"{t.track(e)}: {b['name']} ends before it begins")
            if b.get("cat") == "goroutine" and t.process.get(e["pid"]) == "Ms":
                running_on.pop(b["args"]["goid"], None)
    for key, stack in stacks.items():
        for b in stack:
            bad.append(f"{t.names.get(key, key)}: {b['name']} never ends")
    if t.other.get("forced_ends"):
        bad.append(f"the writer closed {t.other['forced_ends']} slices by force")
    if t.other.get("dropped_events"):
        bad.append(f"{t.other['dropped_events']} events were dropped")


def check_goroutines(t, bad):
    end_goid = goids_of_ends(t)
    created = set()
    ended = set()
    for e in t.events:
        args = e.get("args", {})
        if e["ph"] == "i" and e.get("cat") == "go":
            if e["name"].startswith("go G"):
                if args["goid"] in created:
                    bad.append(f"G{args['goid']} created twice")
                created.add(args["goid"])
            elif "never started" in e["name"]:
                ended.add(args["goid"])
        if e["ph"] == "E" and args.get("reason") == "exit" and \
                t.process.get(e["pid"]) == "Ms":
            ended.add(end_goid.get(id(e)))
    ended.discard(None)
    for g in sorted(created - ended):
        bad.append(f"G{g} was created and never ended")
    for g in sorted(ended - created):
        bad.append(f"G{g} ended but was never created")
    if len(created) != t.other.get("goroutines_created"):
        bad.append(f"{len(created)} creations in the events, "
                   f"{t.other.get('goroutines_created')} in otherData")
    return created


def goids_of_ends(t):
    """The goroutine each 'E' closes ({id(E event): goid}): the writer puts
    the stop's reason on the E and the goroutine's id on its B."""
    stacks = collections.defaultdict(list)
    goid = {}
    for e in sorted((e for e in t.events if e["ph"] in "BE"),
                    key=lambda e: e["ts"]):
        key = (e["pid"], e["tid"])
        if e["ph"] == "B":
            stacks[key].append(e)
        elif stacks[key]:
            goid[id(e)] = stacks[key].pop().get("args", {}).get("goid")
    return goid


def check_flows(t, bad, procs):
    flows = collections.defaultdict(list)
    for e in t.events:
        if "bind_id" in e:
            flows[(e.get("cat"), e["bind_id"])].append(e)
    counts = collections.Counter()
    p_track = re.compile(r"P(\d+)$")
    m_track = re.compile(r"(M\d+|sysmon)$")
    for (cat, fid), evs in flows.items():
        outs = [e for e in evs if e.get("flow_out")]
        ins = [e for e in evs if e.get("flow_in")]
        if len(outs) != 1 or len(ins) != 1:
            bad.append(f"flow {cat} {fid}: {len(outs)} starts, {len(ins)} ends")
            continue
        src, dst = t.track(outs[0]), t.track(ins[0])
        counts[cat] += 1
        if ins[0]["ts"] < outs[0]["ts"]:
            bad.append(f"flow {cat} {fid} ends before it starts")
        if cat == "steal":
            a, b = p_track.match(src), p_track.match(dst)
            args = outs[0]["args"]
            if not a or not b or a[1] == b[1]:
                bad.append(f"steal {fid} goes from {src} to {dst}: not two Ps")
            elif int(a[1]) >= procs or int(b[1]) >= procs:
                bad.append(f"steal {fid}: {src} -> {dst}, only {procs} Ps")
            elif (args["from"], args["to"]) != (int(a[1]), int(b[1])):
                bad.append(f"steal {fid}: args {args} but tracks {src}, {dst}")
            if args.get("count", 0) < 1:
                bad.append(f"steal {fid} took nothing")
        elif cat == "handoff":
            if not m_track.match(src) or not m_track.match(dst) or src == dst:
                bad.append(f"hand-off {fid} goes from {src} to {dst}")
        else:
            bad.append(f"flow {fid} of unknown category {cat}")
    return counts


def check_tracks(t, bad):
    for e in t.events:
        if e["ph"] in "BEXi" and (e["pid"], e["tid"]) not in t.names:
            bad.append(f"track {e['pid']}/{e['tid']} has no name")
            return
    for e in t.events:
        if e["ph"] == "C":
            n = e["args"]["len"]
            if n < 0 or (e["name"].startswith("runq") and n > 256):
                bad.append(f"counter {e['name']} = {n}")


def summary(t, created, flows):
    kinds = collections.Counter()
    for e in t.events:
        if e["ph"] == "B":
            kinds[e.get("cat")] += 1
        elif e["ph"] == "i":
            kinds[e.get("cat")] += 1
    kinds["steal"] = flows["steal"]
    kinds["handoff"] = flows["handoff"]
    kinds["preempt"] = sum(1 for e in t.events
                           if e["ph"] == "E" and
                           e.get("args", {}).get("reason") == "preempted")
    return kinds


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--expect", default="",
                    help="comma-separated kinds that must appear: "
                         "steal, handoff, preempt, syscall, grq")
    args = ap.parse_args(argv)
    bad = []
    try:
        with open(args.trace) as f:
            doc = json.load(f)
        t = Trace(doc)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"check_trace: {args.trace}: not a trace: {e}")
        return 1
    procs = t.other.get("procs", 0)
    check_fields(t, bad)
    check_slices(t, bad)
    created = check_goroutines(t, bad)
    flows = check_flows(t, bad, procs)
    check_tracks(t, bad)
    kinds = summary(t, created, flows)
    for want in filter(None, args.expect.split(",")):
        if kinds[want] == 0:
            bad.append(f"no {want} event in the trace")
    print(f"{args.trace}: {t.other.get('stage')}, {procs} procs, "
          f"{len(t.events)} events, {len(created)} goroutines; " +
          ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()) if v))
    for b in bad[:50]:
        print(f"check_trace: {b}")
    if len(bad) > 50:
        print(f"check_trace: ... and {len(bad) - 50} more")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
