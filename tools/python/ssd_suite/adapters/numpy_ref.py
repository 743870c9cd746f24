"""An honest fp32 numpy implementation of SSDChunkCumsumFwd, SSDChunkCouplingFwd, SSDStatePassingFwd
and SSDRecurrentFwd on the CPU, written from docs/contract.md (sections 1.3, 3, 4, 6 and 8): the worked example of an adapter, and the baseline
the planted-bug tests perturb. Every intermediate is float32, as a kernel's would be."""
import numpy as np

name = "numpy_ref"
F32 = np.float32


def softplus_thr20(v):
    """softplus with upstream's threshold: v itself above 20 (no overflow of exp)."""
    with np.errstate(over="ignore"):
        return np.where(v > F32(20), v, np.log1p(np.exp(v))).astype(F32)


def processed_dt(problem, dt, dt_bias, clamp):
    """dt' of contract section 1.3: bias, softplus, then (prefill only) the dt_limit clamp."""
    v = dt.astype(F32)
    if dt_bias is not None:
        v = v + dt_bias.astype(F32)
    if "softplus" in problem.flags:
        v = softplus_thr20(v)
    if clamp:
        lo, hi = problem.dt_limit
        v = np.minimum(np.maximum(v, F32(lo)), F32(hi)).astype(F32)
    return v


def chunk_cumsum(problem, inputs):
    """dt [b,s,h] -> dt_out and dA_cumsum [b,h,nc,q]: dt' per token, 0 in the padded tail; the
    inclusive cumsum of A[h] dt' restarting in every chunk (flat in the tail)."""
    dt = inputs["dt"]
    b, s, h = dt.shape
    q = problem.chunk_size
    nc = -(-s // q)
    step = processed_dt(problem, dt, inputs.get("dt_bias"), clamp=True)
    padded = np.zeros((b, nc * q, h), dtype=F32)
    padded[:, :s, :] = step
    dt_out = padded.reshape(b, nc, q, h).transpose(0, 3, 1, 2)  # [b,h,nc,q]
    dA = inputs["A"].astype(F32)[None, :, None, None] * dt_out
    return {"dt_out": dt_out, "dA_cumsum": np.cumsum(dA, axis=-1, dtype=F32)}


def _chunks(t, nc, q):
    """[b,s,g,n] -> [b,nc,g,q,n], the padded tail zero."""
    b, s, g, n = t.shape
    padded = np.zeros((b, nc * q, g, n), dtype=F32)
    padded[:, :s] = t
    return padded.reshape(b, nc, q, g, n).transpose(0, 1, 3, 2, 4)


def chunk_coupling(problem, inputs):
    """CB[b,c,g,i,j] = sum_n C[cQ+i] B[cQ+j] within each chunk, zero where the two tokens' seq_idx
    differ and in the padded tail (the entries above a causal diagonal are computed anyway: they
    are not compared)."""
    C, B = inputs["C"].astype(F32), inputs["B"].astype(F32)
    b, s = C.shape[:2]
    q = problem.chunk_size
    nc = -(-s // q)
    cb = np.matmul(_chunks(C, nc, q), _chunks(B, nc, q).transpose(0, 1, 2, 4, 3))  # [b,nc,g,q,q] f32
    if "seq_idx" in inputs:
        ids = np.zeros((b, nc * q), dtype=np.int64)  # tail ids do not matter: its rows are zero
        ids[:, :s] = inputs["seq_idx"]
        ids = ids.reshape(b, nc, q)
        cb = cb * (ids[:, :, :, None] == ids[:, :, None, :])[:, :, None].astype(F32)
    return {"CB": cb}


def state_passing(problem, inputs):
    """An exclusive scan over chunks: out[c] is the state entering chunk c, M <- rho exp(alpha_c) M +
    states[c], where rho = 0 when the id of chunk c's last token differs from the previous chunk's
    (the first chunk compares with id 0, so a row starting at id 1 drops initial_states)."""
    states = inputs["states"].astype(F32)  # [b,nc,h,d]
    alpha = inputs["dA_chunk_cumsum"].astype(F32)  # [b,h,nc]
    b, nc, h, d = states.shape
    carried = inputs["initial_states"].astype(F32) if "initial_states" in inputs else np.zeros((b, h, d), F32)
    out = np.empty_like(states)
    ids = inputs.get("seq_idx")
    q, s = problem.chunk_size, problem.sizes["s"]
    previous = np.zeros(b, dtype=np.int64)
    for c in range(nc):
        out[:, c] = carried
        with np.errstate(over="ignore", invalid="ignore"):  # fp32 overflow gives inf, as in a kernel
            decayed = np.exp(alpha[:, :, c])[:, :, None] * carried
        if ids is not None:
            last = ids[:, min((c + 1) * q, s) - 1].astype(np.int64)
            # A reset drops the carried state outright (never 0 * inf).
            decayed = np.where((last == previous)[:, None, None], decayed, F32(0))
            previous = last
        carried = (decayed + states[:, c]).astype(F32)
    return {"out": out, "final_states": carried}


def silu(v):
    return (v / (F32(1) + np.exp(-v))).astype(F32)


def recurrent(problem, inputs):
    """One decode step per batch row: h_new = state exp(A dt') + dt' B x, out = C h_new + D x,
    gated by silu(z); padding rows (negative state_batch_indices) give out 0 and touch no state."""
    x = inputs["x"].astype(F32)
    b, h, p = x.shape
    B, C = inputs["B"].astype(F32), inputs["C"].astype(F32)
    g = B.shape[1]
    heads_per_group = h // g
    group = np.arange(h) // heads_per_group
    step = processed_dt(problem, inputs["dt"], inputs.get("dt_bias"), clamp=False)  # [b,h,p]
    A = inputs["A"].astype(F32)
    state = inputs["state"].astype(F32)  # the new state, stored back below
    new_state = state.copy()
    out = np.zeros((b, h, p), dtype=F32)
    rows = inputs["state_batch_indices"] if "state_batch_indices" in inputs else np.arange(b)
    for i in range(b):
        slot = int(rows[i])
        if slot < 0:
            continue
        d = step[i][:, :, None]  # [h,p,1]
        Bg, Cg = B[i][group][:, None, :], C[i][group][:, None, :]  # [h,1,n]
        with np.errstate(over="ignore", invalid="ignore"):  # fp32 overflow gives inf, as in a kernel
            h_new = (state[slot] * np.exp(A * d) + d * Bg * x[i][:, :, None]).astype(F32)
        new_state[slot] = h_new
        with np.errstate(over="ignore", invalid="ignore"):
            y = np.sum(h_new * Cg, axis=-1, dtype=F32)
        if "D" in inputs:
            y = y + inputs["D"].astype(F32) * x[i]
        if "z" in inputs:
            y = y * silu(inputs["z"][i].astype(F32))
        out[i] = y
    return {"out": out, "state": new_state}
