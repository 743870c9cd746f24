"""The FlashInfer adapter (ssd_suite.adapters.flashinfer): without FlashInfer every case is SKIPPED
naming it; its mapping of the contract's serving arguments, judged by the suite's oracle through a
numpy stand-in of FlashInfer (tests/flashinfer_stand_in.py: its documented semantics, its stride and
dtype checks), PASSES, and planted flaws of the stand-in FAIL; what FlashInfer cannot express is
SKIPPED with the reason. These run on the CPU without torch: the adapter builds its call on the
host and only its placement (on_cuda) needs torch, tested on a GPU host at the end."""
import functools
import importlib.util
import sys
import types

import numpy as np
import pytest

import flashinfer_stand_in as stand_in
import ssd_suite
from ssd_suite.adapters import flashinfer as fi

# Serving problems FlashInfer's interface expresses (tied A, dt and dt_bias; d_state >= 32; the
# multi-token ones with head_dim 32), one per feature of the mapping.
SERVING = [
    "recurrent:f32 b3 h2 p32 g1 n32 +dt_bias +softplus +z +tie seed=1",  # one token, a row per slot
    "recurrent:bf16 b4 h4 p32 g2 n32 +dt_bias +softplus +sbi +tie slots=9 seed=3",  # negative padding ids
    "recurrent:f16 b4 h2 p32 g1 n32 +dt_bias +softplus +sbi +tie +dst slots=9 pad=8 seed=5",  # write slots, pad id
    "recurrent:f32 b3 h2 p32 g1 n32 +dt_bias +softplus +z +sbi +tie slots=4 tokens=3 seed=7",  # multi-token rows
    "recurrent:f32 b3 h2 p32 g1 n32 +dt_bias +softplus +sbi +tie +spec +accepted slots=10 tokens=3 pad=9 seed=8",
    "recurrent:bf16 b3 h2 p32 g1 n32 +dt_bias +softplus +sbi +tie +dst +spec +accepted slots=19 tokens=3 pad=18 seed=8",
    "recurrent:f32 b4 h2 p32 g1 n32 +softplus +sbi +tie +varlen slots=4 tokens=3 seed=9",  # packed rows
    "recurrent:f32 b4 h2 p32 g1 n32 +dt_bias +sbi +tie +dst +spec +varlen slots=25 tokens=3 pad=24 seed=12",
    "recurrent:f32 b3 h2 p32 g1 n32 +dt_bias +softplus +sbi +tie +nowrite +inter slots=3 tokens=2 seed=10",
    "recurrent:f32 b3 h2 p32 g1 n32 +dt_bias +softplus +sbi +tie +inter slots=3 tokens=2 seed=10",
    "recurrent:f32 b3 h2 p32 g1 n32 +dt_bias +sbi +tie +dst +spec +nowrite +inter slots=18 tokens=2 seed=13",
    "recurrent:bf16 b2 h2 p32 g1 n32 +z +tie state=bf16 seed=5",  # a bf16 state
    "recurrent:f16 b2 h2 p32 g1 n64 +dt_bias +softplus +tie tokens=2 state=f16 seed=6",  # an f16 state, two tokens
    "recurrent:bf16 b2 h2 p32 g1 n32 +dt_bias +tie B=f32 dt_bias=bf16 seed=4",  # mixed dtypes, widened to f32
]

# Problems beyond FlashInfer's interface, and the words of the reason.
BEYOND = [
    ("recurrent:f32 b2 h2 p32 g1 n32 +dt_bias +softplus seed=5", "one dt per token and head"),
    ("recurrent:f32 b2 h2 p32 g1 n32 +dt_bias +softplus +Dhp +tie seed=5", "one D per head"),
    ("recurrent:f16 b3 h4 p8 g2 n8 +dt_bias +softplus +Dhp +z seed=2", "d_state 8"),
    ("recurrent:bf16 b2 h1 p4 g1 n32 +tie seed=1", "16-byte vectors"),
    ("recurrent:f32 b2 h2 p16 g1 n32 +tie tokens=2 seed=5", "head_dim 16"),
    ("recurrent:f32 b2 h6 p32 g2 n32 +tie tokens=2 seed=5", "nheads/ngroups 3"),
    ("recurrent:f32 b3 h2 p32 g1 n32 +sbi +tie +spec +inter slots=9 tokens=3 seed=10", "not both"),
    ("recurrent:f32 b3 h2 p32 g1 n32 +sbi +tie +dst +inter slots=6 tokens=2 seed=10", "not both"),
]


