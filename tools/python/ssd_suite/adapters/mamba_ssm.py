"""mamba_ssm's Triton SSD kernels (state-spaces/mamba, mamba_ssm/ops/triton) through their public
forward functions: the contract's arguments mapped onto theirs, one function per op. The package is
imported on first use, from $SSD_MAMBA_SSM_PATH (a folder holding mamba_ssm/) or the installed one;
without it, torch or a CUDA device every case is SKIPPED. What mamba_ssm's interface cannot express
(serving decode, per-sequence initial states, discretize_segsum) raises NotImplementedError: SKIPPED.

Input views: an input the problem lays out (layout=zxbcdt, layout=strided, +far) reaches the
functions as a strided CUDA view of its layout's buffer (_torch.Tensors), as a Mamba2 layer hands
them the split of its in_proj output; nothing here makes it contiguous. Where a function copies a
view itself (x, B, C without a unit inner stride; cu_seqlens) that is its own way of honoring it.

Dot products: Triton's tl.dot takes f32 operands as TF32 unless TRITON_F32_DEFAULT=ieee, and the
adapter declares exactly that (f32_dots), so f32 cases are judged with the bounds of the mode the
kernels really ran in. MAMBA_DETERMINISTIC=1 (mamba_ssm's switch) skips autotuning per new shape."""
import os

from ._torch import Tensors, asked_for, f32_dots_of_triton, library, torch_dtype
from ._torch import device_healthy  # noqa: F401 - asked by a worker process after an error
from ._torch import torch as torch_module

name = "mamba_ssm"
PATH_VARIABLE = "SSD_MAMBA_SSM_PATH"
f32_dots = f32_dots_of_triton()
# mamba_ssm compiles each new specialization of its Triton kernels during the call; as
# for vLLM, 60 s is too short for that on a loaded host (docs/external-kernels.md).
call_seconds = 300


def _ops(module):
    return library(f"mamba_ssm.ops.triton.{module}", PATH_VARIABLE)


def _softplus_and_limit(problem):
    return {"dt_softplus": "softplus" in problem.flags, "dt_limit": problem.dt_limit}


def mamba2(problem, inputs):
    """Mamba2Fwd: _mamba_chunk_scan_combined_fwd (what mamba_chunk_scan_combined runs forward), with
    cu_seqlens for the varlen states and state_dtype for state=."""
    t = Tensors(inputs)
    initial = t["initial_states"]
    cu_seqlens = None
    if "varlen" in problem.flags:
        cu_seqlens = t["cu_seqlens"]
        flags = inputs.get("has_initial_states")
        if initial is not None:
            # Its initial_states reach only the row's leading sequence (contract §2.1): one
            # that only sequence 0 uses is expressible, per-sequence initial states are not.
            uses = [bool(f) for f in flags] if flags is not None else [True] * initial.shape[0]
            if any(uses[1:]):
                raise NotImplementedError("mamba_ssm has no per-sequence initial states (contract §2.1)")
            initial = initial[:1] if uses[0] else None
    state = problem.option("state")
    if cu_seqlens is not None and state is None and inputs.dtypes["C"] != "f32":
        # Without state= the contract stores varlen_states in f32 and grants rounding the entering
        # states to C's dtype (§1.7); mamba_ssm stores both in state_dtype or C's dtype. f32 states
        # meet the contract (the entering states kept finer than granted).
        state = "f32"
    combined = _ops("ssd_combined")
    results = combined._mamba_chunk_scan_combined_fwd(
        t["x"], t["dt"], t["A"], t["B"], t["C"], problem.chunk_size, D=t["D"], z=t["z"], dt_bias=t["dt_bias"],
        initial_states=initial, seq_idx=t["seq_idx"], cu_seqlens=cu_seqlens,
        state_dtype=torch_dtype(state) if state else None, **_softplus_and_limit(problem))
    produced = {"out": results[0], "final_states": results[5]}
    if cu_seqlens is not None:
        produced["varlen_states"] = results[6]
    return asked_for(inputs, produced)


def chunk_cumsum(problem, inputs):
    t = Tensors(inputs)
    dA_cumsum, dt_out = _ops("ssd_chunk_state")._chunk_cumsum_fwd(
        t["dt"], t["A"], problem.chunk_size, dt_bias=t["dt_bias"], **_softplus_and_limit(problem))
    return {"dA_cumsum": dA_cumsum, "dt_out": dt_out}


