"""vLLM's Triton Mamba2 kernels (vllm/model_executor/layers/mamba/ops) through their public
functions: the contract's arguments mapped onto theirs, one function per op. The package is
imported on first use from $SSD_VLLM_PATH, a folder holding vllm/ with those op files and small
stand-ins for the rest of vLLM (upstream/vllm/ in a checkout, never committed; its SOURCES.txt
names each file's commit or stored version). Without it, torch or a CUDA device every case is
SKIPPED; what vLLM's interface cannot express raises NotImplementedError (SKIPPED, with the
contract section in the reason).

The vLLM sources (upstream/vllm/SOURCES.txt): ssd_combined.py, ssd_chunk_state.py, ssd_chunk_scan.py,
ssd_bmm.py (the chunk-aligned varlen generation of vLLM >= 0.11), ssd_state_passing.py (commit
5644fd862eb4), triton_helpers.py (commit 7e9ce8332e03) and the newest stored mamba_ssm.py
(selective_state_update with dst_state_batch_indices, null_block_id, out, num_accepted_tokens and
cu_seqlens). The ssd_* files and mamba_ssm.py share only `softplus`.

Ops and their differences from the contract:
- mamba2 (`+varlen`): mamba_chunk_scan_combined_varlen. It has no batch axis: the suite's [1,S,...]
  tensors are squeezed (the same memory). It takes the suite's cu_seqlens, cu_chunk_seqlens,
  chunk_seq_idx (its per-chunk seq_idx) and last_chunk_indices (contract §2.1, "Which upstream
  interface maps to which fields"). Per-sequence initial states go in as vLLM's caller builds them,
  where(has_initial_states, initial_states, 0). `out` is written in place into a tensor allocated
  here (x's dtype; tokens of a padding tail are in no chunk and stay 0: don't care). It returns
  varlen_states only; final_states is derived from them as §2.1 defines it. The states come back in
  state_dtype or C's dtype: `state=` maps onto state_dtype; without `state=` a 16-bit C would
  return varlen_states rounded to C's dtype where the contract stores f32, so state_dtype=f32 is
  passed (the entering states then finer than the rounding to C's dtype the contract grants). A non-varlen problem is expressible only as one sequence (b=1, no seq=): cu_seqlens
  [0,S] and its chunks. chunk_size must be a power of two (vLLM asserts it).
- the stage ops (chunk_cumsum, chunk_coupling, chunk_state, state_passing, chunk_scan) are not
  implemented: vLLM's stage functions take the chunk-aligned varlen layout (no batch axis,
  cu_chunk_seqlens, a per-chunk seq_idx) and the [nchunks,...] state layout, where the contract's
  stage ops are batched on the global chunk grid with a per-token seq_idx (§3-§7).
- recurrent: selective_state_update, which updates the state buffer in place (the contract's `state`
  output is the whole buffer after the call, here a clone of the input) and writes `out` in place
  into a tensor allocated here. Multi-token rows (tokens=T) are passed packed, [Bt*T,...] with
  cu_seqlens = 0,T,2T,... (vLLM's varlen decode layout); +varlen passes the suite's cu_seqlens.
  `pad=` is null_block_id. vLLM recognises only null_block_id as padding, the contract every
  negative entry too: negative table entries are passed as the padding id (the same meaning).
  +spec is vLLM's speculative mode, which it enters only with num_accepted_tokens: without
  +accepted all ones are passed (every row continues from column 0, as the contract says).
  D and dt_bias are required arguments in this version: absent, zeros are passed (adding 0).
  +tie passes A, dt and dt_bias (and D) as stride-0 views, as vLLM's Mamba2 layer calls it.
  SKIPPED: +nowrite and +inter (no disable_state_update, no intermediate-state output in this
  function: §8.1), and tables whose meaning vLLM's kernel does not share (§8.1): a non-speculative
  row that reads a slot but writes to the padding id (vLLM would store to that id), a speculative
  padding row with a real write entry (vLLM stores states computed from zeros there).

Input views: an input the problem lays out (layout=zxbcdt, layout=strided, +far) reaches vLLM as a
strided CUDA view of its layout's buffer (_torch.Tensors), as vLLM's Mamba2 layer passes the split
of its in_proj output. The slot tables it rewrites (negative entries as null_block_id) go in laid
out as the inputs were (Tensors.laid_out). It copies only where vLLM's interface leaves no view to
pass: a [Bt,T,...] decode input whose rows are not T tokens apart (packed into vLLM's one token
axis). What it builds itself is dense: a non-varlen mamba2's tables, and with +varlen +init the
initial states where(has_initial_states, initial_states, 0), as vLLM's layer builds them.

Dot products: Triton's tl.dot takes f32 operands as TF32 unless TRITON_F32_DEFAULT=ieee; f32_dots
declares which (as in mamba_ssm.py). vLLM's kernels autotune per new shape."""
import sys
import types

import numpy as np

from ._torch import Tensors, asked_for, device_tensor, f32_dots_of_triton, library, padding_as, torch, torch_dtype
from ._torch import device_healthy  # noqa: F401 - asked by a worker process after an error

