#!/usr/bin/env python3
"""Compares kernel library variants timed by ab_session.sh: per workload the median over rounds.

usage: python3 tools/bench/ab_compare.py DIR BASE NAME [NAME ...]

DIR holds ssd-bench --json files named NAME.TAG.ROUND.json (ab_session.sh). Prints, per workload
BASE times, a Markdown row of every variant's median time and of BASE / NAME (above 1: NAME is
faster), then per op the geometric mean of BASE / NAME over the workloads both time and the
arithmetic means of their times there (the figure a target on an op's mean time, such as
MambaDiscretizeSegsum's, is set on).
"""
import argparse
import collections
import json
import math
import pathlib
import statistics
import sys


class InputError(Exception):
    pass


def medians(folder, name):
    """Workload -> (op, median us) over every NAME.*.*.json in folder."""
    times = collections.defaultdict(list)
    ops = {}
    files = sorted(f for f in folder.glob(f"{name}.*.json") if len(f.name.split(".")) == 4)
    if not files:
        raise InputError(f"argument 'NAME': no {name}.TAG.ROUND.json in {folder}")
    for f in files:
        try:
            rows = json.loads(f.read_text())["rows"]
            for row in rows:
                times[row["workload"]].append(float(row["us"]))
                ops[row["workload"]] = row["op"]
        except (ValueError, KeyError, TypeError) as e:
            raise InputError(f"argument 'DIR': {f} is not an ssd-bench --json file ({e})")
    return {w: (ops[w], statistics.median(v)) for w, v in times.items()}


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir")
    parser.add_argument("base")
    parser.add_argument("names", nargs="+")
    args = parser.parse_args(argv)
    folder = pathlib.Path(args.dir)
    if not folder.is_dir():
        raise InputError(f"argument 'DIR': {folder} is not a folder")
    base = medians(folder, args.base)
    variants = [(n, medians(folder, n)) for n in args.names]
    print("| op | workload | " + " | ".join([args.base] + args.names) + " | " +
          " | ".join(f"{args.base} / {n}" for n in args.names) + " |")
    print("|---|---|" + "---:|" * (1 + 2 * len(args.names)))
    pairs = collections.defaultdict(lambda: collections.defaultdict(list))  # op -> name -> [(base us, us)]
    for workload, (op, us) in base.items():
        cells, quotients = [f"{us:.2f}"], []
        for n, times in variants:
            other = times.get(workload)
            cells.append(f"{other[1]:.2f}" if other else "-")
            quotients.append(f"{us / other[1]:.3f}" if other else "-")
            if other:
                pairs[op][n].append((us, other[1]))
        print(f"| {op} | `{workload}` | " + " | ".join(cells + quotients) + " |")
    print()
    for op, per_name in pairs.items():
        print(f"{op}: " + ", ".join(
            f"{args.base} / {n} {geomean([b / t for b, t in v]):.3f} ({len(v)}), mean us "
            f"{statistics.mean(b for b, _ in v):.2f} / {statistics.mean(t for _, t in v):.2f}"
            for n, v in per_name.items()))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except InputError as e:
        print(f"ab_compare.py: {e}", file=sys.stderr)
        sys.exit(2)
