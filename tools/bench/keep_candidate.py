#!/usr/bin/env python3
"""Whether a candidate kernel library is kept: no op slower than the last verified one.

usage: python3 tools/bench/keep_candidate.py BEFORE.json AFTER.json [--slower-by F]

BEFORE.json and AFTER.json are `ssd-bench --json` files of the last verified library and of the
candidate, timed in one device call. For every op, the geometric mean over its workloads of
before / after; the candidate is kept when every op's mean is at least 1 - F (F = 0.01: within
the 1% that back-to-back runs of one library differ by). Prints the table to stderr and the
decision, `candidate` or `before`, to stdout (fast_session.sh verify-start reads it).
"""
import argparse
import json
import math
import sys


class InputError(Exception):
    pass


def times(path, argument):
    try:
        with open(path) as f:
            rows = json.load(f)["rows"]
        return {row["workload"]: (row["op"], float(row["us"])) for row in rows}
    except OSError as e:
        raise InputError(f"argument '{argument}': cannot read {path}: {e.strerror}")
    except (ValueError, KeyError, TypeError) as e:
        raise InputError(f"argument '{argument}': {path} is not an ssd-bench --json file ({e})")


def op_speedups(before, after):
    """Geometric mean of before / after per op, over the workloads both files time."""
    logs = {}
    for workload, (op, us) in after.items():
        if workload in before and us > 0 and before[workload][1] > 0:
            logs.setdefault(op, []).append(math.log(before[workload][1] / us))
    return {op: math.exp(sum(v) / len(v)) for op, v in logs.items()}


def decide(speedups, slower_by):
    slow = {op: s for op, s in speedups.items() if s < 1.0 - slower_by}
    return ("before" if slow else "candidate"), slow


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", metavar="BEFORE.json")
    parser.add_argument("after", metavar="AFTER.json")
    parser.add_argument("--slower-by", type=float, default=0.01, help="allowed slowdown per op (default 0.01)")
    args = parser.parse_args(argv)
    if not 0.0 <= args.slower_by < 1.0:
        parser.error("argument --slower-by: must be in [0, 1)")
    try:
        speedups = op_speedups(times(args.before, "BEFORE.json"), times(args.after, "AFTER.json"))
        if not speedups:
            raise InputError("arguments 'BEFORE.json', 'AFTER.json': no workload is timed in both")
    except InputError as e:
        print(f"keep_candidate: {e}", file=sys.stderr)
        return 2
    decision, slow = decide(speedups, args.slower_by)
    for op, s in sorted(speedups.items()):
        print(f"{op}: before / after {s:.3f}{'  (slower)' if op in slow else ''}", file=sys.stderr)
    print(decision)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