def chunk_coupling(problem, inputs):
    t = Tensors(inputs)
    out_dtype = torch_dtype(inputs.outputs["CB"][0])
    cb = _ops("ssd_bmm")._bmm_chunk_fwd(t["C"], t["B"], problem.chunk_size, seq_idx=t["seq_idx"],
                                        causal="causal" in problem.flags, output_dtype=out_dtype)
    return {"CB": cb}


def chunk_state(problem, inputs):
    """The states are stored straight into a tensor of the contract's dtype (its `states=`
    argument): states_in_fp32=False would store them in B's dtype instead."""
    t = Tensors(inputs)
    dtype, shape = inputs.outputs["states"]
    states = torch_module().empty(shape, dtype=torch_dtype(dtype), device="cuda")
    states = _ops("ssd_chunk_state")._chunk_state_fwd(t["B"], t["x"], t["dt"], t["dA_cumsum"], seq_idx=t["seq_idx"],
                                                      states=states)
    return {"states": states}


def state_passing(problem, inputs):
    t = Tensors(inputs)
    out, final_states = _ops("ssd_state_passing")._state_passing_fwd(
        t["states"], t["dA_chunk_cumsum"], initial_states=t["initial_states"], seq_idx=t["seq_idx"],
        chunk_size=problem.chunk_size, out_dtype=torch_dtype(inputs.outputs["out"][0]))
    return {"out": out, "final_states": final_states}


def chunk_scan(problem, inputs):
    t = Tensors(inputs)
    out, out_x = _ops("ssd_chunk_scan")._chunk_scan_fwd(t["cb"], t["x"], t["dt"], t["dA_cumsum"], t["C"], t["states"],
                                                        D=t["D"], z=t["z"], seq_idx=t["seq_idx"])
    return asked_for(inputs, {"out": out, "out_x": out_x})


# The serving decode step of contract §8.1 is beyond mamba_ssm's selective_state_update.
_SERVING = ("dst", "spec", "accepted", "nowrite", "inter", "varlen")


def recurrent(problem, inputs):
    """SSDRecurrentFwd: selective_state_update, which updates the state in place (the state buffer
    after the call is the contract's `state`). +tie passes A, dt and dt_bias as stride-0 views
    along head_dim and d_state, as Mamba2 layers call it (its tie_hdim path; D stays [H,P]).

    Known bug (docs/external-kernels.md): at the commit judged, a call without dt_bias or without D
    raises TypeError (`*(D.stride(0), D.stride(1)) if D is not None else 0` unpacks the int 0), and
    tied A and dt without dt_bias raise AttributeError (tie_hdim reads dt_bias.stride). With
    SSD_MAMBA_SSM_WORKAROUNDS=1 zeros stand in for an absent D and dt_bias (adding 0 is exact), so
    that a campaign gets past it to what else the kernel does."""
    serving = [f for f in _SERVING if f in problem.flags]
    if serving or problem.values["tokens"] or problem.values["pad"] != -1:
        raise NotImplementedError("mamba_ssm's selective_state_update has no serving decode step "
                                  f"({', '.join('+' + f for f in serving) or 'tokens= / pad='})")
    t = Tensors(inputs)
    state = t["state"].clone()
    A, dt, dt_bias, D = t["A"], t["dt"], t["dt_bias"], t["D"]
    if "tie" in problem.flags:
        h, p, n = A.shape
        A = A[:, :1, :1].expand(h, p, n)
        dt = dt[:, :, :1].expand(dt.shape)
        dt_bias = dt_bias[:, :1].expand(h, p) if dt_bias is not None else None
    if os.environ.get("SSD_MAMBA_SSM_WORKAROUNDS") == "1":
        h, p = t["x"].shape[-2:]
        zeros = torch_module().zeros((h, p), dtype=torch_dtype("f32"), device="cuda")
        dt_bias = dt_bias if dt_bias is not None else (zeros[:, :1].expand(h, p) if "tie" in problem.flags else zeros)
        D = D if D is not None else zeros
    update = library("mamba_ssm.ops.triton.selective_state_update", PATH_VARIABLE).selective_state_update
    out = update(state, t["x"], dt, A, t["B"], t["C"], D=D, z=t["z"], dt_bias=dt_bias,
                 dt_softplus="softplus" in problem.flags, state_batch_indices=t["state_batch_indices"])
    return {"out": out, "state": state}
