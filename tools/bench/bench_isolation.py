#!/usr/bin/env python3
"""What a Python campaign's worker process costs per case (docs/python.md, "Isolation"): the numpy
reference adapter fuzzed with isolation "process" and "none" in turn, the same seed, ops and
duration each round; prints cases/s, CPU µs per case (the worker's included) and the difference
per case, as the median over the rounds.

    PYTHONPATH=tools/python python3 tools/bench/bench_isolation.py [--seconds 15] [--rounds 3]
        [--ops chunk_cumsum,recurrent] [--large 0.05] [--seed 1]
"""
import argparse
import io
import resource
import statistics
import time

import ssd_suite


def cpu_seconds():
    """CPU time of this process and of its children that have ended (a campaign's worker, once closed)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def campaign(isolation, args):
    """(cases, campaign seconds, CPU seconds) of one campaign of the numpy reference."""
    cpu = cpu_seconds()
    result = ssd_suite.fuzz("ssd_suite.adapters.numpy_ref", ops=args.ops.split(","), time=args.seconds,
                            seed=args.seed, large=args.large, out=io.StringIO(), progress=False, dump=None,
                            isolation=isolation)
    cases = sum(t.cases for t in result.tallies.values())
    # A SUSPECT case costs nothing more than any other (it is not shrunk); a failure would be
    # shrunk, and its shrinking timed as cases.
    if any(f.judgement.failed for f in result.failures):
        raise SystemExit(f"the numpy reference failed with isolation {isolation}: {result.summary()[1]}")
    return cases, result.seconds, cpu_seconds() - cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="seconds per campaign")
    parser.add_argument("--rounds", type=int, default=3, help="campaigns per mode, the modes interleaved")
    parser.add_argument("--ops", default="chunk_cumsum,recurrent")
    parser.add_argument("--large", type=float, default=0.05, help="fraction of large shapes (ssd-fuzz's default)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    runs = {"process": [], "none": []}
    for _ in range(args.rounds):
        for isolation in runs:
            runs[isolation].append(campaign(isolation, args))
    print(f"numpy_ref, ops {args.ops}, seed {args.seed}, large {args.large:g}, {args.seconds:g} s x {args.rounds} "
          f"rounds ({time.strftime('%Y-%m-%d')})\n")
    print("| isolation | cases (median) | cases/s (median) | CPU µs per case |")
    print("|---|---:|---:|---:|")
    rate, cpu = {}, {}
    for isolation, done in runs.items():
        rate[isolation] = statistics.median(cases / seconds for cases, seconds, _ in done)
        cpu[isolation] = statistics.median(1e6 * used / cases for cases, _, used in done)
        print(f"| {isolation} | {statistics.median(c for c, _, _ in done):.0f} | {rate[isolation]:.0f} | "
              f"{cpu[isolation]:.0f} |")
    extra = 1e6 / rate["process"] - 1e6 / rate["none"]
    print(f"\nthe worker costs {100 * (1 - rate['process'] / rate['none']):.1f} % of the rate: {extra:.0f} µs of wall "
          f"time and {cpu['process'] - cpu['none']:.0f} µs of CPU per case")


if __name__ == "__main__":
    main()
