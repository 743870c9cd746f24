#!/usr/bin/env python3
"""Times mamba_ssm's Triton SSD kernels on the suite's benchmark workloads, as ssd-bench times ours.

Method (spec/workloads.md): one CUDA graph holding 20 back-to-back calls, replayed; the median replay
time divided by 20 (no L2 flush). Inputs follow the workloads' fill rules (fill=bench) in the same
dtypes as ssd-bench's. Writes a JSON object problem string -> us per call, which
`ssd-bench --against FILE` reads; the file is rewritten after every workload, so a run cut short
still leaves what it measured.

    python3 tools/bench/time_mamba_ssm.py --mamba DIR --out mamba_ssm.json [--ops chunk_scan,...]

DIR holds the mamba_ssm package (only mamba_ssm/ops/triton/ssd_*.py, selective_state_update.py,
softplus.py, layernorm_gated.py, k_activations.py and mamba_ssm/utils/{determinism,torch}.py are
needed; an empty mamba_ssm/__init__.py avoids importing its CUDA extensions). Autotuning runs as in
production (MAMBA_DETERMINISTIC unset); the warm-up calls trigger it before capture.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time
import types

WORKLOADS = [
    "mamba2:bf16 b1 s2048 h80 p64 g1 n128 q256 +softplus fill=bench seed=0",
    "mamba2:f16 b1 s8192 h64 p64 g1 n128 q256 +softplus fill=bench seed=0",
    "mamba2:bf16 b1 s2048 h80 p64 g1 n128 q256 +softplus +init fill=bench seed=0",
    "mamba2:f16 b1 s8192 h64 p64 g1 n128 q256 +softplus +init fill=bench seed=0",
    "mamba2:bf16 b1 s2048 h80 p64 g1 n128 q256 +dt_bias +softplus fill=bench seed=0",
    "mamba2:f16 b1 s8192 h64 p64 g1 n128 q256 +dt_bias +softplus fill=bench seed=0",
    "mamba2:bf16 b1 s2048 h80 p64 g1 n128 q256 +dt_bias +softplus +init fill=bench seed=0",
    "mamba2:f16 b1 s8192 h64 p64 g1 n128 q256 +dt_bias +softplus +init fill=bench seed=0",
    "chunk_cumsum:f16 b1 s4096 h48 q256 +softplus fill=bench seed=0",
    "chunk_cumsum:bf16 b8 s2048 h64 q256 +softplus fill=bench seed=0",
    "chunk_cumsum:f16 b1 s4096 h48 q256 +dt_bias +softplus fill=bench seed=0",
    "chunk_cumsum:bf16 b8 s2048 h64 q256 +dt_bias +softplus fill=bench seed=0",
    "chunk_cumsum:f16 b2 s32768 h80 q256 +dt_bias +softplus fill=bench seed=0",
    "chunk_coupling:f16 b1 s4096 g1 n128 q256 fill=bench seed=0",
    "chunk_coupling:bf16 b4 s2048 g1 n128 q256 fill=bench seed=0",
    "chunk_coupling:f16 b3 s3072 g8 n128 q256 fill=bench seed=0",
    "chunk_state:f16 b1 s4096 h48 p64 g1 n128 q256 fill=bench seed=0",
    "chunk_state:bf16 b1 s4096 h48 p64 g1 n128 q256 fill=bench seed=0",
    "chunk_state:bf16 b4 s2048 h80 p64 g1 n128 q256 fill=bench seed=0",
    "chunk_state:f16 b1 s4096 h48 p64 g1 n128 q256 seq=rand fill=bench seed=0",
    "chunk_state:bf16 b1 s4096 h48 p64 g1 n128 q256 seq=rand fill=bench seed=0",
    "chunk_state:f16 b2 s32768 h64 p64 g1 n128 q256 seq=rand fill=bench seed=0",
    "state_passing:f16 b1 s4096 q256 h64 d128 fill=bench seed=0",
    "state_passing:bf16 b1 s4096 q256 h64 d128 fill=bench seed=0",
    "state_passing:f16 b2 s32768 q256 h80 d128 fill=bench seed=0",
    "state_passing:f16 b1 s4096 q256 h64 d128 +init fill=bench seed=0",
    "state_passing:bf16 b1 s4096 q256 h64 d128 +init fill=bench seed=0",
    "state_passing:f32 b1 s4096 q256 h64 d8192 +init fill=bench seed=0",
    "chunk_scan:f16 b1 s4096 h48 p64 g1 n128 q256 fill=bench seed=0",
    "chunk_scan:bf16 b1 s4096 h48 p64 g1 n128 q256 fill=bench seed=0",
    "chunk_scan:bf16 b4 s2048 h80 p64 g1 n128 q256 fill=bench seed=0",
    "chunk_scan:f16 b2 s32768 h64 p64 g1 n128 q256 fill=bench seed=0",
    "recurrent:f16 b1 h64 p64 g1 n128 +dt_bias +Dhp fill=bench seed=0",
    "recurrent:bf16 b1 h64 p64 g1 n128 +dt_bias +Dhp fill=bench seed=0",
    "recurrent:f16 b8 h80 p64 g1 n128 +dt_bias +Dhp fill=bench seed=0",
    "recurrent:f16 b32 h48 p64 g1 n128 +dt_bias +Dhp fill=bench seed=0",
]


def parse(problem):
    """'op:dtype b1 s2048 ... +flag key=value' -> (op, dtype, dims, flags, options)."""
    head, *tokens = problem.split()
    op, dtype = head.split(":")
    dims, flags, options = {}, set(), {}
    for t in tokens:
        if t.startswith("+"):
            flags.add(t[1:])
        elif "=" in t:
            k, v = t.split("=", 1)
            options[k] = v
        else:
            dims[t[0]] = int(t[1:])
    return op, dtype, dims, flags, options


def install_einops_shim():
    """The forward paths use only two reshapes of einops; stand in for it where it is not installed."""
    try:
        import einops  # noqa: F401
        return
    except ImportError:
        pass
    shim = types.ModuleType("einops")

    def rearrange(t, pattern, **sizes):
        if pattern == "... p n -> ... (p n)":
            return t.reshape(*t.shape[:-2], -1)
        if pattern == "... (p n) -> ... p n":
            return t.reshape(*t.shape[:-1], -1, sizes["n"])
        raise NotImplementedError(pattern)

    def repeat(*_args, **_kwargs):
        raise NotImplementedError("einops.repeat")

    shim.rearrange, shim.repeat = rearrange, repeat
    sys.modules["einops"] = shim


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mamba", required=True, help="folder that holds the mamba_ssm package")
    ap.add_argument("--out", required=True, help="JSON file to write (problem string -> us per call)")
    ap.add_argument("--ops", default="", help="comma-separated ops (default: all)")
    ap.add_argument("--replays", type=int, default=100)
    ap.add_argument("--max-seconds", type=float, default=3.0, help="cap on replay time per workload")
    args = ap.parse_args()
    sys.path.insert(0, args.mamba)
    install_einops_shim()
    import torch
    from mamba_ssm.ops.triton.ssd_bmm import _bmm_chunk_fwd
    from mamba_ssm.ops.triton.ssd_chunk_scan import _chunk_scan_fwd
    from mamba_ssm.ops.triton.ssd_chunk_state import _chunk_cumsum_fwd, _chunk_state_fwd
    from mamba_ssm.ops.triton.ssd_combined import _mamba_chunk_scan_combined_fwd
    from mamba_ssm.ops.triton.ssd_state_passing import _state_passing_fwd
    from mamba_ssm.ops.triton.selective_state_update import selective_state_update

    dev = torch.device("cuda")
    dtypes = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    gen = torch.Generator(device=dev)
    gen.manual_seed(0)

    def normal(shape, dtype):
        return torch.randn(*shape, generator=gen, device=dev, dtype=torch.float32).to(dtype)

    def uniform(shape, lo, hi, dtype=torch.float32):
        return (torch.rand(*shape, generator=gen, device=dev, dtype=torch.float32) * (hi - lo) + lo).to(dtype)

    def chunk_dt(b, h, nc, q):
        return uniform((b, h, nc, q), 0.0, 0.1)

    def chunk_cumsum(b, h, nc, q):  # monotone: cumsum of -U(0, 0.05)
        return torch.cumsum(-uniform((b, h, nc, q), 0.0, 0.05), dim=-1)

    def seq_idx(b, s):  # sorted ids, about 4 sequences per row
        cuts = torch.sort(torch.randint(1, s, (b, 3), generator=gen, device=dev), dim=1).values
        pos = torch.arange(s, device=dev).expand(b, s)
        return (pos.unsqueeze(-1) >= cuts.unsqueeze(1)).sum(-1).to(torch.int32).contiguous()

    def make_call(problem):
        op, dt_name, d, flags, opt = parse(problem)
        dtype = dtypes[dt_name]
        b, q = d.get("b", 1), d.get("q", 256)
        s, h, p, g, n = d.get("s", 0), d.get("h", 1), d.get("p", 1), d.get("g", 1), d.get("n", 1)
        nc = (s + q - 1) // q if s else 0
        if op == "mamba2":
            x, B, C = normal((b, s, h, p), dtype), normal((b, s, g, n), dtype), normal((b, s, g, n), dtype)
            dt = uniform((b, s, h), -3, -1)
            A = -torch.exp(uniform((h,), 0, 3))
            bias = uniform((h,), 0, 1) if "dt_bias" in flags else None
            init = normal((b, h, p, n), torch.float32) if "init" in flags else None
            return lambda: _mamba_chunk_scan_combined_fwd(x, dt, A, B, C, q, dt_bias=bias, initial_states=init,
                                                          dt_softplus=True, dt_limit=(0.0, float("inf")))
        if op == "chunk_cumsum":
            dt = uniform((b, s, h), -3, -1, dtype)
            A = -torch.exp(uniform((h,), 0, 3))
            bias = uniform((h,), 0, 1) if "dt_bias" in flags else None
            return lambda: _chunk_cumsum_fwd(dt, A, q, dt_bias=bias, dt_softplus=True, dt_limit=(0.0, float("inf")))
        if op == "chunk_coupling":
            C, B = normal((b, s, g, n), dtype), normal((b, s, g, n), dtype)
            return lambda: _bmm_chunk_fwd(C, B, q, causal=False, output_dtype=dtype)
        if op == "chunk_state":
            x, B = normal((b, s, h, p), dtype), normal((b, s, g, n), dtype)
            dt, dA = chunk_dt(b, h, nc, q), chunk_cumsum(b, h, nc, q)
            seq = seq_idx(b, s) if opt.get("seq") else None
            return lambda: _chunk_state_fwd(B, x, dt, dA, seq_idx=seq, states_in_fp32=True)
        if op == "state_passing":
            width = d["d"]
            states = normal((b, nc, h, width), dtype)
            dA_chunk = uniform((b, h, nc), -2, 0)
            init = normal((b, h, width), torch.float32) if "init" in flags else None
            return lambda: _state_passing_fwd(states, dA_chunk, initial_states=init, chunk_size=q)
        if op == "chunk_scan":
            cb = normal((b, nc, g, q, q), dtype)
            x, C = normal((b, s, h, p), dtype), normal((b, s, g, n), dtype)
            dt, dA = chunk_dt(b, h, nc, q), chunk_cumsum(b, h, nc, q)
            prev = normal((b, nc, h, p, n), torch.float32)
            return lambda: _chunk_scan_fwd(cb, x, dt, dA, C, prev)
        if op == "recurrent":
            state = normal((b, h, p, n), torch.float32)
            x = normal((b, h, p), dtype)
            dt = uniform((b, h, p), 0, 0.1)
            A = uniform((h, p, n), -1, 0)
            B, C = normal((b, g, n), dtype), normal((b, g, n), dtype)
            D = normal((h, p), torch.float32)
            bias = uniform((h, p), 0, 1)
            return lambda: selective_state_update(state, x, dt, A, B, C, D=D, dt_bias=bias, dt_softplus=False)
        raise ValueError(op)

    ops = set(filter(None, args.ops.split(",")))
    results = {"_device": torch.cuda.get_device_name(), "_torch": torch.__version__,
               "_method": "CUDA graph of 20 calls, median over replays / 20, no L2 flush"}
    stream = torch.cuda.Stream()
    for problem in WORKLOADS:
        if ops and parse(problem)[0] not in ops:
            continue
        started = time.time()
        call = make_call(problem)
        with torch.cuda.stream(stream):
            for _ in range(3):  # autotuning and compilation happen here, outside the graph
                call()
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            for _ in range(20):
                call()
        torch.cuda.synchronize()
        times = []
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.time()
        for r in range(args.replays):
            begin.record(stream)
            with torch.cuda.stream(stream):
                graph.replay()
            end.record(stream)
            end.synchronize()
            times.append(begin.elapsed_time(end))
            if time.time() - t0 > args.max_seconds and r >= 4:
                break
        del graph
        us = 1e3 * sorted(times)[len(times) // 2] / 20
        results[problem] = round(us, 3)
        print(f"{us:10.2f} us  {len(times):4d} replays  ({time.time() - started:5.1f} s)  {problem}", flush=True)
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
