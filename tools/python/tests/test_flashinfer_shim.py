"""The FlashInfer shim (tools/external/flashinfer/): its Python wrapper's shape normalisation and
checks (FlashInfer's flashinfer/mamba/selective_state_update.py) on torch-free stand-ins of tensors;
with the built library ($SSD_FLASHINFER_SHIM), csrc's argument checks and what is not built, and that
every call the adapter makes for the serving problems passes those checks and has a kernel; that the
adapter takes the shim when the variable is set; on a GPU host, FlashInfer's kernels judged."""
import functools
import os

import pytest

import ssd_suite
from fake_tensor import FakeTensor, placed
from ssd_suite.adapters import flashinfer as fi
from test_flashinfer_adapter import SERVING
from test_gpu_adapters import SMOKE_OF

# Read in FlashInfer's source, to be settled by a run: with intermediate_states_buffer its simple
# multi-token kernel stores no state to the cache (docs/external-kernels.md).
DOUBTFUL = {SERVING[9]}


@pytest.fixture(scope="module")
def shim():
    """tools/external/flashinfer/flashinfer_shim.py, loaded as the adapter loads it."""
    return fi.shim_module(os.environ.get(fi.SHIM_VARIABLE, ""))


@pytest.fixture
def lib(shim):
    path = os.environ.get(fi.SHIM_VARIABLE)
    if not path or not os.path.isfile(path):
        pytest.skip(f"needs the built library in {fi.SHIM_VARIABLE} (tools/external/flashinfer/build.sh)")
    return shim.load(path)


def has_gpu():
    """A host where a call with fake pointers could reach a kernel: such tests are not run there."""
    if os.path.exists("/dev/nvidiactl"):
        return True
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def one_token(batch=3, heads=2, dim=32, dstate=32, groups=1, slots=4, dtype="f32", state="f32"):
    """The arguments of a one-token call as a Mamba2 layer makes it (FakeTensors)."""
    return dict(state=FakeTensor((slots, heads, dim, dstate), state), x=FakeTensor((batch, heads, dim), dtype),
                dt=FakeTensor((batch, heads, dim), "f32", (heads, 1, 0)),
                A=FakeTensor((heads, dim, dstate), "f32", (1, 0, 0)),
                B=FakeTensor((batch, groups, dstate), dtype), C=FakeTensor((batch, groups, dstate), dtype),
                D=FakeTensor((heads, dim), "f32", (1, 0)), out=FakeTensor((batch, heads, dim), dtype))


def tokens(batch=3, steps=2, heads=2, dim=32, dstate=32, slots=4):
    """A multi-token call: rows [batch, steps, ...], cache_steps = steps."""
    return dict(state=FakeTensor((slots, heads, dim, dstate)), x=FakeTensor((batch, steps, heads, dim)),
                dt=FakeTensor((batch, steps, heads, dim), "f32", (steps * heads, heads, 1, 0)),
                A=FakeTensor((heads, dim, dstate), "f32", (1, 0, 0)), B=FakeTensor((batch, steps, 1, dstate)),
                C=FakeTensor((batch, steps, 1, dstate)), D=FakeTensor((heads, dim), "f32", (1, 0)),
                out=FakeTensor((batch, steps, heads, dim)), cache_steps=steps)


# --- the wrapper, without the library -------------------------------------------------------------