name = "vllm"
PATH_VARIABLE = "SSD_VLLM_PATH"
f32_dots = f32_dots_of_triton()
# vLLM's mamba2 call with a new chunk layout compiles five Triton kernels: on an H200
# running a campaign's twelve processes such a call took longer than the default 60 s (docs/external-kernels.md).
call_seconds = 300


def _stand_ins():
    """mamba_ssm.py imports `regex` and `pathvalidate` (vLLM requirements) only to name its tuned
    config files; where they are not installed, stand-ins with the two functions it uses."""
    try:
        import regex  # noqa: F401
    except ImportError:
        import re
        sys.modules.setdefault("regex", re)
    try:
        import pathvalidate  # noqa: F401
    except ImportError:
        module = types.ModuleType("pathvalidate")
        module.sanitize_filename = lambda text: "".join(c for c in str(text) if c not in '\\/:*?"<>|')
        sys.modules.setdefault("pathvalidate", module)


def _ops(module):
    torch()  # no torch or CUDA device: SKIPPED before anything is imported
    _stand_ins()
    return library(f"vllm.model_executor.layers.mamba.ops.{module}", PATH_VARIABLE)


def mamba2(problem, inputs):
    """Mamba2Fwd: mamba_chunk_scan_combined_varlen (vLLM >= 0.11)."""
    q = problem.chunk_size
    if not (isinstance(q, int) and q > 0 and q & (q - 1) == 0):
        raise NotImplementedError(f"vLLM's chunk scan takes power-of-two chunk sizes only, not Q={q} (contract §2.1)")
    state = problem.option("state")
    if state is None and inputs.dtypes["C"] != "f32":
        # Without state= the contract stores varlen_states in f32 and lets the entering states be
        # rounded to C's dtype (a granted rounding point, §1.7); vLLM stores both in state_dtype or
        # C's dtype. Asking for f32 states (a cache dtype vLLM's callers use) meets the contract: the
        # entering states are then kept finer than granted.
        state = "f32"
    initial_dtype, state_or_c = inputs.dtypes.get("initial_states"), state or inputs.dtypes["C"]
    if initial_dtype is not None and initial_dtype != state_or_c:
        # Its chunk scan loads the entering state from initial_states or from the states, one pointer
        # either way: Triton refuses to compile two pointer types (in vLLM both are the cache dtype).
        raise NotImplementedError(f"vLLM's chunk scan needs initial_states in the state dtype ({state_or_c}), "
                                  f"not {initial_dtype}: Triton rejects the kernel otherwise (docs/external-kernels.md)")
    x_shape = inputs["x"].shape  # [1,S,H,P]
    S = x_shape[1]
    t = Tensors(inputs)
    if "varlen" in problem.flags:
        cu = inputs["cu_seqlens"]
        # The suite's own tables, passed as the problem lays them out (views under layout=strided).
        tables = {k: t[k] for k in ("cu_seqlens", "cu_chunk_seqlens", "chunk_seq_idx", "last_chunk_indices")}
    else:
        if x_shape[0] != 1 or "seq_idx" in inputs:
            raise NotImplementedError("vLLM's chunk scan has no batch axis and no per-token seq_idx: only "
                                      "one sequence (b=1, no seq=) maps onto it (contract §2.1)")
        cu = np.array([0, S], dtype=np.int32)
        bounds = np.append(np.arange(0, S, q), S).astype(np.int32)
        tables = {"cu_seqlens": cu, "cu_chunk_seqlens": bounds,
                  "chunk_seq_idx": np.zeros(len(bounds) - 1, dtype=np.int32),
                  "last_chunk_indices": np.array([len(bounds) - 2], dtype=np.int32)}
        tables = {k: device_tensor(v) for k, v in tables.items()}
    tt = torch()
    initial = t["initial_states"]
    if initial is not None and t["has_initial_states"] is not None:
        # What vLLM's Mamba2 layer passes: where(has_initial_states, ssm_state[idx], 0).
        initial = tt.where(t["has_initial_states"][:, None, None, None] != 0, initial, tt.zeros_like(initial))
    x = t["x"][0]
    out = tt.zeros_like(x)  # written in place; padding-tail tokens are in no chunk (don't care)
    z = t["z"][0] if t["z"] is not None else None
    combined = _ops("ssd_combined")
    varlen_states = combined.mamba_chunk_scan_combined_varlen(
        x, t["dt"][0], t["A"], t["B"][0], t["C"][0], q,
        cu_seqlens=tables["cu_seqlens"], cu_chunk_seqlens=tables["cu_chunk_seqlens"],
        last_chunk_indices=tables["last_chunk_indices"], seq_idx=tables["chunk_seq_idx"],
        out=out, D=t["D"], z=z, dt_bias=t["dt_bias"], initial_states=initial,
        dt_softplus="softplus" in problem.flags, dt_limit=problem.dt_limit,
        state_dtype=torch_dtype(state) if state else None)
    # final_states per contract §2.1: the state at the end of the row, varlen_states[nseq-1] when
    # the row has no padding, exactly 0 after a padding tail (tokens past cu_seqlens[-1]).
    if int(cu[-1]) < S:
        final = tt.zeros_like(varlen_states[-1:])
    else:
        final = varlen_states[-1:]
    produced = {"out": out.unsqueeze(0), "final_states": final, "varlen_states": varlen_states}
    return asked_for(inputs, produced)


