"""Results case files written from Python read back in the C++ reader: `ssd-golden check` passes
the honest numpy outputs, and fails the planted bug's dumped case without the adapter."""
import io
import os
import subprocess

import pytest

import planted_bug
import ssd_suite
from ssd_suite.adapters import numpy_ref

h5py = pytest.importorskip("h5py")
ssd_golden = os.environ.get("SSD_GOLDEN_BINARY")
needs_golden = pytest.mark.skipif(not ssd_golden, reason="SSD_GOLDEN_BINARY (set by ctest) names ssd-golden")


def test_file_name_is_ssd_fuzz_s():
    # docs/case-files.md: <op>-<dtype>-<16 hex of the SHA-256 of the canonical string>.h5
    import hashlib

    from ssd_suite.case_file import file_name

    p = ssd_suite.Problem("chunk_cumsum:bf16 b1 s30 h2 q7 +dt_bias seed=6")
    assert file_name(p) == "chunk_cumsum-bf16-" + hashlib.sha256(str(p).encode()).hexdigest()[:16] + ".h5"


def test_rounding_is_the_suites():
    from ssd_suite.case_file import round_to

    # 1 + 2^-8 + 2^-30 rounds up in bf16; through float32 first it would tie down to 1.
    assert list(round_to("bf16", [1 + 2**-8, 1 + 2**-8 + 2**-30])) == [1.0, 1 + 2**-7]


@needs_golden
@pytest.mark.parametrize("text", ["chunk_cumsum:bf16 b1 s30 h2 q7 +dt_bias limit=-0.1,0.2 A=bf16 seed=6",
                                  "recurrent:f16 b1 h2 p4 g1 n4 +z +dt_bias state=bf16 dt_bias=f16 seed=5",
                                  "chunk_coupling:f16 b2 s37 g2 n8 q16 seq=rand seed=3"])
def test_honest_outputs_pass_ssd_golden_check(tmp_path, text):
    from ssd_suite.case_file import file_name, write_results

    p = ssd_suite.Problem(text)
    path = write_results(str(tmp_path / file_name(p)), p, getattr(numpy_ref, p.op)(p, ssd_suite.inputs(p)))
    done = subprocess.run([ssd_golden, "check", path], capture_output=True, text=True)
    assert done.returncode == 0 and "1 PASSED" in done.stdout, done.stdout + done.stderr


def test_a_missing_output_is_refused(tmp_path):
    from ssd_suite.case_file import write_results

    p = ssd_suite.Problem("chunk_cumsum:f32 b1 s4 h1 q2 seed=1")
    with pytest.raises(ValueError, match="argument 'outputs'"):
        write_results(str(tmp_path / "x.h5"), p, {"dt_out": [[[[0, 0]] * 2]]})
    assert os.listdir(tmp_path) == []


@needs_golden
def test_the_planted_bug_s_dump_replays_as_failed(tmp_path):
    out = io.StringIO()
    result = ssd_suite.fuzz(planted_bug, ops=["chunk_cumsum"], cases=50, seed=3, dump=str(tmp_path), out=out,
                            progress=False)
    assert result.exit_status == 1
    dump = result.failures[0].dump
    assert dump and os.path.dirname(dump) == str(tmp_path) and f"  case file: {dump}" in out.getvalue()
    with h5py.File(dump) as f:
        assert f.attrs["problem"] == str(result.failures[0].minimal) and f.attrs["kind"] == "results"
    done = subprocess.run([ssd_golden, "check", dump], capture_output=True, text=True)
    assert done.returncode != 0 and "FAILED" in done.stdout, done.stdout + done.stderr
