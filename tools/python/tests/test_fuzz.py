"""Campaigns through the package: the honest numpy adapter is clean, the planted bug is found and
shrunk to a case that needs the bug's condition, adapter errors become FAILED cases, SKIPPED-only
campaigns exit 3, and a kernel library run from Python meets ssd-fuzz's cases and verdicts."""
import io
import json
import os
import subprocess
import sys

import pytest

import planted_bug
import ssd_suite
from ssd_suite.adapters import numpy_ref
from ssd_suite.adapters.kernel_library import KernelLibrary


def run(adapter, **kw):
    out = io.StringIO()
    result = ssd_suite.fuzz(adapter, out=out, progress=False, **kw)
    return result, out.getvalue()


def test_honest_numpy_reference_is_clean():
    result, text = run(numpy_ref, cases=240, seed=1)
    assert result.exit_status == 0, text
    assert result.ops == ["chunk_cumsum", "chunk_coupling", "state_passing", "recurrent"]
    assert result.unimplemented == ["mamba2", "chunk_state", "chunk_scan", "discretize_segsum"]  # as ssd-fuzz
    for op in result.ops:
        t = result.tallies[op]
        assert t.cases == 60 and t.failed == 0 and t.max_r <= 1
    assert "| chunk_cumsum | 60 |" in text and text.rstrip().splitlines()[-1].startswith("no failures after")


def test_planted_bug_is_found_and_shrunk():
    result, text = run(planted_bug, ops=["chunk_cumsum", "recurrent"], cases=200, seed=3)
    assert result.exit_status == 1 and "FAILURES FOUND: 1 failing case(s)" in text
    assert [f.minimal.op for f in result.failures] == ["chunk_cumsum"]
    assert result.tallies["recurrent"].failed == 0
    minimal = result.failures[0].minimal
    # The bug carries a chunk's sum into the next: a failing case needs two chunks, and nothing else.
    assert minimal.sizes["s"] > minimal.sizes["q"]
    assert minimal.sizes["b"] == 1 and minimal.sizes["h"] == 1
    # Greedy shrinking ends at a case that fails, whose every shrink candidate passes, and that the
    # honest reference passes.
    assert ssd_suite.check_case(planted_bug, minimal).failed
    assert not any(ssd_suite.check_case(planted_bug, c).failed for c in ssd_suite.shrink_candidates(minimal))
    assert ssd_suite.check_case(numpy_ref, minimal).passed
    assert f"repro: python3 -m ssd_suite fuzz --adapter planted_bug --problem '{minimal}'" in text


def test_an_adapter_that_raises_fails_its_case_and_the_campaign_goes_on():
    def broken(problem, inputs):
        raise ValueError("no kernel for q=" + str(problem.chunk_size))

    result, text = run({"chunk_cumsum": broken, "recurrent": numpy_ref.recurrent}, cases=20, seed=1, max_failures=2)
    assert result.exit_status == 1
    assert result.tallies["chunk_cumsum"].failed == 2 and result.tallies["recurrent"].failed == 0
    assert result.tallies["recurrent"].cases > 2  # recurrent kept its turns after chunk_cumsum stopped
    assert "the adapter raised: ValueError: no kernel for q=" in text


class _LateDeviceError:
    """An output tensor whose device reports the kernel's fault only when it is read (CUDA errors
    are asynchronous): both ways to the host raise, as torch does after an illegal address."""

    def __dlpack__(self, *args, **kwargs):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    def cpu(self):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")


def test_a_device_error_reported_when_the_outputs_are_read_fails_the_case():
    def late(problem, inputs):
        return {"dA_cumsum": _LateDeviceError(), "dt_out": _LateDeviceError()}

    result, text = run({"chunk_cumsum": late, "recurrent": numpy_ref.recurrent}, cases=10, seed=1, max_failures=1)
    assert result.exit_status == 1
    assert result.tallies["chunk_cumsum"].failed == 1 and result.tallies["recurrent"].failed == 0
    assert result.tallies["recurrent"].cases > 2  # the campaign went on
    assert "could not be read (a device error reported late): RuntimeError: CUDA error" in text


def test_bad_outputs_fail_the_case():
    result, text = run({"chunk_cumsum": lambda p, x: {"dA": x["dt"]}}, cases=2, seed=1)
    assert result.exit_status == 1 and "'dA' is not an output" in text
    result, text = run({"chunk_cumsum": lambda p, x: None}, cases=2, seed=1)
    assert result.exit_status == 1 and "a dict of output name to array" in text


def test_skipped_everywhere_is_nothing_tested():
    def skip(problem, inputs):
        raise NotImplementedError("only bf16")

    result, text = run({"chunk_cumsum": skip}, cases=5, seed=1)
    assert result.exit_status == 3 and result.tallies["chunk_cumsum"].skipped == 5
    assert "NOTHING TESTED for chunk_cumsum: every case SKIPPED" in text
    result, text = run(numpy_ref, ops=["chunk_scan"], cases=5, seed=1)
    assert result.exit_status == 3 and result.unimplemented == ["chunk_scan"]
    assert "| chunk_scan | not implemented by the adapter |" in text


