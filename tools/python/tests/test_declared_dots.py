"""Dot-product precision declared by an adapter: a library that says it takes f32 operands as TF32
is judged on dots=tf32 problems (the ops with dot products only), so an honest TF32 kernel passes
where it would fail as IEEE, and the declaration never reaches ops without dot products."""
import numpy as np
import pytest

import ssd_suite
from ssd_suite.adapter import as_declared
from ssd_suite.adapters import numpy_ref

F32_COUPLING = "chunk_coupling:f32 b1 s64 g1 n64 q32 seed=1"


def to_tf32(a):
    """Rounds float32 values to TF32 (10 explicit mantissa bits), to nearest, ties away from zero:
    adding half of the dropped 13 bits' weight (0x1000) and clearing them."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    return ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


def tf32_coupling(problem, inputs):
    """numpy_ref's chunk_coupling with its operands read as TF32, as a tensor core reads f32."""
    rounded = dict(inputs)
    rounded["C"], rounded["B"] = to_tf32(inputs["C"]), to_tf32(inputs["B"])
    return numpy_ref.chunk_coupling(problem, rounded)


class Library:
    def __init__(self, f32_dots):
        self.name, self.f32_dots = f"tf32_coupling_{f32_dots}", f32_dots
        self.chunk_coupling, self.chunk_cumsum = tf32_coupling, numpy_ref.chunk_cumsum


def test_tf32_rounding_by_hand():
    # 1 + 2^-11 lies halfway between TF32 neighbours 1 and 1 + 2^-10: it rounds away from zero;
    # 1 + 2^-12 rounds down to 1; 3 (exact in 10 bits) stays.
    values = np.array([1 + 2.0 ** -11, 1 + 2.0 ** -12, 3.0, -(1 + 2.0 ** -11)], dtype=np.float32)
    assert to_tf32(values).tolist() == [1 + 2.0 ** -10, 1.0, 3.0, -(1 + 2.0 ** -10)]


def test_a_tf32_kernel_fails_as_ieee_and_passes_as_declared():
    problem = ssd_suite.Problem(F32_COUPLING)
    as_ieee = ssd_suite.check_case(Library("ieee"), problem)
    as_tf32 = ssd_suite.check_case(Library("tf32"), problem)
    assert as_ieee.verdict == "FAILED" and str(as_ieee.problem) == F32_COUPLING
    assert as_tf32.verdict == "PASSED" and "dots=tf32" in str(as_tf32.problem)


def test_the_declaration_reaches_only_ops_with_dot_products():
    lib = Library("tf32")
    cumsum = ssd_suite.Problem("chunk_cumsum:f32 b1 s40 h4 q16 seed=1")
    assert as_declared(lib, cumsum) is cumsum
    assert str(as_declared(lib, ssd_suite.Problem(F32_COUPLING))) == "chunk_coupling:f32 b1 s64 g1 n64 q32 dots=tf32 seed=1"
    assert ssd_suite.check_case(lib, cumsum).passed


def test_a_campaign_of_a_tf32_library_is_judged_as_tf32():
    import io
    result = ssd_suite.fuzz(Library("tf32"), ops=["chunk_coupling"], cases=40, seed=2, out=io.StringIO(),
                            progress=False)
    assert result.exit_status == 0 and result.tallies["chunk_coupling"].failed == 0


def test_an_unknown_declaration_is_an_error_naming_it():
    with pytest.raises(ValueError, match="f32_dots 'fp8'"):
        ssd_suite.check_case(Library("fp8"), ssd_suite.Problem(F32_COUPLING))
