"""FlashInfer's Mamba decode step (flashinfer.mamba.selective_state_update, CUDA kernels compiled on
first use) through its public function: the contract's recurrent op and its serving arguments
(§8, §8.1) mapped onto FlashInfer's. The package is imported on first use, from $SSD_FLASHINFER_PATH
(a folder holding flashinfer/, such as a source checkout) or the installed one; without it every
case is SKIPPED with a reason naming it, and so is every case without torch or a CUDA device. What
FlashInfer's interface cannot express raises NotImplementedError (SKIPPED, with the reason).

With $SSD_FLASHINFER_SHIM (a libflashinfer-ssu-shim.so of tools/external/flashinfer/build.sh:
FlashInfer's kernels compiled from its headers, for hosts where its package cannot run) the function
called is tools/external/flashinfer/flashinfer_shim.py's selective_state_update, FlashInfer's wrapper
over that library, in place of flashinfer.mamba's; everything below is the same. A kernel the shim
has not built (dtypes, head_dim, d_state, tokens) is SKIPPED, naming it.

The interface followed is that of flashinfer-ai/flashinfer at commit fb28d7242b35 (2026-08-22):
flashinfer/mamba/selective_state_update.py, its checks in csrc/selective_state_update.cu and its
kernels in include/flashinfer/mamba/:

    selective_state_update(state, x, dt, A, B, C, D, z=None, dt_bias=None, dt_softplus=False,
        state_batch_indices=None, pad_slot_id=-1, state_scale=None, out=None,
        disable_state_update=False, intermediate_states_buffer=None, intermediate_state_indices=None,
        intermediate_state_scales=None, rand_seed=None, philox_rounds=10, cache_steps=0,
        algorithm="auto", dst_state_batch_indices=None, cu_seqlens=None, num_accepted_tokens=None,
        backend="auto") -> out

How the contract's arguments map (arguments() builds the call on the host, run() makes the call):
- state: a copy, updated in place; the contract's `state` output is the whole buffer after the call.
  `out` is written in place into a tensor allocated here. x, B, C and z go as they are: one-token
  rows [Bt,...] (its single-token kernel), tokens=T rows [Bt,T,...] with cache_steps=T (its
  multi-token kernel), +varlen the packed [tokens,...] rows with cu_seqlens and cache_steps=T (its
  max_seqlen).
- A, dt, dt_bias and D: FlashInfer takes one value per head (and token) only: csrc checks A's
  strides (1,0,0), dt.stride(-1) == 0 and strides (1,0) for D and dt_bias. They are passed as
  stride-0 views of per-head vectors, as Mamba2 layers call it; a case whose values vary along the
  tied axes is SKIPPED: A, dt and dt_bias without +tie, and D with +Dhp (drawn per (h, p): the
  contract has no per-head D, §8). D is required: without +Dhp, zeros (adding 0 is exact).
- dtypes: FlashInfer requires B, C, z (and out) in x's dtype and D, dt_bias in dt's dtype. A group
  whose contract dtypes differ is passed in f32 (widening f16 and bf16 is exact); out is then f32,
  which the judge rounds to x's dtype as the store would. state=f16/bf16 is the state's dtype.
- state_batch_indices, dst_state_batch_indices (int32): FlashInfer recognises padding by equality
  with pad_slot_id, the contract every negative entry too: those are passed as the padding id (the
  same meaning). pad= is pad_slot_id.
- +spec: the [Bt,T] tables. FlashInfer stores a state per token only to dst_state_batch_indices
  (without it, the last one to the read slot), so without +dst (and +nowrite) the read table goes
  as the write table too, as the contract defines it. +accepted: num_accepted_tokens.
- +nowrite: disable_state_update=True. +inter: intermediate_states_buffer [Bt,T,H,P,N] in the
  state's dtype, with intermediate_state_indices 0..Bt-1 (without them FlashInfer indexes the
  buffer by the read slot); with +nowrite +dst the write table, which then stores nothing, is left
  out (FlashInfer takes it or the buffer, not both).
- never passed: state_scale and intermediate_state_scales (an int16 state has no contract dtype),
  rand_seed (stochastic rounding of f16 states: the contract rounds to nearest), backend.
  algorithm: $SSD_FLASHINFER_ALGORITHM (simple, vertical or horizontal) when set, else its "auto".

SKIPPED besides the untied layout:
- a one-token call (not +nowrite) whose row reads a slot but has the padding id as its write entry: the
  single-token kernel skips a store only when the read entry is pad_slot_id, and would store to
  that id (contract §8.1: no store);
- +inter with write slots that are stored (+dst or +spec without +nowrite): FlashInfer takes
  dst_state_batch_indices or intermediate_states_buffer, not both (it raises ValueError);
- sizes its kernels reject (_rejected_sizes);
- an argument this FlashInfer's function does not have (an older release).

Read in the source, not run (docs/external-kernels.md): the multi-token kernel that "auto" picks on
Hopper stores no state to the cache when it is given intermediate_states_buffer, and stores to
dst_state_batch_indices despite disable_state_update. The adapter passes both as the contract and
FlashInfer's docstring say; such cases would be FAILED, not SKIPPED.

Dot products: none (CUDA FMAs), so f32_dots is "ieee"; the recurrent op has no dot-product bounds."""
import functools
import importlib.util
import inspect
import os
import sys

