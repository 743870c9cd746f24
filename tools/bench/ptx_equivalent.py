#!/usr/bin/env python3
"""Whether two PTX files hold the same kernels up to the names of their registers and labels.

usage: python3 tools/bench/ptx_equivalent.py OLD.ptx NEW.ptx [--ignore-names]

For a change meant to leave the kernels as they are (a helper pulled out, a template parameter
added): nvcc numbers PTX's virtual registers and labels in the order it emits them, so such a
change shows up in a plain diff although the instructions are the same. The functions (.entry and
.func) are paired in the order of the files; within a pair every line must match once registers
(%f12, %rd3, ...) and labels ($L__BB0_7) are renamed by one renaming in each direction.
Registers set to 0.0 by one block of moves (mov.f32 %fN, 0f00000000; or a copy of a register that
holds 0.0: zeroed accumulators) may be paired in any order, since they hold the same value, and a
move of 0.0 into a register that holds 0.0 already is left out. Left out too: comments, .loc and
.file lines, blank lines, and the part of an anonymous namespace's name that nvcc derives from the
source file's path. The functions' names must be the same unless --ignore-names (a kernel renamed
on purpose).

Prints one line per function pair and a last line `equivalent` or `NOT equivalent` (exit 0 or 1);
exit 2 on bad input. Same instructions in the same order over renamed registers: a check that a
change did not reach the code, not a proof that two different codes compute the same.
"""
import argparse
import re
import sys

FUNCTION = re.compile(r"^\s*(\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\b")
NAME = re.compile(r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)")
TOKEN = re.compile(r"%[a-z]+\d+\b|\$L__\w+")
ZERO_MOVE = re.compile(r"^\s*mov\.f(32|64)\s+(%fd?\d+),\s*(0f00000000|0d0000000000000000|%fd?\d+);$")
# nvcc names an anonymous namespace after the source file's path: the same file compiled from another
# folder gets another name.
ANONYMOUS = re.compile(r"_GLOBAL__N__[0-9a-f]{8}_")
LABEL = re.compile(r"^\s*\$?[\w$]+:")


class InputError(Exception):
    pass


def functions(path, argument):
    """The file's functions, each a list of its normalized lines (the header line first)."""
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        raise InputError(f"argument '{argument}': cannot read {path}: {e.strerror}")
    found, current = [], None
    for raw in text.splitlines():
        line = ANONYMOUS.sub("_GLOBAL__N__", raw.split("//", 1)[0].rstrip())
        if not line.strip() or re.match(r"^\s*\.(loc|file)\b", line):
            continue
        if FUNCTION.match(line):
            current = []
            found.append(current)
        if current is not None:
            current.append(line)
    if not found:
        raise InputError(f"argument '{argument}': {path} holds no .entry or .func: not PTX")
    return found


def zero_blocks(lines):
    """The moves of 0.0 that need no pairing, and per register the runs that set it to 0.0.

    A run is a block of consecutive moves of 0.0 (a zero constant, or a register known to hold 0.0)
    into registers that may hold anything: as a whole it sets a set of registers to 0.0, in whatever
    order. A move of 0.0 into a register known to hold 0.0 already (set so since the last label, with
    no line naming it since) changes nothing. Both are left out of the line-by-line pairing."""
    skip, member, known = set(), {}, set()
    run, in_run = 0, False
    for number, line in enumerate(lines):
        if LABEL.match(line):
            known, in_run = set(), False
            continue
        move = ZERO_MOVE.match(line)
        if move and (move.group(3).startswith("0") or move.group(3) in known):
            skip.add(number)
            if move.group(2) in known:
                continue  # a no-op, inside a run or not
            if not in_run:
                run, in_run = run + 1, True
            known.add(move.group(2))
            member.setdefault(move.group(2), set()).add(run)
            continue
        in_run = False
        known -= set(TOKEN.findall(line))  # written or read: no longer followed
    return skip, member


def run_sizes(member):
    """Registers set to 0.0 per run, in the order of the runs."""
    sizes = {}
    for runs in member.values():
        for run in runs:
            sizes[run] = sizes.get(run, 0) + 1
    return [sizes[run] for run in sorted(sizes)]


def function_name(header):
    match = NAME.search(header)
    return match.group(1) if match else header.strip()


def compare(old, new, ignore_names):
    """'' where the two functions match, else what differs first."""
    if not ignore_names and function_name(old[0]) != function_name(new[0]):
        return f"names differ: {function_name(old[0])} / {function_name(new[0])}"
    skip_old, zeros_old = zero_blocks(old)
    skip_new, zeros_new = zero_blocks(new)
    sizes_old, sizes_new = run_sizes(zeros_old), run_sizes(zeros_new)
    if sizes_old != sizes_new:
        return f"runs of moves of 0.0 differ: {sizes_old} / {sizes_new} registers"
    kept_old = [line for n, line in enumerate(old) if n not in skip_old]
    kept_new = [line for n, line in enumerate(new) if n not in skip_new]
    # The name (compared above) also names the parameters: ..._param_0.
    kept_new = [line.replace(function_name(new[0]), function_name(old[0])) for line in kept_new]
    if len(kept_old) != len(kept_new):
        return f"{len(kept_old)} / {len(kept_new)} lines"
    forward, backward = {}, {}
    for a, b in zip(kept_old, kept_new):
        ta, tb = TOKEN.findall(a), TOKEN.findall(b)
        if TOKEN.sub("%", a) != TOKEN.sub("%", b) or len(ta) != len(tb):
            return f"instructions differ: '{a.strip()}' / '{b.strip()}'"
        for x, y in zip(ta, tb):
            if forward.setdefault(x, y) != y or backward.setdefault(y, x) != x:
                return f"registers renamed two ways: '{a.strip()}' / '{b.strip()}'"
            if zeros_old.get(x, set()) != zeros_new.get(y, set()):
                return f"registers set to 0.0 in different runs paired: '{a.strip()}' / '{b.strip()}'"
    return ""


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", metavar="OLD.ptx")
    parser.add_argument("new", metavar="NEW.ptx")
    parser.add_argument("--ignore-names", action="store_true", help="pair functions whose names differ")
    args = parser.parse_args(argv)
    try:
        old, new = functions(args.old, "OLD.ptx"), functions(args.new, "NEW.ptx")
    except InputError as e:
        print(f"ptx_equivalent: {e}", file=sys.stderr)
        return 2
    same = len(old) == len(new)
    if not same:
        print(f"{len(old)} functions in OLD.ptx, {len(new)} in NEW.ptx")
    for a, b in zip(old, new):
        why = compare(a, b, args.ignore_names)
        same = same and not why
        print(f"{function_name(b[0])}: {why or 'same'}")
    print("equivalent" if same else "NOT equivalent")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
