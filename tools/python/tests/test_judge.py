"""Verdicts on outputs handed in from Python: correct ones pass, a planted error fails at the
element it was planted in, and missing or unknown outputs are reported."""
import numpy as np
import pytest

import ssd_suite
from ssd_suite.adapters import numpy_ref

CUMSUM = "chunk_cumsum:f32 b2 s5 h3 q2 +dt_bias limit=0.01,0.25 seed=11"


def test_oracle_values_pass_with_at_most_one_rounding():
    o = ssd_suite.oracle(CUMSUM)
    j = ssd_suite.judge(CUMSUM, {name: out.value for name, out in o.items()})
    # Each value is rounded once to f32 on the way in: r <= 1/2 by the bound's construction.
    assert j.verdict == "PASSED" and 0 <= j.max_r <= 0.5
    assert j.description.startswith("PASSED") and CUMSUM in j.description


def test_an_element_ten_bounds_off_fails_there():
    o = ssd_suite.oracle(CUMSUM)
    got = {name: out.value.copy() for name, out in o.items()}
    got["dA_cumsum"][1, 2, 1, 1] += 10 * o["dA_cumsum"].bound[1, 2, 1, 1]
    j = ssd_suite.judge(CUMSUM, got, worst=3)
    assert j.verdict == "FAILED"
    assert j.worst[0].output == "dA_cumsum" and j.worst[0].index == "[1,2,1,1]" and 9 < j.worst[0].r < 11
    assert j.outputs["dA_cumsum"]["over_bound"] == 1 and j.outputs["dt_out"]["over_bound"] == 0
    assert "dA_cumsum[1,2,1,1]" in j.description and "repro: " + CUMSUM in j.description


def test_missing_and_unknown_outputs():
    o = ssd_suite.oracle(CUMSUM)
    j = ssd_suite.judge(CUMSUM, {"dA_cumsum": o["dA_cumsum"].value})
    assert j.verdict == "FAILED" and "output 'dt_out' missing" in j.message
    with pytest.raises(ssd_suite.SsdArgumentError, match=r"argument 'outputs': outputs\[2\]: 'dA' is not an output"):
        ssd_suite.judge(CUMSUM, {"dA_cumsum": o["dA_cumsum"].value, "dt_out": o["dt_out"].value, "dA": 0})
    shape = ssd_suite.judge(CUMSUM, {"dA_cumsum": o["dA_cumsum"].value[:1], "dt_out": o["dt_out"].value})
    assert shape.verdict == "FAILED" and "has shape" in shape.message


def test_a_nan_reads_as_r_inf():
    o = ssd_suite.oracle(CUMSUM)
    got = {name: out.value.copy() for name, out in o.items()}
    got["dt_out"][0, 0, 0, 0] = np.nan
    j = ssd_suite.judge(CUMSUM, got)
    assert j.verdict == "FAILED" and j.max_r == float("inf") and j.not_finite


def test_bf16_outputs_are_rounded_to_their_storage_dtype():
    # CB is stored in C's dtype, bf16 here: float64 oracle values are rounded to bf16 like a store.
    p = "chunk_coupling:bf16 b1 s24 g2 n8 q8 seed=4"
    o = ssd_suite.oracle(p)
    assert o["CB"].dtype == "bf16"
    j = ssd_suite.judge(p, {"CB": o["CB"].value})
    assert j.verdict == "PASSED" and j.max_r <= 0.5


@pytest.mark.parametrize("text", ["chunk_cumsum:bf16 b1 s30 h2 q7 +dt_bias limit=-0.1,0.2 A=bf16 seed=6",
                                  "chunk_cumsum:f16 b2 s37 h4 q16 +dt_bias +softplus seed=3",
                                  "recurrent:bf16 b4 h4 p8 g4 n8 +dt_bias +softplus +Dhp +sbi slots=9 seed=3",
                                  "recurrent:f32 b2 h4 p4 g2 n8 +dt_bias +softplus +Dhp +tie seed=4",
                                  "recurrent:bf16 b1 h2 p4 g1 n4 +z state=bf16 seed=5",
                                  "chunk_coupling:bf16 b1 s40 g1 n8 q8 +causal seq=0:8,9,7,-16 seed=4",
                                  "chunk_coupling:f32 b1 s24 g3 n8 q7 B=bf16 out=f32 seed=6",
                                  "chunk_coupling:f16 b2 s37 g2 n8 q16 seq=rand seed=3",
                                  "state_passing:bf16 b1 s40 q8 h2 d8 +init seq=1:20,20 out=f32 seed=6",
                                  "state_passing:f32 b2 s37 q16 h3 d5 +init seq=rand seed=2",
                                  "state_passing:f16 b1 s5 q8 h2 d4 seed=1"])
def test_numpy_reference_passes_the_smoke_problems(text):
    p = ssd_suite.Problem(text)
    x = ssd_suite.inputs(p)
    j = ssd_suite.judge(p, getattr(numpy_ref, p.op)(p, x), inputs=x)
    assert j.verdict == "PASSED", j.description