import numpy as np

from ._torch import device_tensor, library, padding_as
from ._torch import device_healthy  # noqa: F401 - asked by a worker process after an error

name = "flashinfer"
PATH_VARIABLE = "SSD_FLASHINFER_PATH"
SHIM_VARIABLE = "SSD_FLASHINFER_SHIM"
# The shim's Python wrapper: in the checkout, else beside the library.
SHIM_MODULE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, os.pardir,
                           "external", "flashinfer", "flashinfer_shim.py")
ALGORITHM_VARIABLE = "SSD_FLASHINFER_ALGORITHM"
ALGORITHMS = ("auto", "simple", "vertical", "horizontal")
f32_dots = "ieee"

# The contract's outputs and the arguments FlashInfer writes them into.
OUTPUTS = {"out": "out", "state": "state", "intermediate_states": "intermediate_states_buffer"}

# Per role FlashInfer reads one value per head: how many trailing axes it ties, what csrc checks,
# and how the contract's problem gets such values.
_PER_HEAD = {"A": (2, "one A per head (A strides (1, 0, 0))", "head_dim and d_state", "+tie ties it"),
             "dt": (1, "one dt per token and head (dt.stride(-1) == 0)", "head_dim", "+tie ties it"),
             "dt_bias": (1, "one dt_bias per head (dt_bias strides (1, 0))", "head_dim", "+tie ties it"),
             "D": (1, "one D per head (D strides (1, 0))", "head_dim",
                   "+Dhp draws it per (h, p); the contract has no per-head D, §8")}
_BYTES = {"f32": 4, "f16": 2, "bf16": 2}


class Host:
    """One tensor argument on the host: `array` for a tensor of contract dtype `dtype`; with
    `expand_to`, a stride-0 view of it over that shape's extra trailing axes (FlashInfer's per-head
    layout), which the device tensor must keep: a copy would not pass FlashInfer's stride checks."""

    def __init__(self, array, dtype, expand_to=None):
        self.array, self.dtype, self.expand_to = np.ascontiguousarray(array), dtype, expand_to

    def __repr__(self):
        view = f" expanded to {self.expand_to}" if self.expand_to is not None else ""
        return f"Host({self.dtype} {self.array.shape}{view})"


def shim_module(library_path):
    """tools/external/flashinfer/flashinfer_shim.py, imported once (as flashinfer_shim)."""
    if "flashinfer_shim" in sys.modules:
        return sys.modules["flashinfer_shim"]
    candidates = [os.path.normpath(SHIM_MODULE), os.path.join(os.path.dirname(library_path), "flashinfer_shim.py")]
    found = next((c for c in candidates if os.path.isfile(c)), None)
    if found is None:
        raise NotImplementedError(f"{SHIM_VARIABLE}={library_path} is set, but flashinfer_shim.py is in none of "
                                  f"{', '.join(candidates)}")
    spec = importlib.util.spec_from_file_location("flashinfer_shim", found)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["flashinfer_shim"] = module
    return module


def selective_state_update():
    """FlashInfer's function, imported on first use: a FlashInfer that is not importable makes the
    case SKIPPED with that reason. With $SSD_FLASHINFER_SHIM, the shim's in its place."""
    shim = os.environ.get(SHIM_VARIABLE)
    if shim:
        module = shim_module(shim)
        return functools.partial(module.selective_state_update, library=module.load(shim))
    module = library("flashinfer.mamba", PATH_VARIABLE)
    update = getattr(module, "selective_state_update", None)
    if update is None:
        where = getattr(module, "__file__", "?")
        raise NotImplementedError(f"this flashinfer.mamba ({where}) has no selective_state_update")
    return update


