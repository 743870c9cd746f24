#!/usr/bin/env python3
"""Recurrent problems that reach the FlashInfer shim's kernels, for a campaign over them: the suite's
own campaign draws d_state below 32 nearly always, which FlashInfer's kernels reject (SKIPPED). For
each line of configs.txt, problems of its dtypes, head_dim, d_state and tokens with serving options
drawn at random (slot tables, write slots, per-token tables, accepted tokens, packed rows, a padding
id, no store, per-token states, z, dt_bias, softplus), kept when ssd_suite.adapters.flashinfer maps
them onto FlashInfer's arguments; one problem string a line, for `ssd_suite fuzz --problems`.
    python3 tools/external/flashinfer/problems.py [--configs FILE] [--per-config 6] [--seed 1] > problems.txt
Needs the suite's Python package (PYTHONPATH=tools/python) and its C API."""
import argparse
import os
import random
import re
import sys

import ssd_suite
from ssd_suite.adapters import flashinfer as fi

HERE = os.path.dirname(os.path.abspath(__file__))


def configs(path):
    """(kind, state, input, weight, A, dim, dstate, ntokens) of each line of configs.txt."""
    for line in open(path):
        words = line.split("#")[0].split()
        if words:
            kind, state, io, weight, a, dim, dstate = words[:7]
            yield kind, state, io, weight, a, int(dim), int(dstate), int(words[7]) if kind == "mtp" else 0


def draw(rng, config, seed):
    """One problem string for a configuration (perhaps invalid: the caller asks Problem)."""
    kind, state, io, weight, a, dim, dstate, ntokens = config
    heads = rng.choice([1, 2, 4, 8])
    groups = rng.choice([g for g in (1, 2, 4, 8) if heads % g == 0])
    batch = rng.randint(1, 8)
    words = [f"recurrent:{io}", f"b{batch}", f"h{heads}", f"p{dim}", f"g{groups}", f"n{dstate}", "+tie"]
    words += [f for f in ("+dt_bias", "+softplus", "+z") if rng.random() < 0.6]
    options = []
    if rng.random() < 0.7:
        words.append("+sbi")
        if rng.random() < 0.4:
            words.append("+dst")
        if kind == "mtp" and rng.random() < 0.5:
            words.append("+spec")
            if rng.random() < 0.6:
                words.append("+accepted")
        options.append(f"slots={batch * 2 + 1}")
        if rng.random() < 0.4:
            options.append("pad=0")
    if kind == "mtp":
        words += [f for f in ("+varlen", "+nowrite", "+inter") if rng.random() < 0.3]
        options.append(f"tokens={ntokens}")
    elif rng.random() < 0.2:
        words.append("+nowrite")
    options.append(f"state={state}")
    if weight != "f32":
        options += [f"dt={weight}", f"dt_bias={weight}"]
    if a != "f32":
        options.append(f"A={a}")
    return " ".join(words + options + [f"seed={seed}"])


def valid(text):
    """The problem of `text`, with slots= raised to what it needs, or None."""
    problem = ssd_suite.Problem(text)
    if not problem.valid:
        need = re.search(r"slots must be at least (\d+)", problem.invalid_reason or "")
        if not need:
            return None
        problem = ssd_suite.Problem(re.sub(r"slots=\d+", f"slots={need.group(1)}", text))
    return problem if problem.valid else None


def reaches_flashinfer(problem):
    try:
        fi.arguments(problem, ssd_suite.inputs(problem))
    except NotImplementedError:
        return False
    return True


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configs", default=os.path.join(HERE, "configs.txt"))
    parser.add_argument("--per-config", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.per_config < 1:
        parser.error(f"argument --per-config: {args.per_config} is not positive")
    rng = random.Random(args.seed)
    for config in configs(args.configs):
        kept, tries = 0, 0
        while kept < args.per_config and tries < 50 * args.per_config:
            tries += 1
            problem = valid(draw(rng, config, rng.randint(1, 10 ** 6)))
            if problem is not None and reaches_flashinfer(problem):
                print(problem)
                kept += 1
        if kept < args.per_config:
            print(f"problems.py: only {kept} problems for {' '.join(map(str, config))}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
