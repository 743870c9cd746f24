"""An honest fp32 numpy implementation of SSDChunkCumsumFwd, SSDChunkCouplingFwd, SSDStatePassingFwd
and SSDRecurrentFwd on the CPU, written from docs/contract.md (sections 1.3, 3, 4, 6 and 8): the worked example of an adapter, and the baseline
the planted-bug tests perturb. Every intermediate is float32, as a kernel's would be. The inputs of
a layout= problem arrive as read-only strided views (ssd_suite.views): every read here goes through
numpy indexing, which follows their strides, and nothing writes into an input."""
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
    """Decode steps per row (docs/contract.md §8, §8.1): the row reads its slot (the column
    max(num_accepted - 1, 0) of a [b,T] table), then per token h = h exp(A dt') + dt' B x carried in
    f32, out = C h + D x gated by silu(z); the state stored to the write slot after the last token
    (or after every token to its column). Padding rows (a negative slot, or the padding id) store
    nothing; their outputs are don't care. Rows of 0..T tokens in a varlen call (cu_seqlens)."""
    T = max(problem.values["tokens"], 1)
    x = inputs["x"].astype(F32)
    h, p = x.shape[-2:]

    def packed(a):  # every per-token input as [tokens,...], the rows' tokens one after the other
        return a.reshape((-1,) + a.shape[-2:])

    b = x.shape[0] if "varlen" not in problem.flags else len(inputs["cu_seqlens"]) - 1
    if "varlen" in problem.flags:
        cu = inputs["cu_seqlens"].astype(np.int64)
    else:
        cu = np.arange(b + 1, dtype=np.int64) * T
    xs, B, C = packed(x), packed(inputs["B"].astype(F32)), packed(inputs["C"].astype(F32))
    g = B.shape[1]
    group = np.arange(h) // (h // g)
    step = processed_dt(problem, packed(inputs["dt"]), inputs.get("dt_bias"), clamp=False)  # [tokens,h,p]
    z = packed(inputs["z"].astype(F32)) if "z" in inputs else None
    A = inputs["A"].astype(F32)
    state = inputs["state"].astype(F32)
    new_state = state.copy()  # the new state, stored back below
    out = np.zeros(xs.shape, dtype=F32)
    inter = np.zeros((b, T, h, p, A.shape[-1]), dtype=F32)
    pad = problem.values["pad"]
    reads = inputs.get("state_batch_indices")
    writes = inputs.get("dst_state_batch_indices", reads)
    per_token = reads is not None and reads.ndim == 2
    accepted = inputs.get("num_accepted_tokens")
    nowrite = "nowrite" in problem.flags

    def is_pad(slot):
        return slot < 0 or slot == pad

    for i in range(b):
        column = max(int(accepted[i]) - 1, 0) if accepted is not None else 0
        read = i if reads is None else int(reads[i, column] if per_token else reads[i])
        if reads is not None and is_pad(read):
            continue
        hs = state[read]
        first, length = int(cu[i]), int(cu[i + 1] - cu[i])
        for t in range(length):
            k = first + t
            d = step[k][:, :, None]  # [h,p,1]
            Bg, Cg = B[k][group][:, None, :], C[k][group][:, None, :]  # [h,1,n]
            with np.errstate(over="ignore", invalid="ignore"):  # fp32 overflow gives inf, as in a kernel
                hs = (hs * np.exp(A * d) + d * Bg * xs[k][:, :, None]).astype(F32)
                y = np.sum(hs * Cg, axis=-1, dtype=F32)
            if "D" in inputs:
                y = y + inputs["D"].astype(F32) * xs[k]
            if z is not None:
                y = y * silu(z[k])
            out[k], inter[i, t] = y, hs
            if per_token:
                slot = int(writes[i, t])
            elif t == length - 1:
                slot = int(writes[i]) if writes is not None else read
            else:
                continue
            if not nowrite and not is_pad(slot):
                new_state[slot] = hs
    result = {"out": out.reshape(x.shape), "state": new_state}
    if "inter" in problem.flags:
        result["intermediate_states"] = inter
    return result