def _per_head(inputs, role, dtype):
    """`role`'s values with the axes FlashInfer ties dropped, to be expanded back as a stride-0 view."""
    tied, takes, along, how = _PER_HEAD[role]
    values = inputs[role]
    head = values[(Ellipsis,) + (0,) * tied]
    if not np.all(values == head.reshape(head.shape + (1,) * tied)):
        raise NotImplementedError(f"FlashInfer's selective_state_update takes {takes}, checked in "
                                  f"csrc/selective_state_update.cu: this {role} varies along {along} ({how})")
    return Host(head, dtype, expand_to=values.shape)


def _shared_dtype(inputs, roles):
    """The dtype of a group of roles that FlashInfer requires to share one: theirs when the
    contract's agree, else f32 (f16 and bf16 values widen to f32 exactly)."""
    dtypes = {inputs.dtypes[role] for role in roles if role in inputs}
    return dtypes.pop() if len(dtypes) == 1 else "f32"


def _rejected_sizes(problem, inputs, io_dtype):
    """Why FlashInfer's kernels (at fb28d72) reject this case's sizes, or None. Each is a check of
    theirs or a template that does not compile, so such a case would only report FlashInfer's error."""
    h, p, n = inputs["A"].shape
    g = inputs["B"].shape[-2]
    tokens = problem.values["tokens"] or 0
    row_tokens = tokens if tokens and "varlen" not in problem.flags else 1  # tokens per batch stride
    if n < 32:
        return (f"d_state {n}: its kernels load the state in vectors of d_state/32 elements, which do not "
                "compile below 32 (getVectorLoadSizeForFullUtilization, include/flashinfer/mamba/common.cuh)")
    vector = min(16 // _BYTES[inputs.dtypes["state"]], n // 32)
    if p * n % vector:
        return f"head_dim*d_state {p * n} is no whole number of its {vector}-element state vectors (state head stride)"
    for what, elements in (("x and z", row_tokens * h * p), ("B and C", row_tokens * g * n)):
        if elements * _BYTES[io_dtype] % 16:
            return (f"a row of {what} ({elements} {io_dtype} elements) is no whole number of 16-byte vectors "
                    "(its batch stride must be aligned to 16 bytes)")
    if tokens:
        if n % 8:
            return f"d_state {n}: its multi-token kernel needs a multiple of 8 (DSTATE divisible by lanesPerRow)"
        if _BYTES[inputs.dtypes["state"]] == 2 and n < 64:
            return (f"d_state {n} with a 16-bit state: its multi-token kernel's per-lane tiles (d_state/8 values, "
                    "8 a tile) are zero-sized below 64 and do not compile")
        if p < 32 or p % 16:
            return (f"head_dim {p}: its multi-token kernel needs a multiple of 16 and at least 32 (rows of 16 "
                    "per pass, out stored in vectors of head_dim/32)")
        ratio = h // g
        if ratio > 64 or ratio & (ratio - 1):
            return f"nheads/ngroups {ratio}: its multi-token kernel is instantiated for 1, 2, 4, ..., 64 only"
    return None


def _algorithm():
    """$SSD_FLASHINFER_ALGORITHM: one of FlashInfer's kernels instead of its own choice ("auto"),
    so that a campaign can judge each of them."""
    value = os.environ.get(ALGORITHM_VARIABLE, "auto")
    if value not in ALGORITHMS:
        raise ValueError(f"{ALGORITHM_VARIABLE}={value}: expected one of {', '.join(ALGORITHMS)}")
    return value


def arguments(problem, inputs):
    """The call of selective_state_update for a case, on the host: {argument: Host or plain value},
    only the arguments the case uses (an older FlashInfer may lack the others). NotImplementedError
    for what FlashInfer cannot express."""
    flags = problem.flags
    tokens = problem.values["tokens"] or 0
    pad = int(problem.values["pad"])
    nowrite = "nowrite" in flags
    reads = padding_as(inputs.get("state_batch_indices"), pad)
    writes = padding_as(inputs.get("dst_state_batch_indices"), pad)
    if not tokens and reads is not None and not nowrite:
        stored = writes if writes is not None else reads
        if np.any((reads != pad) & (stored == pad)):
            raise NotImplementedError("FlashInfer's single-token kernel skips a store only when the read entry is "
                                      "pad_slot_id: a row that reads a slot and has the padding id as its write "
                                      "entry would store to that id, the contract skips the store (contract §8.1)")
    if reads is not None and reads.ndim == 2 and writes is None and not nowrite:
        writes = reads  # +spec stores token t's state to column t of the read table (§8.1)
    if "inter" in flags and writes is not None:
        if not nowrite:
            raise NotImplementedError("FlashInfer takes dst_state_batch_indices or intermediate_states_buffer, not "
                                      "both (ValueError): +inter with stored write slots (+dst or +spec) is beyond it")
        writes = None  # +nowrite stores nothing: the write table changes nothing
    io = _shared_dtype(inputs, ("x", "B", "C", "z"))
    weight = _shared_dtype(inputs, ("dt", "D", "dt_bias"))
    reason = _rejected_sizes(problem, inputs, io)
    if reason:
        raise NotImplementedError(f"FlashInfer's selective_state_update rejects these sizes: {reason}")
    h, p, _ = inputs["A"].shape
    call = {"state": Host(inputs["state"], inputs.dtypes["state"]),
            "x": Host(inputs["x"], io),
            "dt": _per_head(inputs, "dt", weight),
            "A": _per_head(inputs, "A", inputs.dtypes["A"]),
            "B": Host(inputs["B"], io),
            "C": Host(inputs["C"], io),
            # D is required; without +Dhp zeros (adding 0), in dt's dtype as FlashInfer requires.
            "D": _per_head(inputs, "D", weight) if "D" in inputs else Host(np.zeros(h, np.float32), weight, (h, p)),
            "dt_softplus": "softplus" in flags,
            "pad_slot_id": pad,
            "out": Host(np.zeros(inputs["x"].shape, np.float32), io)}
    if "z" in inputs:
        call["z"] = Host(inputs["z"], io)
    if "dt_bias" in inputs:
        call["dt_bias"] = _per_head(inputs, "dt_bias", weight)
    if reads is not None:
        call["state_batch_indices"] = Host(reads, "i32")
    if writes is not None:
        call["dst_state_batch_indices"] = Host(writes, "i32")
    if "num_accepted_tokens" in inputs:
        call["num_accepted_tokens"] = Host(inputs["num_accepted_tokens"], "i32")
    if "varlen" in flags:
        call["cu_seqlens"] = Host(inputs["cu_seqlens"], "i32")
    if tokens:
        call["cache_steps"] = tokens
    if nowrite:
        call["disable_state_update"] = True
    if "inter" in flags:
        dtype, shape = inputs.outputs["intermediate_states"]
        call["intermediate_states_buffer"] = Host(np.zeros(shape, np.float32), dtype)
        call["intermediate_state_indices"] = Host(np.arange(shape[0], dtype=np.int32), "i32")
    algorithm = _algorithm()
    if algorithm != "auto":
        call["algorithm"] = algorithm
    return call


def _check_signature(update, call):
    """An argument the call needs that this FlashInfer's function lacks makes the case SKIPPED."""
    try:
        parameters = inspect.signature(update).parameters
    except (TypeError, ValueError):  # no signature to read: the call itself will say
        return
    if any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
        return
    missing = [arg for arg in call if arg not in parameters]
    if missing:
        raise NotImplementedError(f"this FlashInfer's selective_state_update has no {', '.join(missing)} "
                                  "(older than fb28d72?)")


def on_cuda(value):
    """A Host argument as a CUDA tensor (torch on first use: without it, SKIPPED), with its view."""
    tensor = device_tensor(value.array, value.dtype)
    if value.expand_to is None:
        return tensor
    return per_head_view(tensor, value.expand_to)


def per_head_view(tensor, shape):
    """`tensor`'s values as FlashInfer's checks want them: dense strides over its own axes, 0 over
    the trailing axes up to `shape`. Written out, not left to expand(): FlashInfer compares strides
    literally, also on axes of size 1, where expand() keeps a stride and a slice keeps its parent's
    (A of one head sliced from [1,P,N] has stride P*N: "A.stride(0) must be 1, got 1024")."""
    dense, step = [], 1
    for size in reversed(tuple(tensor.shape)):
        dense.insert(0, step)
        step *= size
    trailing = len(shape) - tensor.dim()
    return tensor.contiguous().as_strided(tuple(shape), tuple(dense) + (0,) * trailing)


def run(call, update, place):
    """Calls `update` with the call's Host arguments placed by `place`; the contract's outputs."""
    _check_signature(update, call)
    placed = {arg: place(value) if isinstance(value, Host) else value for arg, value in call.items()}
    update(**placed)
    return {output: placed[arg] for output, arg in OUTPUTS.items() if arg in placed}


def recurrent(problem, inputs, place=on_cuda):
    """SSDRecurrentFwd (contract §8, §8.1): FlashInfer's selective_state_update, its tensors placed
    by `place` (CUDA; the tests place them on the host for a numpy stand-in of FlashInfer)."""
    update = selective_state_update()  # first: without FlashInfer every case says so
    return run(arguments(problem, inputs), update, place)