def on_host(update=None, bug=None, monkeypatch=None):
    """The adapter as a campaign runs it, with the stand-in installed as flashinfer.mamba and the
    tensors placed on the host instead of CUDA."""
    stand_in.install(monkeypatch, update or stand_in.make(bug))
    return types.SimpleNamespace(name=f"flashinfer_on_host{'_' + bug if bug else ''}",
                                 recurrent=functools.partial(fi.recurrent, place=stand_in.on_host))


@pytest.fixture(autouse=True)
def no_library_settings(monkeypatch):
    for variable in (fi.PATH_VARIABLE, fi.ALGORITHM_VARIABLE, fi.SHIM_VARIABLE):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the adapter may put a folder on it


def judged(adapter, text):
    return ssd_suite.check_case(adapter, ssd_suite.Problem(text))


def test_without_flashinfer_every_case_is_skipped_naming_it():
    if importlib.util.find_spec("flashinfer") is not None:
        pytest.skip("flashinfer is installed here")
    for text in SERVING + [text for text, _ in BEYOND]:
        j = judged(fi, text)
        assert j.verdict == "SKIPPED", (text, j.verdict, j.message)
        assert "flashinfer is not importable" in j.message and "No module named 'flashinfer'" in j.message, j.message
        assert fi.PATH_VARIABLE in j.message


def test_a_flashinfer_path_without_it_or_not_a_folder_is_named(monkeypatch, tmp_path):
    if importlib.util.find_spec("flashinfer") is not None:
        pytest.skip("flashinfer is installed here")
    monkeypatch.setenv(fi.PATH_VARIABLE, str(tmp_path))
    j = judged(fi, SERVING[0])
    assert j.verdict == "SKIPPED" and f"nor under {fi.PATH_VARIABLE}={tmp_path}" in j.message, j.message
    monkeypatch.setenv(fi.PATH_VARIABLE, str(tmp_path / "missing"))
    j = judged(fi, SERVING[0])
    assert j.verdict == "SKIPPED" and "is not a folder" in j.message, j.message


@pytest.mark.parametrize("text", SERVING)
def test_the_mapping_passes_with_flashinfer_semantics(text, monkeypatch):
    j = judged(on_host(monkeypatch=monkeypatch), text)
    assert j.verdict == "PASSED", (text, j.verdict, str(j))


@pytest.mark.parametrize("bug, text", [
    ("dt_bias_ignored", SERVING[0]),
    ("padded_slot_written", SERVING[1]),  # pad -1: the stand-in stores to state[-1], the last slot
    ("padded_slot_written", SERVING[2]),  # pad 8: the reserved slot changes
    ("padded_slot_written", SERVING[5]),  # speculative padding rows
    ("intermediate_only", SERVING[9]),
    ("update_state_ignored_with_dst",
     "recurrent:f32 b3 h2 p32 g1 n32 +dt_bias +softplus +sbi +tie +dst +nowrite slots=7 tokens=2 seed=11"),
])
def test_a_planted_flaw_of_flashinfer_fails(bug, text, monkeypatch):
    problem = ssd_suite.Problem(text)
    if bug == "padded_slot_written":  # the case must have padding rows to show it
        reads = ssd_suite.inputs(problem)["state_batch_indices"]
        assert np.any((reads < 0) | (reads == problem.values["pad"])), text
    j = ssd_suite.check_case(on_host(bug=bug, monkeypatch=monkeypatch), problem)
    assert j.verdict == "FAILED", (bug, text, j.verdict, j.message)


