"""The adapters of GPU libraries (mamba_ssm, vLLM, FlashInfer): on a host without torch, a CUDA device
or the library, every case is SKIPPED with the reason, never an error of the campaign; on a GPU host
with the library's sources named by its variable (FlashInfer's: its package, or the shim library of
tools/external/flashinfer/ in SSD_FLASHINFER_SHIM), the honest library passes the smoke problems of the
ops it implements (every op's first smoke problems, both dot-product modes are the caller's), and
the zxbcdt cases reach mamba_ssm and vLLM as real views of the in_proj buffer, with the strides
worked out here. On a host with torch and CUDA alone, the device views hold the inputs and their
gaps the poison."""
import importlib
import inspect
import io
import os

import numpy as np
import pytest

import ssd_suite
from ssd_suite.adapter import declared_f32_dots

ADAPTERS = {"mamba_ssm": "SSD_MAMBA_SSM_PATH", "vllm": "SSD_VLLM_PATH", "flashinfer": "SSD_FLASHINFER_PATH"}
# Other variables that make a library available: FlashInfer's kernels through the shim.
ALSO = {"flashinfer": ["SSD_FLASHINFER_SHIM"]}
SMOKE = ["mamba2:bf16 b2 s37 h4 p8 g2 n8 q16 +softplus +D +z seed=2",
         "mamba2:f32 b1 s40 h2 p4 g1 n4 q8 +softplus +init +varlen seq=0:5,20,15 seed=12",
         "mamba2:bf16 b1 s20 h2 p4 g2 n4 q8 +softplus +init +varlen seq=0:20 seed=13",
         "chunk_cumsum:bf16 b2 s37 h3 q16 +dt_bias +softplus seed=3",
         "chunk_coupling:f16 b2 s37 g2 n16 q16 seed=2",
         "chunk_state:f16 b2 s37 h4 p8 g2 n8 q16 seed=2",
         "state_passing:f16 b2 s100 q16 h3 d16 +init seed=2",
         "chunk_scan:f16 b2 s37 h4 p8 g2 n8 q16 +D +z seed=2",
         "recurrent:f16 b3 h4 p8 g2 n8 +dt_bias +softplus +Dhp +z seed=2"]
# FlashInfer's decode step SKIPS the recurrent smoke problem (untied, d_state 8): problems it takes.
SMOKE_OF = {"flashinfer": ["recurrent:bf16 b4 h4 p64 g2 n64 +dt_bias +softplus +z +sbi +tie slots=9 seed=3",
                           "recurrent:bf16 b3 h4 p64 g2 n128 +dt_bias +softplus +sbi +tie +dst +spec +accepted "
                           "slots=19 tokens=3 pad=18 seed=8"]}
# Laid-out cases (docs/problem-string.md 3.1): mamba2 for each library's combined forward (vLLM's
# takes one sequence: b1, a power-of-two q), recurrent +tie, and strided views.
LAYOUT = ["mamba2:bf16 b2 s37 h4 p8 g2 n8 q16 +softplus +D +z layout=zxbcdt dt=bf16 seed=15",
          "mamba2:f32 b1 s40 h2 p4 g1 n4 q8 +softplus +z layout=zxbcdt seed=16",
          "recurrent:f32 b2 h4 p4 g2 n8 +dt_bias +softplus +Dhp +z +tie layout=zxbcdt seed=9",
          "mamba2:f16 b1 s37 h4 p8 g2 n8 q16 +softplus +D +z layout=strided seed=17",
          "chunk_scan:f16 b2 s37 h4 p8 g2 n8 q16 +D +z layout=zxbcdt seed=9"]
# What reaches each library's combined forward for its zxbcdt case: (strides, storage offset) in
# elements. mamba_ssm, b2 s37 h4 p8 g2 n8: HP = 32, GN = 16, W = 2*32 + 2*16 + 4 = 100, a batch row
# 37 rows of W; z at column 0, x at HP, B at 2HP = 64, C at 2HP + GN = 80, dt at 2HP + 2GN = 96.
# vLLM, b1 s40 h2 p4 g1 n4: HP = 8, GN = 4, W = 16 + 8 + 2 = 26, the batch axis indexed away.
VIEWS_SEEN = {
    "mamba_ssm": (LAYOUT[0], "_mamba_chunk_scan_combined_fwd",
                  {"z": ((3700, 100, 8, 1), 0), "x": ((3700, 100, 8, 1), 32), "B": ((3700, 100, 8, 1), 64),
                   "C": ((3700, 100, 8, 1), 80), "dt": ((3700, 100, 1), 96)}),
    "vllm": (LAYOUT[1], "mamba_chunk_scan_combined_varlen",
             {"z": ((26, 4, 1), 0), "x": ((26, 4, 1), 8), "B": ((26, 4, 1), 16), "C": ((26, 4, 1), 20),
              "dt": ((26, 1), 24)}),
}


