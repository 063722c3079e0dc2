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
    time; each run on a P is also open on the M it names;
  - the trace holds goroutine 1 and at least one run;
  - every goroutine is created once, runs only after its creation, ends
    once (returns, unwinds, or is dropped unrun) and never runs again after
    that, and the counts agree with "otherData";
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
        for key in ("ph", "pid", "tid"):
            if key not in e:
                bad.append(f"event {i} has no {key!r}: {e}")
        if e.get("ph") != "M":
            ts = e.get("ts")
            if not isinstance(ts, (int, float)) or ts < 0:
                bad.append(f"event {i} has no valid ts: {e}")


def check_slices(t, bad):
    """B/E balance per track; one goroutine per P and per goroutine.
    Returns the goroutine runs on the Ms: {goid: [(begin, end, M track)]}."""
    stacks = collections.defaultdict(list)
    running_on = {}  # goid -> M track running it
    m_runs = collections.defaultdict(list)
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
                m_runs[b["args"]["goid"]].append((b["ts"], e["ts"], t.track(e)))
    for key, stack in stacks.items():
        for b in stack:
            bad.append(f"{t.names.get(key, key)}: {b['name']} never ends")
    if t.other.get("forced_ends"):
        bad.append(f"the writer closed {t.other['forced_ends']} slices by force")
    if t.other.get("dropped_events"):
        bad.append(f"{t.other['dropped_events']} events were dropped")
    return m_runs


def check_p_runs(t, bad, m_runs):
    """Every run on a P track is open, at its start, on the M it names."""
    for e in t.events:
        if e["ph"] != "B" or e.get("cat") != "goroutine" or \
                t.process.get(e["pid"]) != "Ps":
            continue
        args = e.get("args", {})
        if "m" not in args:
            bad.append(f"{t.track(e)}: G{args.get('goid')} at {e['ts']} "
                       f"names no M")
            continue
        m = "M" + str(args["m"])
        if not any(track == m and b <= e["ts"] <= end
                   for b, end, track in m_runs.get(args.get("goid"), [])):
            bad.append(f"{t.track(e)}: G{args.get('goid')} at {e['ts']} "
                       f"runs on {m}, which is not running it")


def check_goroutines(t, bad, m_runs):
    """Each goroutine's life: created once, runs after that, ends once,
    never runs after its end. Returns the ids created."""
    end_goid = goids_of_ends(t)
    created = {}  # goid -> ts
    ended = {}    # goid -> ts
    for e in t.events:
        args = e.get("args", {})
        goid = None
        if e["ph"] == "i" and e.get("cat") == "go":
            goid = args["goid"]
            if e["name"].startswith("go G"):
                if goid in created:
                    bad.append(f"G{goid} created twice")
                created[goid] = e["ts"]
                continue
            if "never started" not in e["name"]:
                continue
        elif e["ph"] == "E" and args.get("reason") == "exit" and \
                t.process.get(e["pid"]) == "Ms":
            goid = end_goid.get(id(e))
        if goid is None:
            continue
        if goid in ended:
            bad.append(f"G{goid} ends twice (at {ended[goid]} and {e['ts']})")
        ended[goid] = e["ts"]
    for g in sorted(set(created) - set(ended)):
        bad.append(f"G{g} was created and never ended")
    for g in sorted(set(ended) - set(created)):
        bad.append(f"G{g} ended but was never created")
    for g, runs in sorted(m_runs.items()):
        for b, end, track in runs:
            if g in created and b < created[g]:
                bad.append(f"G{g} runs on {track} at {b}, before its "
                           f"creation at {created[g]}")
            if g in ended and end > ended[g]:
                bad.append(f"G{g} runs on {track} at {b}, after its end at "
                           f"{ended[g]}")
    if 1 not in created:
        bad.append("no goroutine 1 (main) in the trace")
    if not m_runs:
        bad.append("no goroutine ever ran in the trace")
    if len(created) != t.other.get("goroutines_created"):
        bad.append(f"{len(created)} creations in the events, "
                   f"{t.other.get('goroutines_created')} in otherData")
    if len(ended) != t.other.get("goroutines_ended"):
        bad.append(f"{len(ended)} ends in the events, "
                   f"{t.other.get('goroutines_ended')} in otherData")
    return set(created)


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
    m_runs = check_slices(t, bad)
    check_p_runs(t, bad, m_runs)
    created = check_goroutines(t, bad, m_runs)
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
