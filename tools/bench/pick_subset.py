#!/usr/bin/env python3
"""Which candidates to keep from one ab_session.sh run, as the name of their subset's library.

usage: python3 tools/bench/pick_subset.py DIR LOG BASE CANDIDATE... [--gain G] [--worst W]

DIR holds ab_session.sh's NAME.TAG.ROUND.json files and LOG its output (the lines
"fuzz OPS, NAME: exit N"). Each CANDIDATE is kept when, over the workloads both it and BASE time
(medians over rounds), the geometric mean of BASE / CANDIDATE is at least 1 + G (default 0.005),
no workload is below W (default 0.97), and its fuzz run exited 0. Prints, per candidate, the
figures to stderr, and to stdout the name of the library holding the kept ones: `sub_` and one
bit per candidate in the order given (make_subsets.sh builds them), e.g. sub_0100; BASE where
none is kept. So one device call can time the candidates and go on to verify what it keeps.
"""
import argparse
import math
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import ab_compare  # noqa: E402  (beside this script)


class InputError(Exception):
    pass


def medians(folder, name, argument):
    """Workload -> median us over NAME's rounds (ab_compare.py's medians, without the ops)."""
    try:
        return {w: us for w, (_op, us) in ab_compare.medians(folder, name).items()}
    except ab_compare.InputError as e:
        message = str(e)
        if message.startswith("argument 'NAME'"):  # no file of NAME: say which argument named it
            message = f"argument '{argument}'" + message[len("argument 'NAME'"):]
        raise InputError(message)


def fuzz_exit(log, name):
    """The exit status of NAME's fuzz run in the log, or None where it has none."""
    found = re.findall(rf"^fuzz \S+, {re.escape(name)}: exit (\d+)$", log, re.MULTILINE)
    return int(found[-1]) if found else None


def judge(base, cand, fuzz, gain, worst):
    """(kept, geometric mean, lowest ratio, workloads) of one candidate."""
    ratios = [base[w] / us for w, us in cand.items() if w in base and us > 0 and base[w] > 0]
    if not ratios:
        return False, float("nan"), float("nan"), 0
    mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    low = min(ratios)
    return fuzz == 0 and mean >= 1.0 + gain and low >= worst, mean, low, len(ratios)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", metavar="DIR")
    parser.add_argument("log", metavar="LOG")
    parser.add_argument("base", metavar="BASE")
    parser.add_argument("candidates", metavar="CANDIDATE", nargs="+")
    parser.add_argument("--gain", type=float, default=0.005, help="least geometric-mean gain kept (default 0.005)")
    parser.add_argument("--worst", type=float, default=0.97, help="lowest BASE / CANDIDATE of a workload (default 0.97)")
    args = parser.parse_args(argv)
    if not 0.0 < args.worst <= 1.0:
        parser.error("argument --worst: must be in (0, 1]")
    try:
        folder = pathlib.Path(args.dir)
        if not folder.is_dir():
            raise InputError(f"argument 'DIR': {folder} is not a folder")
        try:
            log = pathlib.Path(args.log).read_text()
        except OSError as e:
            raise InputError(f"argument 'LOG': cannot read {args.log}: {e.strerror}")
        base = medians(folder, args.base, "BASE")
        bits = ""
        for name in args.candidates:
            cand = medians(folder, name, "CANDIDATE")
            fuzz = fuzz_exit(log, name)
            kept, mean, low, count = judge(base, cand, fuzz, args.gain, args.worst)
            bits += "1" if kept else "0"
            fuzz_text = "no fuzz run" if fuzz is None else f"fuzz exit {fuzz}"
            print(f"{name}: {count} workloads, {args.base} / {name} {mean:.4f}, lowest {low:.4f}, {fuzz_text}: "
                  f"{'kept' if kept else 'not kept'}", file=sys.stderr)
    except InputError as e:
        print(f"pick_subset: {e}", file=sys.stderr)
        return 2
    print(f"sub_{bits}" if "1" in bits else args.base)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
