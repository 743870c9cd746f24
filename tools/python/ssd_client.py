#!/usr/bin/env python3
"""An outside implementation of two SSD ops (chunk_cumsum, chunk_coupling) in numpy, checked through
case files: reads kind=inputs files written by `ssd-golden export`, computes the ops in fp32 as
docs/contract.md describes, and writes kind=results files for `ssd-golden check` (docs/case-files.md).

It doubles as the worked example of "test a kernel written in Python": replace the two compute_*
functions by calls into your kernel. --wrong plants a bug (an off-by-one cumsum, a transposed CB)
to show that the check catches it.

    python3 tools/python/ssd_client.py INPUTS.h5... --out DIR [--wrong]
"""
import argparse
import hashlib
import math
import os
import sys
import tempfile

import h5py
import numpy as np

FORMAT = "ssd-case"
FORMAT_VERSION = 1


class CaseError(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Encodings: f32 as float32; bf16 and f16 as uint16 bit patterns; i32 as int32 (all little-endian).

def bf16_bits_from_f32(x):
    """Round float32 values to bf16 (round to nearest, ties to even); returns the uint16 bits."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    u = x.view(np.uint32)
    bias = ((u >> np.uint32(16)) & np.uint32(1)) + np.uint32(0x7FFF)
    bits = ((u + bias) >> np.uint32(16)).astype(np.uint16)
    bits[np.isnan(x)] = np.uint16(0x7FC0)  # the carry of the bias must not turn a NaN into Inf
    return bits


def f32_from_bf16_bits(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def round_to(dtype, x):
    """Rounds float32 values to `dtype` and returns them as float32 (exactly representable)."""
    x = np.asarray(x, dtype=np.float32)
    if dtype == "f32":
        return x
    if dtype == "f16":
        return x.astype(np.float16).astype(np.float32)  # numpy's cast rounds to nearest even
    if dtype == "bf16":
        return f32_from_bf16_bits(bf16_bits_from_f32(x))
    raise CaseError("cannot round to " + dtype)


def decode(dataset):
    """A dataset's values as float32 (int32 for i32) after checking its SHA-256."""
    raw = dataset[()]
    little = np.ascontiguousarray(raw.astype(raw.dtype.newbyteorder("<")))
    stored = text(dataset.attrs["sha256"])
    if hashlib.sha256(little.tobytes()).hexdigest() != stored.lower():
        raise CaseError(dataset.name + ": SHA-256 mismatch")
    dtype = text(dataset.attrs["dtype"])
    if dtype == "f32":
        return raw.astype(np.float32), dtype
    if dtype == "bf16":
        return f32_from_bf16_bits(raw), dtype
    if dtype == "f16":
        return raw.astype(np.uint16).view(np.float16).astype(np.float32), dtype
    if dtype == "i32":
        return raw.astype(np.int32), dtype
    raise CaseError(dataset.name + ": unknown dtype " + dtype)


def encode(values, dtype):
    """float32 values (already computed) to the stored array of `dtype`."""
    values = np.asarray(values, dtype=np.float32)
    if dtype == "f32":
        return values.astype("<f4")
    if dtype == "bf16":
        return bf16_bits_from_f32(values).astype("<u2")
    if dtype == "f16":
        return values.astype(np.float16).view(np.uint16).astype("<u2")
    raise CaseError("cannot store " + dtype)


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


# ---------------------------------------------------------------------------------------------
# The problem string: only what these two ops need (docs/problem-string.md).

def parse_problem(line):
    tokens = line.split()
    op, primary = tokens[0].split(":")
    p = {"op": op, "dtype": primary, "sizes": {}, "flags": set(), "keys": {}}
    for token in tokens[1:]:
        if token.startswith("+"):
            p["flags"].add(token[1:])
        elif "=" in token:
            key, value = token.split("=", 1)
            p["keys"][key] = value
        else:
            p["sizes"][token[0]] = int(token[1:])
    return p


def dt_limit(p):
    if "limit" not in p["keys"]:
        return 0.0, math.inf
    lo, hi = p["keys"]["limit"].split(",")
    return float(lo), float(hi)


# ---------------------------------------------------------------------------------------------
# The two ops, in fp32 (docs/contract.md sections 3 and 4).

def compute_chunk_cumsum(p, inputs, wrong):
    dt, A = inputs["dt"][0], inputs["A"][0]
    batch, seqlen, heads = dt.shape
    q = p["sizes"]["q"]
    chunks = -(-seqlen // q)
    v = dt.astype(np.float32)
    if "dt_bias" in inputs:
        v = v + inputs["dt_bias"][0][None, None, :]
    if "softplus" in p["flags"]:
        with np.errstate(over="ignore"):
            v = np.where(v > np.float32(20), v, np.log1p(np.exp(v))).astype(np.float32)
    lo, hi = dt_limit(p)
    v = np.minimum(np.maximum(v, np.float32(lo)), np.float32(hi))
    # [b,s,h] -> [b,h,NC,Q], zero in the padded tail (after the clamp).
    padded = np.zeros((batch, chunks * q, heads), dtype=np.float32)
    padded[:, :seqlen, :] = v
    dt_out = padded.reshape(batch, chunks, q, heads).transpose(0, 3, 1, 2).copy()
    dA = dt_out * A[None, :, None, None]
    dA_cumsum = np.cumsum(dA, axis=3, dtype=np.float32)
    if wrong:  # planted bug: an exclusive cumsum (off by one position)
        dA_cumsum = np.concatenate([np.zeros_like(dA_cumsum[..., :1]), dA_cumsum[..., :-1]], axis=3)
    return {"dA_cumsum": (dA_cumsum, "f32"), "dt_out": (dt_out, "f32")}


def common_operand_dtype(a, b):
    if "bf16" in (a, b):
        return "bf16"
    if "f16" in (a, b):
        return "f16"
    return "f32"


def compute_chunk_coupling(p, inputs, wrong):
    (C, c_dtype), (B, b_dtype) = inputs["C"], inputs["B"]
    batch, seqlen, groups, n = C.shape
    q = p["sizes"]["q"]
    chunks = -(-seqlen // q)
    operand = common_operand_dtype(c_dtype, b_dtype)
    C, B = round_to(operand, C), round_to(operand, B)
    Cp = np.zeros((batch, chunks * q, groups, n), dtype=np.float32)
    Bp = np.zeros_like(Cp)
    Cp[:, :seqlen], Bp[:, :seqlen] = C, B  # zero rows: the padded tail's entries come out 0
    Cc = Cp.reshape(batch, chunks, q, groups, n)
    Bc = Bp.reshape(batch, chunks, q, groups, n)
    cb = np.einsum("bcign,bcjgn->bcgij", Cc, Bc, dtype=np.float32)
    if "seq_idx" in inputs:
        seq = np.full((batch, chunks * q), np.iinfo(np.int32).min, dtype=np.int64)
        seq[:, :seqlen] = inputs["seq_idx"][0]
        s = seq.reshape(batch, chunks, q)
        cb = cb * (s[:, :, None, :, None] == s[:, :, None, None, :])
    if "causal" in p["flags"]:
        cb = np.tril(cb)  # entries above the diagonal are undefined; write zeros
    if wrong:  # planted bug: CB transposed (B's tokens as rows)
        cb = np.swapaxes(cb, -1, -2)
    out_dtype = p["keys"].get("out", c_dtype)
    return {"CB": (np.ascontiguousarray(cb, dtype=np.float32), out_dtype)}


OPS = {"chunk_cumsum": compute_chunk_cumsum, "chunk_coupling": compute_chunk_coupling}


# ---------------------------------------------------------------------------------------------
# Files.

def write_results(source, path, outputs):
    """A kind=results file: the attributes and /inputs of `source`, plus /outputs."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".tmp-", dir=directory)
    os.close(fd)
    try:
        with h5py.File(tmp, "w", track_order=False) as f:
            for name in ("format", "format_version", "problem", "contract_version", "generator_version",
                         "oracle_version"):
                value = source.attrs[name]
                f.attrs[name] = text(value) if isinstance(value, (bytes, str)) else value
            f.attrs["kind"] = "results"
            source.copy(source["inputs"], f, name="inputs")  # the exact stored inputs, checksums included
            group = f.create_group("outputs")
            for name, (values, dtype) in outputs.items():
                stored = encode(values, dtype)
                dataset = group.create_dataset(name, data=stored)
                dataset.attrs["dtype"] = dtype
                dataset.attrs["sha256"] = hashlib.sha256(np.ascontiguousarray(stored).tobytes()).hexdigest()
        os.replace(tmp, path)  # atomic: a crash never leaves half a results file
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def run_case(path, out_dir, wrong):
    with h5py.File(path, "r") as source:
        if text(source.attrs.get("format", b"")) != FORMAT:
            raise CaseError("not an ssd case file")
        if int(source.attrs["format_version"]) != FORMAT_VERSION:
            raise CaseError("unsupported format_version")
        if text(source.attrs["kind"]) != "inputs":
            raise CaseError("expected kind=inputs, found " + text(source.attrs["kind"]))
        problem = text(source.attrs["problem"])
        p = parse_problem(problem)
        if p["op"] not in OPS:
            print(f"skipped {path}: {p['op']} is not implemented here", file=sys.stderr)
            return None
        inputs = {name: decode(dataset) for name, dataset in source["inputs"].items()}
        outputs = OPS[p["op"]](p, inputs, wrong)
        target = os.path.join(out_dir, os.path.basename(path))
        write_results(source, target, outputs)
        return target, problem


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="+", help="kind=inputs case files (ssd-golden export)")
    parser.add_argument("--out", required=True, help="directory for the kind=results files")
    parser.add_argument("--wrong", action="store_true", help="plant a bug in both ops")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for path in args.inputs:
        try:
            done = run_case(path, args.out, args.wrong)
        except (CaseError, OSError, KeyError, ValueError) as e:
            print(f"ssd_client: {path}: {e}", file=sys.stderr)
            return 2
        if done:
            print(f"{done[0]}  {done[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
