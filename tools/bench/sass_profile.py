#!/usr/bin/env python3
"""Where a kernel's instructions go, from Nsight Compute's SASS source page.

usage: python3 tools/bench/sass_profile.py PROFILE.csv [--runs N] [--opcodes N]

PROFILE.csv is what `ncu -i REPORT --page source --csv --print-source sass` prints for one kernel
(the report taken with --section SourceCounters). Prints, as markdown: the warp instructions
executed and the stall samples; the share of each opcode (the mnemonic before its first '.', the
predicate dropped) in both; the share of integer and address arithmetic; and the hottest runs of
consecutive instructions executed equally often (in straight-line code, one block of a loop body),
each with its address range, executions, length and commonest opcodes. Counting instructions this
way found the copy loops that were over half of chunk_scan's work (docs/performance.md).
"""
import argparse
import collections
import csv
import os
import sys

# Integer and address arithmetic: what index computations compile to.
INTEGER_OPCODES = {"IMAD", "IADD3", "IADD", "VIADD", "ISETP", "LEA", "SHF", "LOP3", "IABS", "SEL", "MOV", "PRMT",
                   "UIMAD", "UIADD3", "ULEA", "USHF", "ULOP3", "UISETP", "USEL", "UMOV", "I2F", "F2I"}
COUNT_COLUMN = "Instructions Executed"
SAMPLE_COLUMN = "Warp Stall Sampling (All Samples)"


class ProfileError(Exception):
    pass


def number(text):
    text = text.replace(",", "").strip()
    return int(float(text)) if text else 0


def opcode(source):
    words = source.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else ""


def read_rows(path):
    """(address, opcode, executions, samples) of every instruction, in address order."""
    try:
        with open(path, newline="") as f:
            lines = list(csv.reader(f))
    except OSError as e:
        raise ProfileError(f"argument 'PROFILE.csv': cannot read {path}: {e.strerror}")
    header_at = next((i for i, row in enumerate(lines) if row[:2] == ["Address", "Source"]), None)
    if header_at is None:
        raise ProfileError(f"argument 'PROFILE.csv': {path} has no 'Address,Source,...' header "
                           "(expected the output of ncu --page source --csv --print-source sass)")
    header = lines[header_at]
    for column in (COUNT_COLUMN, SAMPLE_COLUMN):
        if column not in header:
            raise ProfileError(f"argument 'PROFILE.csv': {path} has no column '{column}' "
                               "(take the report with --section SourceCounters)")
    count_at, sample_at, source_at = header.index(COUNT_COLUMN), header.index(SAMPLE_COLUMN), header.index("Source")
    rows = []
    for row in lines[header_at + 1:]:
        if len(row) <= max(count_at, sample_at) or not row[0].startswith("0x"):
            continue
        rows.append((row[0], opcode(row[source_at]), number(row[count_at]), number(row[sample_at])))
    if not rows:
        raise ProfileError(f"argument 'PROFILE.csv': {path} lists no instructions")
    return rows


def runs_of(rows):
    """Maximal runs of consecutive instructions with one execution count."""
    runs = []
    for address, op, executions, samples in rows:
        if runs and runs[-1]["executions"] == executions:
            run = runs[-1]
            run["last"] = address
        else:
            run = {"first": address, "last": address, "executions": executions, "ops": collections.Counter(),
                   "samples": 0}
            runs.append(run)
        run["ops"][op] += 1
        run["samples"] += samples
    for run in runs:
        run["instructions"] = run["executions"] * sum(run["ops"].values())
    return runs


def share(part, whole):
    return 100.0 * part / whole if whole else 0.0


def report(rows, top_runs, top_opcodes):
    total = sum(r[2] for r in rows)
    samples = sum(r[3] for r in rows)
    by_op, samples_by_op = collections.Counter(), collections.Counter()
    for _, op, executions, sampled in rows:
        by_op[op] += executions
        samples_by_op[op] += sampled
    integer = sum(n for op, n in by_op.items() if op in INTEGER_OPCODES)
    out = [f"{total:,} warp instructions executed, {samples:,} stall samples, {len(rows)} instructions in the "
           f"kernel; integer and address arithmetic {share(integer, total):.1f}% of the executed ones", "",
           "| opcode | % of instructions | % of samples |", "|---|---:|---:|"]
    for op, n in by_op.most_common(top_opcodes):
        out.append(f"| {op} | {share(n, total):.1f} | {share(samples_by_op[op], samples):.1f} |")
    out += ["", "| addresses | executions | instructions | % of instructions | % of samples | commonest opcodes |",
            "|---|---:|---:|---:|---:|---|"]
    for run in sorted(runs_of(rows), key=lambda r: -r["instructions"])[:top_runs]:
        ops = ", ".join(f"{op} {n}" for op, n in run["ops"].most_common(6))
        out.append(f"| {run['first']}-{run['last']} | {run['executions']:,} | {sum(run['ops'].values())} | "
                   f"{share(run['instructions'], total):.1f} | {share(run['samples'], samples):.1f} | {ops} |")
    return "\n".join(out)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", metavar="PROFILE.csv", help="ncu --page source --csv --print-source sass output")
    parser.add_argument("--runs", type=int, default=10, help="hottest runs to list (default 10)")
    parser.add_argument("--opcodes", type=int, default=14, help="opcodes to list (default 14)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.opcodes < 1:
        parser.error("argument --runs/--opcodes: must be at least 1")
    try:
        text = report(read_rows(args.profile), args.runs, args.opcodes)
    except ProfileError as e:
        print(f"sass_profile: {e}", file=sys.stderr)
        return 2
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:  # a reader such as `head` that stops early is not an error
        sys.stdout = open(os.devnull, "w")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
