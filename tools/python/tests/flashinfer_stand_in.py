"""A stand-in for FlashInfer's selective_state_update, written in numpy from its docstring and the
checks of csrc/selective_state_update.cu (flashinfer-ai/flashinfer fb28d7242b35), independently of
the suite's oracle and of the adapter: one value of A, dt, dt_bias and D per head, read as FlashInfer
lays them out (stride-0 views); padding only where a slot entry equals pad_slot_id; the state carried
in f32 across a row's tokens. make(bug=...) plants one flaw, to show the suite catches it through
the adapter. install() puts it where `import flashinfer.mamba` finds it."""
import sys
import types

import numpy as np

F32 = np.float32

# Planted flaws: what the stand-in then does wrong.
BUGS = {"dt_bias_ignored": "dt_bias is not added to dt",
        "padded_slot_written": "a padding row stores its state (computed from zeros) to its write entry",
        "intermediate_only": "with intermediate_states_buffer the state cache is not stored (FlashInfer's simple "
                             "multi-token kernel at fb28d72, as read)",
        "update_state_ignored_with_dst": "disable_state_update is ignored when dst_state_batch_indices is given "
                                         "(the same kernel, as read)"}

# csrc/selective_state_update.cu: the element strides FlashInfer accepts for the per-head roles.
LAYOUT = {"A": lambda s: s == (1, 0, 0), "dt": lambda s: s[-2:] == (1, 0),
          "dt_bias": lambda s: s == (1, 0), "D": lambda s: s == (1, 0)}


def check_layout(strides):
    """{role: element strides}: FlashInfer's stride checks, raising ValueError naming the role."""
    for role, s in strides.items():
        if s is not None and not LAYOUT[role](tuple(s)):
            raise ValueError(f"{role} strides {tuple(s)}: FlashInfer takes one value per head (stride 0 along "
                             "head_dim and d_state, csrc/selective_state_update.cu)")


def check_dtypes(dtypes):
    """{argument: dtype}: FlashInfer's dtype rules (validate_dtype_consistency), raising ValueError."""
    for role, like in (("D", "dt"), ("dt_bias", "dt"), ("B", "x"), ("C", "x"), ("z", "x"), ("out", "x"),
                       ("intermediate_states_buffer", "state")):
        if dtypes.get(role) is not None and dtypes[role] != dtypes[like]:
            raise ValueError(f"{role} must have the same dtype as {like} ({dtypes[role]} vs {dtypes[like]})")