def test_the_wrapper_gives_rows_heads_and_tokens_their_axes(shim, monkeypatch):
    monkeypatch.setattr(shim, "empty_like", lambda t: FakeTensor(t.shape, t.dtype))
    args = dict(state=FakeTensor((4, 32, 32)), x=FakeTensor((3, 32)), dt=FakeTensor((3, 32), "f32", (1, 0)),
                A=FakeTensor((32, 32), "f32", (0, 0)), B=FakeTensor((3, 32)), C=FakeTensor((3, 32)),
                D=FakeTensor((32,), "f32", (0,)), dt_bias=FakeTensor((32,), "f32", (0,)))
    tensors, scalars, out = shim.prepare(**args)
    shapes = {name: tensors[name].shape for name in ("state", "x", "dt", "A", "B", "D", "dt_bias", "output")}
    assert shapes == {"state": (4, 1, 32, 32), "x": (3, 1, 32), "dt": (3, 1, 32), "A": (1, 32, 32), "B": (3, 1, 32),
                      "D": (1, 32), "dt_bias": (1, 32), "output": (3, 1, 32)}
    assert out is tensors["output"] and scalars["cache_steps"] == 0 and scalars["algorithm"] == 0
    rows = dict(args, x=FakeTensor((3, 2, 32)), dt=FakeTensor((3, 2, 32), "f32", (2, 1, 0)), B=FakeTensor((3, 1, 32)),
                C=FakeTensor((3, 1, 32)), out=FakeTensor((3, 1, 2, 32)), cache_steps=1)
    tensors, scalars, _ = shim.prepare(**rows)  # a multi-token call of one token a row: a T axis
    assert tensors["x"].shape == (3, 1, 2, 32) and tensors["B"].shape == (3, 1, 1, 32)
    packed = dict(rows, cu_seqlens=FakeTensor((4,), "i32"), cache_steps=3)
    tensors, _, _ = shim.prepare(**packed)  # varlen: the packed rows as they are
    assert tensors["x"].shape == (3, 2, 32)


@pytest.mark.parametrize("change, error, words", [
    ({"dst_state_batch_indices": FakeTensor((3,), "i32"), "intermediate_states_buffer": FakeTensor((3, 2, 2, 32, 32))},
     ValueError, "mutually exclusive"),
    ({"algorithm": "fastest"}, ValueError, "Unknown algorithm: fastest"),
    ({"backend": "triton"}, ValueError, "Unknown backend: triton"),
    ({"rand_seed": 7}, TypeError, "rand_seed must be a CUDA int64 tensor, got int"),
    ({"rand_seed": FakeTensor((2,), "i64")}, ValueError, "single-element tensor, got numel=2"),
    ({"rand_seed": FakeTensor((1,), "i32")}, ValueError, "must have dtype int64"),
    ({"rand_seed": FakeTensor((1,), "i64", cuda=False)}, ValueError, "must be a CUDA tensor"),
    ({"rand_seed": FakeTensor((1,), "i64"), "philox_rounds": 0}, ValueError, "philox_rounds must be > 0"),
])
def test_the_wrapper_raises_as_flashinfers(shim, change, error, words):
    with pytest.raises(error, match=words):
        shim.prepare(**dict(one_token(), **change))


def test_the_call_struct_carries_sizes_strides_dtypes_and_scalars(shim):
    args = one_token()
    args.update(state_batch_indices=FakeTensor((3,), "i32"), pad_slot_id=9, dt_softplus=True, algorithm="vertical")
    tensors, scalars, _ = shim.prepare(**args)
    call = shim.make_call(tensors, scalars, None)
    assert (call.A.dtype, call.A.ndim, tuple(call.A.sizes)[:3], tuple(call.A.strides)[:3]) == (1, 3, (2, 32, 32), (1, 0, 0))
    assert call.x.data == args["x"].data_ptr() and call.x.on_cuda == 1
    assert call.state_batch_indices.dtype == 5 and call.z.dtype == 0 and call.rand_seed.dtype == 0
    assert (call.pad_slot_id, call.dt_softplus, call.algorithm, call.disable_state_update) == (9, 1, 2, 0)
    with pytest.raises(NotImplementedError, match="z: dtype torch.float64"):
        shim.make_call(dict(tensors, z=FakeTensor((3, 2, 32), "torch.float64")), scalars, None)
    with pytest.raises(ValueError, match="out: 7 dimensions"):
        shim.make_call(dict(tensors, output=FakeTensor((1,) * 7)), scalars, None)


