"""Inputs and the oracle as numpy arrays, checked against values derived here from the contract."""
import math

import numpy as np
import pytest

import ssd_suite
from ssd_suite import Problem


def test_input_dtypes_and_bf16_as_exact_float32():
    x = ssd_suite.inputs("chunk_cumsum:bf16 b1 s5 h2 q2 +dt_bias dt_bias=f16 seed=2")
    assert list(x) == ["dt", "A", "dt_bias"]  # the op's role order
    assert x.dtypes == {"dt": "bf16", "A": "f32", "dt_bias": "f16"}
    assert x["dt"].dtype == np.float32 and x["dt"].shape == (1, 5, 2)
    assert x["A"].dtype == np.float32 and x["dt_bias"].dtype == np.float16
    # bf16 is the top half of a float32: the low 16 bits of every value are zero.
    assert not np.any(x["dt"].view(np.uint32) & 0xFFFF)
    bits = ssd_suite.inputs(x.problem, bf16="bits")["dt"]
    assert bits.dtype == np.uint16
    np.testing.assert_array_equal((bits.astype(np.uint32) << 16).view(np.float32), x["dt"])


def test_inputs_are_a_function_of_the_string():
    a = ssd_suite.inputs("recurrent:bf16 b4 h4 p8 g4 n8 +dt_bias +softplus +Dhp +sbi slots=9 seed=3")
    b = ssd_suite.inputs(Problem("recurrent:bf16 b4 h4 p8 g4 n8 +dt_bias +softplus +Dhp +sbi slots=9 seed=3"))
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])


def test_state_batch_indices_are_distinct_slots_or_padding():
    # docs/problem-string.md section 5.4: distinct slots in 0..slots-1, padding -1, -2 or -3.
    x = ssd_suite.inputs("recurrent:f32 b6 h2 p2 g1 n2 +sbi slots=8 seed=3")
    sbi = x["state_batch_indices"]
    assert sbi.dtype == np.int32 and sbi.shape == (6,) and x["state"].shape == (8, 2, 2, 2)
    slots = sbi[sbi >= 0]
    assert len(set(slots.tolist())) == len(slots) and np.all(slots < 8)
    assert set(sbi[sbi < 0].tolist()) <= {-1, -2, -3}


def cumsum_by_hand(p, x):
    """docs/contract.md sections 1.3 and 3, element by element in float64."""
    dt, A = x["dt"].astype(float), x["A"].astype(float)
    bias = x["dt_bias"].astype(float) if "dt_bias" in x else np.zeros_like(A)
    lo, hi = p.dt_limit
    b, s, h = dt.shape
    q = p.sizes["q"]
    nc = math.ceil(s / q)
    want_dt, want_dA = np.zeros((b, h, nc, q)), np.zeros((b, h, nc, q))
    for bi in range(b):
        for hi_ in range(h):
            for c in range(nc):
                running = 0.0
                for i in range(q):
                    t = c * q + i
                    step = 0.0
                    if t < s:
                        v = dt[bi, t, hi_] + bias[hi_]
                        if "softplus" in p.flags:
                            v = v if v > 20 else math.log1p(math.exp(v))
                        step = min(max(v, lo), hi)
                    running += A[hi_] * step
                    want_dt[bi, hi_, c, i], want_dA[bi, hi_, c, i] = step, running
    return want_dt, want_dA


@pytest.mark.parametrize("text", ["chunk_cumsum:f32 b2 s5 h3 q2 +dt_bias limit=0.01,0.25 seed=11",
                                  "chunk_cumsum:bf16 b1 s30 h2 q7 +dt_bias +softplus A=bf16 seed=6",
                                  "chunk_cumsum:f16 b1 s1 h1 q4 seed=0"])
def test_chunk_cumsum_oracle_by_hand(text):
    p = Problem(text)
    want_dt, want_dA = cumsum_by_hand(p, ssd_suite.inputs(p))
    o = ssd_suite.oracle(p)
    assert list(o) == ["dA_cumsum", "dt_out"]
    assert o["dA_cumsum"].dtype == "f32" and o["dA_cumsum"].value.dtype == np.float64
    np.testing.assert_allclose(o["dA_cumsum"].value, want_dA, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(o["dt_out"].value, want_dt, rtol=1e-12, atol=1e-15)
    assert o["dA_cumsum"].defined.all() and (o["dA_cumsum"].bound > 0).all()


def test_causal_coupling_defines_the_lower_triangle():
    # docs/contract.md: a causal CB is undefined above the diagonal of each chunk.
    o = ssd_suite.oracle("chunk_coupling:f32 b1 s8 g1 n4 q4 +causal seed=1")["CB"]
    assert o.shape == (1, 2, 1, 4, 4)
    i, j = np.meshgrid(np.arange(4), np.arange(4), indexing="ij")
    np.testing.assert_array_equal(o.defined, np.broadcast_to(j <= i, o.shape))


def test_oracle_of_an_invalid_problem_names_it():
    with pytest.raises(ssd_suite.SsdArgumentError, match="argument 'problem'.*H % G != 0"):
        ssd_suite.oracle("chunk_state:f32 b1 s8 h3 p2 g2 n2 q4 seed=1")


class DLPackOnly:
    """Exposes only the DLPack protocol, as a torch or jax tensor does."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class ArrayOnly:
    def __init__(self, a):
        self._a = a

    def __array__(self, dtype=None):
        return self._a if dtype is None else self._a.astype(dtype)


def test_as_numpy_reads_dlpack_and_array_protocols():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(ssd_suite.as_numpy(DLPackOnly(a)), a)
    np.testing.assert_array_equal(ssd_suite.as_numpy(ArrayOnly(a)), a)
    np.testing.assert_array_equal(ssd_suite.as_numpy([[0, 1, 2], [3, 4, 5]]), a)