def adapter(name):
    try:
        return importlib.import_module(f"ssd_suite.adapters.{name}")
    except ImportError:
        pytest.skip(f"no adapter module {name}")


def variables(name):
    return [ADAPTERS[name]] + ALSO.get(name, [])


def available(name):
    """torch with CUDA, and one of the library's variables set."""
    return has_cuda_torch() and any(os.environ.get(v) for v in variables(name))


def has_cuda_torch():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_without_the_library_every_case_is_skipped_with_its_reason(name, monkeypatch):
    if available(name):
        pytest.skip("the library is available here")
    for variable in variables(name):
        monkeypatch.delenv(variable, raising=False)
    module = adapter(name)
    assert declared_f32_dots(module) in ("ieee", "tf32")
    for text in SMOKE + SMOKE_OF.get(name, []) + LAYOUT:
        problem = ssd_suite.Problem(text)
        if not hasattr(module, problem.op):
            continue
        j = ssd_suite.check_case(module, problem)
        assert j.verdict == "SKIPPED" and j.message, (text, j.verdict, j.message)


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_on_a_gpu_host_the_library_passes_the_smoke_problems(name):
    if not available(name):
        pytest.skip(f"needs torch with CUDA and {' or '.join(variables(name))}")
    module = adapter(name)
    out = io.StringIO()
    result = ssd_suite.fuzz(module, problems=SMOKE + SMOKE_OF.get(name, []), out=out, progress=False,
                            shrink_seconds=0)
    tested = [op for op, t in result.tallies.items() if t.cases > t.skipped]
    assert tested, out.getvalue()
    assert result.exit_status == 0, out.getvalue()


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_on_a_gpu_host_the_library_passes_laid_out_cases(name):
    if not available(name):
        pytest.skip(f"needs torch with CUDA and {' or '.join(variables(name))}")
    if name == "flashinfer":
        pytest.skip("FlashInfer's decode step takes none of these (d_state 8, +Dhp), and its adapter passes dense "
                    "tensors (FlashInfer's stride checks)")
    out = io.StringIO()
    result = ssd_suite.fuzz(adapter(name), problems=LAYOUT, out=out, progress=False, shrink_seconds=0)
    assert result.exit_status in (0, 3) and any(t.cases > t.skipped for t in result.tallies.values()), out.getvalue()


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_on_a_gpu_host_zxbcdt_views_reach_the_library(name, monkeypatch):
    if not available(name):
        pytest.skip(f"needs torch with CUDA and {' or '.join(variables(name))}")
    if name not in VIEWS_SEEN:
        pytest.skip(f"no zxbcdt call of {name} is recorded here (its decode step takes no in_proj views)")
    module = adapter(name)
    text, function, want = VIEWS_SEEN[name]
    combined = module._ops("ssd_combined")
    original = getattr(combined, function)
    seen = {}

    def recording(*args, **kwargs):
        arguments = inspect.signature(original).bind(*args, **kwargs).arguments
        for role in want:
            seen[role] = (tuple(arguments[role].stride()), arguments[role].storage_offset())
        return original(*args, **kwargs)

    monkeypatch.setattr(combined, function, recording)
    j = ssd_suite.check_case(module, ssd_suite.Problem(text))
    assert j.verdict == "PASSED", j.description
    assert seen == want


def test_on_a_cuda_host_device_views_hold_the_inputs_and_the_gaps_poison():
    if not has_cuda_torch():
        pytest.skip("needs torch with CUDA")
    import torch

    from ssd_suite.adapters._torch import Tensors

    # mamba2 without +z: W = 14 (H=2 P=2 G=1 N=2), z's columns 0..3 are gaps; recurrent +tie's dt is
    # column 16 of W = 18, expanded along P with stride 0
    for text, poison_columns in (("mamba2:bf16 b2 s3 h2 p2 g1 n2 q2 layout=zxbcdt dt=bf16 seed=1", range(0, 4)),
                                 ("recurrent:f32 b2 h2 p3 g1 n2 +tie layout=zxbcdt seed=1", range(0, 6))):
        x = ssd_suite.inputs(text)
        t = Tensors(x)
        layout = x.layout
        for role, v in layout.placements.items():
            view = t[role]
            assert view.is_cuda and tuple(view.stride()) == v.strides and view.storage_offset() == v.offset
            assert torch.equal(view.float().cpu(), torch.from_numpy(np.ascontiguousarray(x[role])).float())
        b = layout.buffers["zxbcdt"]
        flat = torch.as_strided(t["x"], (b.extent,), (1,), 0)
        bits = flat.view(torch.int16 if b.dtype == "bf16" else torch.int32).cpu().numpy()
        width = b.extent // 6 if text.startswith("mamba2") else b.extent // 2
        rows = bits.reshape(-1, width).astype(np.int64) & (0xFFFF if b.dtype == "bf16" else 0xFFFFFFFF)
        assert np.all(rows[:, list(poison_columns)] == b.poison)