def _element_strides(a):
    return tuple(s // a.itemsize for s in a.strides)


def _softplus(v):
    with np.errstate(over="ignore"):
        return np.where(v <= F32(20), np.log1p(np.exp(v)), v).astype(F32)


def make(bug=None, check_strides=True):
    """selective_state_update with FlashInfer's signature, on numpy arrays (written in place)."""
    if bug is not None and bug not in BUGS:
        raise ValueError(f"argument 'bug': unknown flaw '{bug}' (expected one of {', '.join(BUGS)})")

    def selective_state_update(state, x, dt, A, B, C, D, z=None, dt_bias=None, dt_softplus=False,
                               state_batch_indices=None, pad_slot_id=-1, state_scale=None, out=None,
                               disable_state_update=False, intermediate_states_buffer=None,
                               intermediate_state_indices=None, intermediate_state_scales=None, rand_seed=None,
                               philox_rounds=10, cache_steps=0, algorithm="auto", dst_state_batch_indices=None,
                               cu_seqlens=None, num_accepted_tokens=None, backend="auto"):
        if intermediate_states_buffer is not None and dst_state_batch_indices is not None:
            raise ValueError("intermediate_states_buffer and dst_state_batch_indices are mutually exclusive")
        if state_scale is not None or intermediate_state_scales is not None or rand_seed is not None:
            raise ValueError("the stand-in has no int16 state and no stochastic rounding")
        if check_strides:
            check_layout({"A": _element_strides(A), "dt": _element_strides(dt), "D": _element_strides(D),
                          "dt_bias": _element_strides(dt_bias) if dt_bias is not None else None})
        heads, dim = x.shape[-2:]
        groups = B.shape[-2]
        varlen = cu_seqlens is not None and x.ndim == 3
        if varlen:
            cu = np.asarray(cu_seqlens, dtype=np.int64)
        else:  # one-token rows [batch,...] or multi-token rows [batch,T,...]
            per_row = x.shape[1] if x.ndim == 4 else 1
            cu = np.arange(x.shape[0] + 1, dtype=np.int64) * per_row
        result = out if out is not None else np.empty_like(x)
        xs, outs = x.reshape(-1, heads, dim), result.reshape(-1, heads, dim)  # tokens one after the other
        zs = None if z is None else z.reshape(-1, heads, dim)
        steps = np.asarray(dt, dtype=F32)[..., 0].reshape(-1, heads)  # one dt per token and head
        Bs, Cs = B.reshape(-1, groups, B.shape[-1]).astype(F32), C.reshape(-1, groups, C.shape[-1]).astype(F32)
        group = np.arange(heads) // (heads // groups)
        A_h, D_h = A[:, 0, 0].astype(F32), D[:, 0].astype(F32)
        bias = dt_bias[:, 0].astype(F32) if dt_bias is not None and bug != "dt_bias_ignored" else F32(0)

        def slot(table, b, column):
            entry = int(table[b, column] if table.ndim == 2 else table[b])
            if entry != pad_slot_id and not 0 <= entry < state.shape[0]:
                raise IndexError(f"slot entry {entry} of row {b} is outside the state cache of {state.shape[0]} slots "
                                 f"and is not pad_slot_id {pad_slot_id}")
            return entry

        def store(entry, h):
            if entry == pad_slot_id and bug != "padded_slot_written":
                return
            ignored = bug == "update_state_ignored_with_dst" and dst_state_batch_indices is not None
            if disable_state_update and not ignored:
                return
            if intermediate_states_buffer is not None and bug == "intermediate_only":
                return
            state[entry] = h

        for b in range(len(cu) - 1):
            column = max(int(num_accepted_tokens[b]) - 1, 0) if num_accepted_tokens is not None else 0
            read = b if state_batch_indices is None else slot(state_batch_indices, b, column)
            padding = read == pad_slot_id
            h = np.zeros((heads, dim, A.shape[-1]), F32) if padding else state[read].astype(F32)
            first, last = int(cu[b]), int(cu[b + 1])
            for t, k in enumerate(range(first, last)):
                step = steps[k] + bias
                if dt_softplus:
                    step = _softplus(step)
                x_k = xs[k].astype(F32)
                with np.errstate(over="ignore", invalid="ignore"):
                    h = (h * np.exp(A_h * step)[:, None, None]
                         + (step[:, None] * x_k)[:, :, None] * Bs[k][group][:, None, :]).astype(F32)
                    y = np.sum(h * Cs[k][group][:, None, :], axis=-1, dtype=F32) + D_h[:, None] * x_k
                if zs is not None:
                    z_k = zs[k].astype(F32)
                    y = y * (z_k / (F32(1) + np.exp(-z_k)))
                outs[k] = y
                if padding and bug != "padded_slot_written":
                    continue  # a padding row writes its output but stores nothing
                if intermediate_states_buffer is not None:
                    row = int(intermediate_state_indices[b]) if intermediate_state_indices is not None else read
                    intermediate_states_buffer[row, t] = h
                if dst_state_batch_indices is not None and dst_state_batch_indices.ndim == 2:
                    store(slot(dst_state_batch_indices, b, t), h)  # a state per token, to its column
                elif k == last - 1:
                    store(slot(dst_state_batch_indices, b, 0) if dst_state_batch_indices is not None else read, h)
        return result

    return selective_state_update


def install(monkeypatch, update):
    """Makes `import flashinfer.mamba` find `update` as its selective_state_update (for this test)."""
    package, mamba = types.ModuleType("flashinfer"), types.ModuleType("flashinfer.mamba")
    package.__path__, package.mamba = [], mamba
    mamba.selective_state_update = update
    monkeypatch.setitem(sys.modules, "flashinfer", package)
    monkeypatch.setitem(sys.modules, "flashinfer.mamba", mamba)


# How each contract dtype is held on the host: numpy has no bf16, so bf16 stays float32 (exact).
_NUMPY = {"f32": np.float32, "f16": np.float16, "bf16": np.float32, "i32": np.int32}


def on_host(value):
    """The adapter's placement on the host: a Host argument as a numpy array (a copy, which FlashInfer
    may write), with its stride-0 view. It checks that the dtype holds the values exactly, so that
    an adapter narrowing a dtype would be caught."""
    array = np.array(value.array, dtype=_NUMPY[value.dtype])
    exact = np.array_equal(array.astype(value.array.dtype), value.array, equal_nan=value.array.dtype.kind == "f")
    if value.dtype == "bf16":
        exact = exact and not np.any(array.view(np.uint32) & np.uint32(0xFFFF))
    if not exact:
        raise AssertionError(f"{value!r}: {value.dtype} does not hold the values exactly")
    if value.expand_to is None:
        return array
    trailing = len(value.expand_to) - array.ndim
    return np.broadcast_to(array.reshape(array.shape + (1,) * trailing), value.expand_to)
