"""Adapters given views: the honest numpy reference passes zxbcdt, strided and +far cases that
reach it as strided views, a reference that reads each view as if it were dense fails exactly
those (and passes their contiguous forms), a campaign finds that bug and keeps the layout in its
minimal case, and a kernel library checked through the C API receives the views too."""
import io

import numpy as np
import pytest

import planted_dense_reader
import ssd_suite
from ssd_suite.adapters import numpy_ref
from ssd_suite.adapters.kernel_library import KernelLibrary

# The numpy reference's ops with every layout they take: zxbcdt only on recurrent (+tie: the
# projection holds one dt per head), strided on all four, +far with either.
LAID_OUT = ["recurrent:f32 b2 h2 p3 g1 n2 +tie +z layout=zxbcdt seed=1",
            "recurrent:bf16 b3 h4 p8 g2 n8 +dt_bias +softplus +Dhp +tie layout=zxbcdt dt=bf16 seed=2",
            "recurrent:f16 b3 h4 p8 g2 n8 +dt_bias +softplus +Dhp +z layout=strided seed=2",
            "recurrent:bf16 b4 h4 p8 g4 n8 +dt_bias +softplus +Dhp +sbi slots=9 layout=strided seed=3",
            "chunk_cumsum:bf16 b2 s37 h3 q16 +dt_bias +softplus layout=strided seed=3",
            "chunk_coupling:f16 b2 s37 g2 n16 q16 +causal seq=rand layout=strided seed=2",
            "state_passing:f16 b2 s100 q16 h3 d16 +init layout=strided seed=2"]
FAR = ["chunk_cumsum:f32 b2 s37 h3 q16 +dt_bias layout=strided +far seed=3",
       "recurrent:f32 b2 h2 p3 g1 n2 +tie +z layout=zxbcdt +far seed=1"]


def contiguous(text):
    return " ".join(t for t in text.split() if not t.startswith("layout=") and t != "+far")


def seen_by(adapter, text):
    """The judgement of one case, and what the adapter's function was handed."""
    seen = {}
    fn = getattr(adapter, ssd_suite.Problem(text).op)

    def recording(problem, inputs):
        seen.update(inputs)
        return fn(problem, inputs)

    return ssd_suite.check_case({ssd_suite.Problem(text).op: recording}, ssd_suite.Problem(text)), seen


@pytest.mark.parametrize("text", LAID_OUT + FAR)
def test_the_honest_reference_passes_cases_given_as_views(text):
    j, seen = seen_by(numpy_ref, text)
    assert j.verdict == "PASSED", j.description
    laid_out = ssd_suite.Problem(text).layout.placements
    assert laid_out
    for role in laid_out:
        assert not seen[role].flags.c_contiguous and not seen[role].flags.writeable, role


@pytest.mark.parametrize("text", LAID_OUT + FAR)
def test_a_reference_reading_views_as_dense_fails_them_and_passes_contiguous_cases(text):
    assert ssd_suite.check_case(planted_dense_reader, ssd_suite.Problem(text)).verdict == "FAILED"
    assert ssd_suite.check_case(planted_dense_reader, ssd_suite.Problem(contiguous(text))).verdict == "PASSED"


def test_a_campaign_finds_the_dense_reader_and_keeps_the_layout():
    out = io.StringIO()
    result = ssd_suite.fuzz(planted_dense_reader, ops=["chunk_cumsum", "recurrent"], cases=400, seed=5, out=out,
                            progress=False, shrink_seconds=10)
    assert result.exit_status == 1, out.getvalue()
    for f in result.failures:
        # shrinking tries the contiguous layout first: the reader passes it, so the layout stays
        assert "layout=" in str(f.minimal), str(f.minimal)
        assert ssd_suite.check_case(numpy_ref, f.minimal).passed


@pytest.mark.parametrize("text", ["mamba2:f32 b2 s5 h2 p2 g1 n2 q4 +z layout=zxbcdt seed=3",
                                  "mamba2:f32 b2 s5 h2 p2 g1 n2 q4 +z layout=strided seed=3",
                                  "chunk_cumsum:f32 b2 s37 h3 q16 +dt_bias layout=strided +far seed=3"])
def test_a_kernel_library_is_sent_the_views_themselves(text):
    # check_case lays the inputs out in C++ (ViewBuffer): the emulation with its strides replaced by
    # dense ones fails what the honest emulation passes, and passes the contiguous case.
    assert KernelLibrary("emulation").check(ssd_suite.Problem(text)).verdict == "PASSED"
    ignored = KernelLibrary("mutant-strides_ignored")
    assert ignored.check(ssd_suite.Problem(text)).verdict == "FAILED"
    assert ignored.check(ssd_suite.Problem(contiguous(text))).verdict == "PASSED"


def test_inputs_that_cannot_be_allocated_skip_the_case(monkeypatch):
    def refuse(extent, dtype):
        raise MemoryError("no memory")

    monkeypatch.setattr(np, "zeros", refuse)
    j = ssd_suite.check_case(numpy_ref, ssd_suite.Problem(FAR[0]))
    assert j.verdict == "SKIPPED" and "cannot allocate the 8.0 GiB buffer 'dt'" in j.message, j.message