def test_statuses_become_flashinfers_exceptions(shim, monkeypatch, tmp_path):
    shim.raise_for(shim.OK, "")
    with pytest.raises(NotImplementedError, match="the FlashInfer shim: no stp kernel"):
        shim.raise_for(shim.NOT_BUILT, "no stp kernel")
    with pytest.raises(RuntimeError, match="^A.stride"):
        shim.raise_for(shim.INVALID, "A.stride(1) must be 0")
    with pytest.raises(RuntimeError, match="CUDA error"):
        shim.raise_for(shim.CUDA_ERROR, "launch failed")
    monkeypatch.delenv(shim.SHIM_VARIABLE, raising=False)
    with pytest.raises(NotImplementedError, match=shim.SHIM_VARIABLE):
        shim.load()
    with pytest.raises(NotImplementedError, match="is not a file"):
        shim.load(str(tmp_path / "libflashinfer-ssu-shim.so"))


# --- the adapter takes the shim -------------------------------------------------------------------

def test_the_adapter_takes_the_shim_when_its_variable_is_set(monkeypatch, tmp_path):
    monkeypatch.delenv(fi.PATH_VARIABLE, raising=False)
    missing = tmp_path / "libflashinfer-ssu-shim.so"
    monkeypatch.setenv(fi.SHIM_VARIABLE, str(missing))
    j = ssd_suite.check_case(fi, ssd_suite.Problem(SERVING[0]))
    assert j.verdict == "SKIPPED" and f"the FlashInfer shim library {missing} is not a file" in j.message, j.message


def test_the_adapter_binds_the_shims_wrapper_to_the_library(lib, monkeypatch):
    monkeypatch.setenv(fi.SHIM_VARIABLE, lib.path)
    update = fi.selective_state_update()
    assert isinstance(update, functools.partial) and update.func.__module__ == "flashinfer_shim"
    assert update.keywords["library"] is lib


# --- with the library: csrc's checks, what is not built -------------------------------------------

def test_the_library_names_its_source_and_kernels(lib):
    assert lib.source() == "flashinfer-ai/flashinfer fb28d7242b3506a2348265962041acc1fb56cca4"
    configs = [line.split() for line in lib.configs()]
    assert configs and all(len(c) == 10 and c[0] in ("stp", "mtp") and c[-1] in ("sm90", "sm80") for c in configs)
    assert ["stp", "f32", "f32", "f32", "f32", "i32", "32", "32", "1", "sm80"] in configs  # head_dim 32: pre-Hopper


def call_with(lib, shim, args):
    tensors, scalars, _ = shim.prepare(**args)
    lib.run(shim.make_call(tensors, scalars, None))


@pytest.mark.parametrize("change, words", [
    ({"A": FakeTensor((2, 32, 32), "f32", (1, 1, 1))}, r"A.stride\(1\) must be 0 \(broadcasted\), got 1"),
    ({"x": FakeTensor((3, 2, 32), cuda=False)}, "x must be a CUDA tensor"),
    ({"dt": FakeTensor((3, 2, 32))}, r"dt.stride\(1\) must be 1, got 32"),
    ({"D": FakeTensor((2, 32), "bf16", (1, 0))}, "D must have the same dtype as dt"),
    ({"B": FakeTensor((3, 1, 32), "bf16")}, "B must have the same dtype as x"),
    ({"out": FakeTensor((3, 64))}, "out must be a 3D tensor"),
    ({"state": FakeTensor((2, 2, 32, 32))}, r"state.size\(0\) must be >= x.size\(0\)"),
    ({"B": FakeTensor((3, 3, 32)), "C": FakeTensor((3, 3, 32))}, "nheads must be divisible by ngroups"),
    ({"state_batch_indices": FakeTensor((2,), "i32")}, r"state_batch_indices.size\(0\) must be >= batch \(3\)"),
])
def test_csrcs_checks_name_the_argument(lib, shim, change, words):
    with pytest.raises(RuntimeError, match=words):
        call_with(lib, shim, dict(one_token(), **change))


