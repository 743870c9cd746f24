"""The adapters of GPU libraries (mamba_ssm, vLLM, FlashInfer): on a host without torch, a CUDA device
or the library, every case is SKIPPED with the reason, never an error of the campaign; on a GPU host
with the library's sources named by its variable, the honest library passes the smoke problems of the
ops it implements (every op's first smoke problems, both dot-product modes are the caller's)."""
import importlib
import io
import os

import pytest

import ssd_suite
from ssd_suite.adapter import declared_f32_dots

ADAPTERS = {"mamba_ssm": "SSD_MAMBA_SSM_PATH", "vllm": "SSD_VLLM_PATH", "flashinfer": "SSD_FLASHINFER_PATH"}
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


def adapter(name):
    try:
        return importlib.import_module(f"ssd_suite.adapters.{name}")
    except ImportError:
        pytest.skip(f"no adapter module {name}")


def has_cuda_torch():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_without_the_library_every_case_is_skipped_with_its_reason(name, monkeypatch):
    if has_cuda_torch() and os.environ.get(ADAPTERS[name]):
        pytest.skip("the library is available here")
    monkeypatch.delenv(ADAPTERS[name], raising=False)
    module = adapter(name)
    assert declared_f32_dots(module) in ("ieee", "tf32")
    for text in SMOKE + SMOKE_OF.get(name, []):
        problem = ssd_suite.Problem(text)
        if not hasattr(module, problem.op):
            continue
        j = ssd_suite.check_case(module, problem)
        assert j.verdict == "SKIPPED" and j.message, (text, j.verdict, j.message)


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_on_a_gpu_host_the_library_passes_the_smoke_problems(name):
    if not (has_cuda_torch() and os.environ.get(ADAPTERS[name])):
        pytest.skip(f"needs torch with CUDA and {ADAPTERS[name]}")
    module = adapter(name)
    out = io.StringIO()
    result = ssd_suite.fuzz(module, problems=SMOKE + SMOKE_OF.get(name, []), out=out, progress=False,
                            shrink_seconds=0)
    tested = [op for op, t in result.tallies.items() if t.cases > t.skipped]
    assert tested, out.getvalue()
    assert result.exit_status == 0, out.getvalue()