# The stage ops (chunk_cumsum, chunk_coupling, chunk_state, state_passing, chunk_scan) are not
# implemented: vLLM's stage functions take the chunk-aligned varlen layout (no batch axis,
# cu_chunk_seqlens, a per-chunk seq_idx), the contract's the batched global chunk grid (§3-§7).


def recurrent(problem, inputs):
    """SSDRecurrentFwd (contract §8, §8.1): selective_state_update with vLLM's serving arguments."""
    for flag, what in (("nowrite", "disable_state_update"), ("inter", "intermediate-state output")):
        if flag in problem.flags:
            raise NotImplementedError(f"vLLM's selective_state_update has no {what} (+{flag}, contract §8.1)")
    pad = int(problem.values["pad"])
    reads = inputs.get("state_batch_indices")
    writes = inputs.get("dst_state_batch_indices")
    accepted = inputs.get("num_accepted_tokens")

    # vLLM's null_block_id only; rewritten tables are passed below laid out as the inputs are.
    reads, writes = padding_as(reads, pad), padding_as(writes, pad)
    per_token = reads is not None and reads.ndim == 2
    if reads is not None:
        write_table = writes if writes is not None else reads
        rows = np.arange(reads.shape[0])
        if per_token:
            column = np.maximum(accepted.astype(np.int64) - 1, 0) if accepted is not None else np.zeros_like(rows)
            padding = reads[rows, column] == pad
            if np.any(padding & np.any(write_table != pad, axis=1)):
                raise NotImplementedError("vLLM stores a speculative padding row's states to its real write "
                                          "entries, the contract stores nothing (contract §8.1)")
        elif np.any((reads != pad) & (write_table == pad)):
            raise NotImplementedError("vLLM stores a row whose write entry is the padding id to that id, the "
                                      "contract skips the store (contract §8.1)")
    tt = torch()
    if not hasattr(getattr(tt, "accelerator", None), "device_index"):
        raise NotImplementedError("this vLLM selective_state_update needs torch.accelerator.device_index "
                                  f"(torch {tt.__version__} lacks it)")
    t = Tensors(inputs)
    h, p, n = inputs["A"].shape
    g = inputs["B"].shape[-2]
    tokens = problem.values["tokens"] or 0
    # vLLM takes the tokens on one axis: reshape keeps a view where the rows are T tokens apart
    # (every zxbcdt layout, a single token per row) and copies where they are not (layout=strided
    # padding the token axis of a [Bt,T,...] input), which one stride cannot express.
    x = t["x"].reshape(-1, h, p)
    dt = t["dt"].reshape(-1, h, p)
    B, C = t["B"].reshape(-1, g, n), t["C"].reshape(-1, g, n)
    z = t["z"].reshape(-1, h, p) if t["z"] is not None else None
    A = t["A"]
    f32 = torch_dtype("f32")
    dt_bias = t["dt_bias"] if t["dt_bias"] is not None else tt.zeros((h, p), dtype=f32, device="cuda")
    D = t["D"] if t["D"] is not None else tt.zeros((h, p), dtype=f32, device="cuda")
    if "tie" in problem.flags:
        A = A[:, :1, :1].expand(h, p, n)
        dt = dt[:, :, :1].expand(dt.shape)
        dt_bias = dt_bias[:, :1].expand(h, p)
    if "varlen" in problem.flags:
        cu_seqlens = t["cu_seqlens"]
    elif tokens:
        rows = inputs["x"].shape[0]
        cu_seqlens = device_tensor(np.arange(rows + 1, dtype=np.int32) * tokens)
    else:
        cu_seqlens = None
    if accepted is not None:
        accepted = t["num_accepted_tokens"]
    elif per_token:
        # vLLM's speculative mode (a state stored per token) needs num_accepted_tokens: all ones
        # continue every row from column 0, the contract's read without +accepted.
        accepted = device_tensor(np.ones(reads.shape[0], dtype=np.int32))
    state = t["state"].clone()
    out = tt.empty_like(x)
    update = _ops("mamba_ssm").selective_state_update
    update(state, x, dt, A, B, C, D, dt_bias, z=z, dt_softplus="softplus" in problem.flags,
           state_batch_indices=t.laid_out("state_batch_indices", reads) if reads is not None else None,
           dst_state_batch_indices=t.laid_out("dst_state_batch_indices", writes) if writes is not None else None,
           null_block_id=pad, out=out,
           num_accepted_tokens=accepted,
           cu_seqlens=cu_seqlens)
    return {"out": out.reshape(t["x"].shape), "state": state}