@pytest.mark.parametrize("text, reason", BEYOND)
def test_what_flashinfer_cannot_express_is_skipped_with_the_reason(text, reason, monkeypatch):
    j = judged(on_host(monkeypatch=monkeypatch), text)
    assert j.verdict == "SKIPPED" and reason in j.message, (text, j.verdict, j.message)


def test_a_one_token_row_that_reads_a_slot_and_writes_the_padding_id_is_skipped():
    problem = ssd_suite.Problem(SERVING[2])
    inputs = ssd_suite.inputs(problem)
    reads, writes = inputs["state_batch_indices"], inputs["dst_state_batch_indices"]
    row = int(np.flatnonzero(reads != problem.values["pad"])[0])
    writes[row] = problem.values["pad"]
    with pytest.raises(NotImplementedError, match="skips a store only when the read entry is pad_slot_id"):
        fi.arguments(problem, inputs)
    read_only = ssd_suite.Problem(SERVING[2] + " +nowrite")  # nothing is stored: the table is expressible
    assert fi.arguments(read_only, inputs)["disable_state_update"] is True


def test_the_per_head_roles_are_stride_0_views_and_d_is_zeros():
    problem = ssd_suite.Problem(SERVING[3])
    inputs = ssd_suite.inputs(problem)
    call = fi.arguments(problem, inputs)
    b, t, h, p = inputs["x"].shape
    n = inputs["A"].shape[-1]
    placed = {role: stand_in.on_host(call[role]) for role in ("A", "dt", "dt_bias", "D")}
    strides = {role: tuple(s // a.itemsize for s in a.strides) for role, a in placed.items()}
    assert strides == {"A": (1, 0, 0), "dt": (t * h, h, 1, 0), "dt_bias": (1, 0), "D": (1, 0)}
    assert placed["A"].shape == (h, p, n) and placed["dt"].shape == (b, t, h, p)
    assert np.array_equal(placed["dt"], inputs["dt"]) and np.array_equal(placed["A"], inputs["A"])
    assert not np.any(placed["D"]) and call["cache_steps"] == t


def test_padding_entries_become_the_pad_id_and_spec_writes_to_its_read_table():
    problem = ssd_suite.Problem(SERVING[4])  # +spec without +dst, pad=9
    inputs = ssd_suite.inputs(problem)
    call = fi.arguments(problem, inputs)
    reads = call["state_batch_indices"].array
    assert reads.dtype == np.int32 and np.all((reads >= 0) | (reads == 9))
    assert np.array_equal(call["dst_state_batch_indices"].array, reads)
    negative = fi.arguments(ssd_suite.Problem(SERVING[1]), ssd_suite.inputs(SERVING[1]))["state_batch_indices"]
    assert np.all(negative.array >= -1) and np.any(negative.array == -1)


def test_mixed_dtypes_go_widened_to_f32_and_agreeing_ones_as_they_are():
    call = fi.arguments(ssd_suite.Problem(SERVING[-1]), ssd_suite.inputs(SERVING[-1]))  # bf16, B=f32, dt_bias=bf16
    assert {role: call[role].dtype for role in ("x", "B", "C", "out", "dt", "D", "dt_bias", "A", "state")} == {
        "x": "f32", "B": "f32", "C": "f32", "out": "f32", "dt": "f32", "D": "f32", "dt_bias": "f32", "A": "f32",
        "state": "f32"}
    call = fi.arguments(ssd_suite.Problem(SERVING[11]), ssd_suite.inputs(SERVING[11]))  # bf16, state=bf16
    assert {role: call[role].dtype for role in ("x", "B", "C", "z", "out", "state")} == dict.fromkeys(
        ("x", "B", "C", "z", "out", "state"), "bf16")


def test_an_older_flashinfer_lacking_an_argument_is_skipped_naming_it(monkeypatch):
    current = stand_in.make()

    def older(state, x, dt, A, B, C, D, z=None, dt_bias=None, dt_softplus=False, state_batch_indices=None,
              pad_slot_id=-1, out=None):
        return current(state, x, dt, A, B, C, D, z=z, dt_bias=dt_bias, dt_softplus=dt_softplus,
                       state_batch_indices=state_batch_indices, pad_slot_id=pad_slot_id, out=out)

    adapter = on_host(update=older, monkeypatch=monkeypatch)
    assert judged(adapter, SERVING[1]).verdict == "PASSED"  # only the arguments a case uses are passed
    j = judged(adapter, SERVING[6])
    assert j.verdict == "SKIPPED" and "has no cu_seqlens, cache_steps" in j.message, j.message


def test_the_algorithm_variable_picks_flashinfers_kernel(monkeypatch):
    adapter = on_host(monkeypatch=monkeypatch)
    monkeypatch.setenv(fi.ALGORITHM_VARIABLE, "simple")
    assert fi.arguments(ssd_suite.Problem(SERVING[3]), ssd_suite.inputs(SERVING[3]))["algorithm"] == "simple"
    assert judged(adapter, SERVING[3]).verdict == "PASSED"
    monkeypatch.setenv(fi.ALGORITHM_VARIABLE, "fastest")
    j = judged(adapter, SERVING[3])
    assert j.verdict == "FAILED" and f"{fi.ALGORITHM_VARIABLE}=fastest" in j.message, j.message


def on_torch(update):
    """The stand-in called with the CUDA tensors the adapter placed: FlashInfer's stride and dtype
    checks on them, then `update` on host copies, its results written back into them."""
    import torch

    def call(**args):
        tensors = {arg: v for arg, v in args.items() if isinstance(v, torch.Tensor)}
        assert all(t.is_cuda for t in tensors.values())
        assert tensors["state"].is_contiguous() and tensors["out"].is_contiguous()
        stand_in.check_layout({role: tensors[role].stride() for role in ("A", "dt", "D", "dt_bias") if role in tensors})
        stand_in.check_dtypes({arg: t.dtype for arg, t in tensors.items()})
        host = {arg: (t.float() if t.is_floating_point() else t).cpu().numpy() for arg, t in tensors.items()}
        update(**{**args, **host})
        for arg in ("state", "out", "intermediate_states_buffer"):
            if arg in tensors:
                tensors[arg].copy_(torch.from_numpy(host[arg]))
        return tensors["out"]

    return call


def test_on_a_gpu_host_the_cuda_tensors_have_flashinfers_layout_and_pass(monkeypatch):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs torch with a CUDA device")
    stand_in.install(monkeypatch, on_torch(stand_in.make(check_strides=False)))  # the strides are checked on CUDA
    for text in SERVING:
        j = judged(fi, text)
        assert j.verdict == "PASSED", (text, j.verdict, str(j))


class _Strided:
    """Just what per_head_view reads of a tensor: its shape, and as_strided's arguments back."""

    def __init__(self, shape):
        self.shape = shape

    def dim(self):
        return len(self.shape)

    def contiguous(self):
        return self

    def as_strided(self, size, stride):
        return size, stride


def test_per_head_views_have_the_strides_flashinfer_checks_even_on_axes_of_one():
    # FlashInfer requires A strides (1, 0, 0), dt (H, 1, 0), dt_bias and D (1, 0), literally: one
    # head, or head_dim 1, must not leave a slice's stride (H = 1: A.stride(0) was 1024 on the H200).
    assert fi.per_head_view(_Strided((1,)), (1, 32, 32)) == ((1, 32, 32), (1, 0, 0))
    assert fi.per_head_view(_Strided((4,)), (4, 64, 128)) == ((4, 64, 128), (1, 0, 0))
    assert fi.per_head_view(_Strided((3, 1)), (3, 1, 32)) == ((3, 1, 32), (1, 1, 0))  # dt, H = 1
    assert fi.per_head_view(_Strided((1, 8)), (1, 8, 1)) == ((1, 8, 1), (8, 1, 0))  # dt, P = 1
    assert fi.per_head_view(_Strided((8,)), (8, 1)) == ((8, 1), (1, 0))  # dt_bias, P = 1