@pytest.mark.parametrize("change, words", [
    ({"cu_seqlens": FakeTensor((4,), "i32"), "x": FakeTensor((6, 2, 32)), "cache_steps": 0},
     "cache_steps must be >= 1 in varlen mode"),
    ({"num_accepted_tokens": FakeTensor((3,), "i32")}, "state_batch_indices is required when num_accepted_tokens"),
    ({"intermediate_state_indices": FakeTensor((2,), "i32")}, r"intermediate_state_indices.shape must be \(3\)"),
    ({"B": FakeTensor((3, 3, 1, 32)), "C": FakeTensor((3, 3, 1, 32))}, r"B.size\(1\) must equal ntokens_mtp"),
])
def test_csrcs_multi_token_checks_name_the_argument(lib, shim, change, words):
    with pytest.raises(RuntimeError, match=words):
        call_with(lib, shim, dict(tokens(), **change))


@pytest.mark.parametrize("args, words", [
    (one_token(dim=48, dstate=32), "no stp kernel of this shim for state f32, x f32, dt f32, A f32, indices i32, dim 48"),
    (one_token(state="f16"), "no stp kernel of this shim for state f16, x f32"),
    (dict(one_token(), state_batch_indices=FakeTensor((3,), "i64")), "indices i64"),
    (dict(tokens(steps=5), cache_steps=5), "no mtp kernel .* ntokens 5"),
    (dict(one_token(), rand_seed=FakeTensor((1,), "i64")), "stochastic rounding"),
    (dict(one_token(), state_scale=FakeTensor((4, 2, 32))), "int16 state with block scales"),
    (dict(tokens(), cu_seqlens=FakeTensor((4,), "i64"), x=FakeTensor((6, 2, 32)), cache_steps=2), "cu_seqlens: only int32"),
])
def test_what_the_shim_has_not_built_is_not_implemented(lib, shim, args, words):
    if "cu_seqlens" in args:  # packed rows: x, dt, B, C and out of 6 tokens
        args = dict(args, dt=FakeTensor((6, 2, 32), "f32", (2, 1, 0)), B=FakeTensor((6, 1, 32)),
                    C=FakeTensor((6, 1, 32)), out=FakeTensor((6, 2, 32)))
    with pytest.raises(NotImplementedError, match=words):
        call_with(lib, shim, args)


@pytest.mark.parametrize("text", SERVING + SMOKE_OF["flashinfer"])
def test_the_adapters_calls_pass_csrcs_checks_and_have_kernels(text, lib, shim, monkeypatch):
    """Without a device the call stops where the shim first needs one, after csrc's checks and the
    choice of a built kernel."""
    if has_gpu():
        pytest.skip("a call with fake pointers would reach a kernel here")
    monkeypatch.setattr(shim, "current_stream", lambda tensor: None)
    problem = ssd_suite.Problem(text)
    call = fi.arguments(problem, ssd_suite.inputs(problem))
    update = functools.partial(shim.selective_state_update, library=lib)
    with pytest.raises(RuntimeError, match="cannot make CUDA device 0 current"):
        fi.run(call, update, placed)


# --- on a GPU host: FlashInfer's kernels ----------------------------------------------------------

@pytest.mark.parametrize("text", [t for t in SERVING + SMOKE_OF["flashinfer"] if t not in DOUBTFUL])
def test_on_a_gpu_host_flashinfers_kernels_pass_the_serving_problems(text, monkeypatch):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or not os.path.isfile(os.environ.get(fi.SHIM_VARIABLE, "")):
        pytest.skip(f"needs torch with a CUDA device and {fi.SHIM_VARIABLE}")
    j = ssd_suite.check_case(fi, ssd_suite.Problem(text))
    assert j.verdict == "PASSED", (text, j.verdict, str(j))
