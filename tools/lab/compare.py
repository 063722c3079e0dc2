#!/usr/bin/env python3
"""Prints a lab's benchmark against the reference, row by row.

Usage: compare.py REFERENCE.json YOURS.json (Google Benchmark's JSON output
of the same stages_bench filter, the reference build's and the lab's).
Time per item is 1e9 / items_per_second; the ratio is yours / reference
(below 1: yours is faster). One run each: a ratio within 10% of 1 is noise
on a shared machine; run it again before you trust it.
"""
import json
import sys


def per_item(path):
    with open(path) as f:
        doc = json.load(f)
    out = {}
    for b in doc.get("benchmarks", []):
        ips = b.get("items_per_second")
        if ips:
            out[b["name"].replace("/real_time", "")] = 1e9 / ips
    return out


def fmt(ns):
    return f"{ns / 1000:.2f} us" if ns >= 1000 else f"{ns:.0f} ns"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    ref, yours = per_item(sys.argv[1]), per_item(sys.argv[2])
    names = [n for n in ref if n in yours]
    if not names:
        sys.exit("compare.py: no benchmark in both runs")
    width = max(len(n) for n in names)
    print(f"{'workload':<{width}}  {'reference':>10}  {'yours':>10}  ratio")
    for n in names:
        print(f"{n:<{width}}  {fmt(ref[n]):>10}  {fmt(yours[n]):>10}  "
              f"{yours[n] / ref[n]:.2f}x")


if __name__ == "__main__":
    main()