def test_replay_and_shards():
    result, _ = run(numpy_ref, problems=["chunk_cumsum:f32 b1 s30 h2 q7 seed=1", "recurrent:f32 b1 h2 p2 g1 n2 seed=1"])
    assert result.exit_status == 0 and sum(t.cases for t in result.tallies.values()) == 2
    with pytest.raises(ValueError, match="argument 'shard'"):
        ssd_suite.fuzz(numpy_ref, cases=1, shard="2/2", out=io.StringIO())


ssd_fuzz = os.environ.get("SSD_FUZZ_BINARY")


@pytest.mark.skipif(not ssd_fuzz, reason="SSD_FUZZ_BINARY (set by ctest) names ssd-fuzz")
@pytest.mark.parametrize("kernels,seed,shard", [("mutant-no_dt_clamp", 3, "0/1"), ("mutant-b_c_swapped", 5, "1/2"),
                                                ("emulation", 2, "0/1")])
def test_same_cases_and_verdicts_as_ssd_fuzz(tmp_path, kernels, seed, shard):
    # ssd-fuzz and the package run the same library for the same seed, shard and case count: their
    # JSON reports agree on every op and dtype row (cases, each verdict, max r, r decades), on the
    # case each failure started from, and on how the campaign ended; only timings differ.
    native_path, package_path = tmp_path / "native.json", tmp_path / "package.json"
    subprocess.run([ssd_fuzz, "--kernels", kernels, "--seed", str(seed), "--shard", shard, "--cases", "40",
                    "--quiet", "--dump", str(tmp_path / "dump"), "--report", str(native_path)],
                   check=False, stdout=subprocess.DEVNULL)
    result, _ = run(KernelLibrary(kernels), cases=40, seed=seed, shard=shard, shrink_seconds=0,
                    report=str(package_path))
    native, package = json.loads(native_path.read_text()), json.loads(package_path.read_text())
    assert set(native) == set(package)
    assert [without_seconds(r) for r in native["by_op_and_dtype"]] == \
        [without_seconds(r) for r in package["by_op_and_dtype"]]
    assert [f["original"] for f in native["failures"]] == [f["original"] for f in package["failures"]]
    for key in ("kernels", "seed", "shard", "exit_status", "summary", "unimplemented_ops"):
        assert native[key] == package[key], key
    assert native_counts(native) == {op: (t.cases, t.passed, t.failed, t.skipped) for op, t in result.tallies.items()}


def without_seconds(row):
    """A report row without its time and without skip_reasons, which only the package's report has."""
    return {k: v for k, v in row.items() if k not in ("seconds", "skip_reasons")}


def native_counts(report):
    """Per op (cases, passed, failed, skipped) from ssd-fuzz's JSON report (rows per op and dtype)."""
    counts = {}
    for row in report["by_op_and_dtype"]:
        c = counts.setdefault(row["op"], [0, 0, 0, 0])
        for i, key in enumerate(("cases", "PASSED", "FAILED", "SKIPPED")):
            c[i] += row[key]
    return {op: tuple(c) for op, c in counts.items()}


def test_command_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-m", "ssd_suite", "fuzz", "--adapter", "ssd_suite.adapters.numpy_ref",
                           "--cases", "10", "--seed", "1"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no failures after" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "ssd_suite", "fuzz", "--adapter", "no_such_module:x", "--cases", "1"],
                         env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and "argument '--adapter'" in bad.stderr


def test_the_command_line_replays_a_problems_file(tmp_path):
    listing = tmp_path / "problems.txt"
    listing.write_text("# two cases\nchunk_cumsum:f32 b1 s16 h2 q8 seed=1\n\n"
                       "recurrent:f32 b2 h2 p4 g1 n4 seed=1   # trailing comment\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cmd = [sys.executable, "-m", "ssd_suite", "fuzz", "--adapter", "ssd_suite.adapters.numpy_ref", "--dump", ""]
    done = subprocess.run(cmd + ["--problems", str(listing)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 given problem(s)" in done.stdout and "| chunk_cumsum | 1 |" in done.stdout
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    for path, why in ((empty, "lists no problem"), (tmp_path / "missing.txt", "cannot read")):
        done = subprocess.run(cmd + ["--problems", str(path)], env=env, capture_output=True, text=True)
        assert done.returncode == 2 and "argument '--problems'" in done.stderr and why in done.stderr, done.stderr


def test_skip_reasons_reach_the_summary_and_the_report(tmp_path):
    def declines(problem, inputs):
        raise NotImplementedError("no kernel for q=" + str(problem.chunk_size))

    report = tmp_path / "report.json"
    result, text = run({"chunk_cumsum": declines}, problems=["chunk_cumsum:f32 b1 s16 h2 q8 seed=1"],
                       report=str(report))
    assert result.exit_status == 3 and "every case SKIPPED (e.g. " in text and "no kernel for q=8" in text
    row = json.loads(report.read_text())["by_op_and_dtype"][0]
    assert row["SKIPPED"] == 1 and list(row["skip_reasons"].values()) == [1]
