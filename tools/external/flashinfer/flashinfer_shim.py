"""FlashInfer's flashinfer.mamba.selective_state_update where its package cannot run (no TVM FFI, no
JIT): the Python wrapper of flashinfer/mamba/selective_state_update.py at flashinfer-ai/flashinfer
fb28d7242b35, written anew from reading it, calling libflashinfer-ssu-shim.so (build.sh: FlashInfer's
own kernels, compiled from its headers, behind csrc's checks) through ctypes with the tensors' data
pointers, sizes and strides, on the current CUDA stream.

    import flashinfer_shim
    out = flashinfer_shim.selective_state_update(state, x, dt, A, B, C, D, ..., library="/path/lib.so")

`library` (keyword only, not FlashInfer's) is the shim's path or a Library; by default
$SSD_FLASHINFER_SHIM. What the wrapper does here as FlashInfer's does: the shape normalisation
(2D rows to 3D, a T axis for multi-token calls, 1D A, D, dt_bias and 3D state given a head axis),
rand_seed's checks, the ValueError for intermediate_states_buffer with dst_state_batch_indices, `out`
allocated when None, the algorithm names. What the shim lacks raises NotImplementedError naming it:
kernels for dtypes and sizes not built (FlashInfer's JIT would compile them), the int16 state with
scales and stochastic rounding (rand_seed). backend="cake" takes FlashInfer's own kernels, as
FlashInfer does on every GPU but SM100 and SM103. Errors of csrc's checks and of FlashInfer's launchers
raise RuntimeError with FlashInfer's message.

Only torch's tensor methods are used (dim, size, stride, unsqueeze, squeeze, data_ptr, dtype,
is_cuda, device), and torch itself only to allocate `out` and to find the current stream."""
import ctypes
import os

SHIM_VARIABLE = "SSD_FLASHINFER_SHIM"
ABI = 1  # SSU_SHIM_ABI of ssu_shim.h
MAX_DIMS = 6

# enum ssu_dtype of ssu_shim.h, by str(tensor.dtype).
DTYPES = {"torch.float32": 1, "torch.float16": 2, "torch.bfloat16": 3, "torch.int16": 4, "torch.int32": 5,
          "torch.int64": 6}
# FlashInfer's algorithm names and the SSUAlgorithm values its wrapper passes.
ALGORITHMS = {"auto": 0, "simple": 1, "vertical": 2, "horizontal": 3, "async_horizontal": 1}
BACKENDS = ("auto", "flashinfer", "cake")
OK, INVALID, NOT_BUILT, CUDA_ERROR = 0, 1, 2, 3


class Tensor(ctypes.Structure):
    """ssu_tensor."""
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("on_cuda", ctypes.c_int32), ("device", ctypes.c_int32),
                ("sizes", ctypes.c_int64 * MAX_DIMS), ("strides", ctypes.c_int64 * MAX_DIMS)]


# ssu_call's tensor arguments, in its order.
TENSORS = ("state", "x", "dt", "A", "B", "C", "D", "z", "dt_bias", "state_batch_indices", "dst_state_batch_indices",
           "state_scale", "output", "intermediate_states_buffer", "intermediate_state_indices",
           "intermediate_state_scales", "rand_seed", "cu_seqlens", "num_accepted_tokens")


class Call(ctypes.Structure):
    """ssu_call."""
    _fields_ = [(name, Tensor) for name in TENSORS] + [
        ("pad_slot_id", ctypes.c_int64), ("cache_steps", ctypes.c_int64), ("algorithm", ctypes.c_int64),
        ("dt_softplus", ctypes.c_int32), ("disable_state_update", ctypes.c_int32), ("stream", ctypes.c_void_p)]


class Library:
    """libflashinfer-ssu-shim.so, loaded and checked to be of this module's ABI."""

    def __init__(self, path):
        if not os.path.isfile(path):
            raise NotImplementedError(f"the FlashInfer shim library {path} is not a file (tools/external/flashinfer/build.sh)")
        try:
            self._lib = ctypes.CDLL(os.path.abspath(path))
        except OSError as e:
            raise NotImplementedError(f"the FlashInfer shim library {path} does not load: {e}") from e
        self.path = path
        lib = self._lib
        lib.ssu_shim_abi.restype = ctypes.c_int
        lib.ssu_shim_call_size.restype = ctypes.c_size_t
        lib.ssu_shim_source.restype = ctypes.c_char_p
        lib.ssu_shim_configs.restype = ctypes.c_char_p
        lib.ssu_shim_selective_state_update.restype = ctypes.c_int
        lib.ssu_shim_selective_state_update.argtypes = [ctypes.POINTER(Call), ctypes.c_char_p, ctypes.c_size_t]
        if lib.ssu_shim_abi() != ABI or lib.ssu_shim_call_size() != ctypes.sizeof(Call):
            raise NotImplementedError(f"the FlashInfer shim library {path} has ABI {lib.ssu_shim_abi()} and a "
                                      f"{lib.ssu_shim_call_size()}-byte call, this module ABI {ABI} and "
                                      f"{ctypes.sizeof(Call)} bytes: rebuild it")

    def source(self):
        """'flashinfer-ai/flashinfer <commit>': what its kernels were compiled from."""
        return self._lib.ssu_shim_source().decode()

    def configs(self):
        """The built configurations: 'stp|mtp state input weight A index dim dstate ntokens module' each."""
        return self._lib.ssu_shim_configs().decode().splitlines()

    def run(self, call):
        """Runs a Call; raises what FlashInfer would (RuntimeError) or NotImplementedError (not built)."""
        message = ctypes.create_string_buffer(2048)
        status = self._lib.ssu_shim_selective_state_update(ctypes.byref(call), message, len(message))
        raise_for(status, message.value.decode(errors="replace"))


def raise_for(status, message):
    """The Python exception of an ssu_status."""
    if status == OK:
        return
    if status == NOT_BUILT:
        raise NotImplementedError(f"the FlashInfer shim: {message}")
    if status == INVALID:
        raise RuntimeError(message)
    raise RuntimeError(f"the FlashInfer shim ({'CUDA' if status == CUDA_ERROR else 'internal'} error): {message}")


_loaded = {}


def load(which=None):
    """A Library: `which` itself, the one at path `which`, or at $SSD_FLASHINFER_SHIM (loaded once per path)."""
    if isinstance(which, Library):
        return which
    path = which or os.environ.get(SHIM_VARIABLE)
    if not path:
        raise NotImplementedError(f"no FlashInfer shim library: pass library= or set {SHIM_VARIABLE}")
    if path not in _loaded:
        _loaded[path] = Library(path)
    return _loaded[path]


def describe(tensor, name):
    """ssu_tensor of an argument (None: absent), naming it in what it refuses."""
    t = Tensor()
    if tensor is None:
        return t
    kind = str(tensor.dtype)
    if kind not in DTYPES:
        raise NotImplementedError(f"{name}: dtype {kind} is not one FlashInfer's kernels take here")
    ndim = tensor.dim()
    if ndim > MAX_DIMS:
        raise ValueError(f"{name}: {ndim} dimensions, at most {MAX_DIMS}")
    t.data, t.dtype, t.ndim = tensor.data_ptr(), DTYPES[kind], ndim
    t.on_cuda = 1 if tensor.is_cuda else 0
    index = getattr(tensor.device, "index", None)
    t.device = index if index is not None else 0
    for i in range(ndim):
        t.sizes[i], t.strides[i] = tensor.size(i), tensor.stride(i)
    return t


def current_stream(tensor):
    """torch's current CUDA stream on the tensor's device, as a cudaStream_t."""
    import torch
    return torch.cuda.current_stream(tensor.device).cuda_stream


def empty_like(tensor):
    import torch
    return torch.empty_like(tensor)


def _with_head_axes(state, A, D, dt_bias):
    """The wrapper's: 3D state, 2D A and 1D D and dt_bias gain their head axis."""
    if state.dim() == 3:
        state = state.unsqueeze(1)
    if A.dim() == 2:
        A = A.unsqueeze(0)
    if D.dim() == 1:
        D = D.unsqueeze(0)
    if dt_bias is not None and dt_bias.dim() == 1:
        dt_bias = dt_bias.unsqueeze(0)
    return state, A, D, dt_bias


def _as_rows(t, is_mtp):
    """The wrapper's for x, dt, B, C and z outside varlen: (batch, n) -> (batch, 1, n), and a
    multi-token call's (batch, heads, n) -> (batch, 1, heads, n)."""
    if t is None:
        return None
    if t.dim() == 2:
        t = t.unsqueeze(1)
    if is_mtp and t.dim() == 3:
        t = t.unsqueeze(1)
    return t


def _check_rand_seed(rand_seed, state_scale, philox_rounds):
    """The wrapper's checks of rand_seed (before the shim says it has no stochastic rounding)."""
    if rand_seed is None:
        return
    if not hasattr(rand_seed, "data_ptr"):
        raise TypeError(f"rand_seed must be a CUDA int64 tensor, got {type(rand_seed).__name__}")
    if rand_seed.numel() != 1:
        raise ValueError(f"rand_seed must be a single-element tensor, got numel={rand_seed.numel()}")
    if str(rand_seed.dtype) != "torch.int64":
        raise ValueError(f"rand_seed must have dtype int64, got {rand_seed.dtype}")
    if not rand_seed.is_cuda:
        raise ValueError("rand_seed must be a CUDA tensor")
    if state_scale is not None:
        raise ValueError("rand_seed and state_scale cannot both be provided")
    if philox_rounds <= 0:
        raise ValueError(f"philox_rounds must be > 0 when rand_seed is provided, got {philox_rounds}")


def prepare(state, x, dt, A, B, C, D, z=None, dt_bias=None, dt_softplus=False, state_batch_indices=None,
            pad_slot_id=-1, state_scale=None, out=None, disable_state_update=False, intermediate_states_buffer=None,
            intermediate_state_indices=None, intermediate_state_scales=None, rand_seed=None, philox_rounds=10,
            cache_steps=0, algorithm="auto", dst_state_batch_indices=None, cu_seqlens=None, num_accepted_tokens=None,
            backend="auto"):
    """The wrapper's work before its kernel call: (the Call's tensors by argument, its scalars, the
    output tensor). Raises as the wrapper does."""
    is_varlen = cu_seqlens is not None and x.dim() == 3
    is_mtp = cache_steps >= 1 and not is_varlen
    state, A, D, dt_bias = _with_head_axes(state, A, D, dt_bias)
    if not is_varlen:
        x, dt, B, C, z = (_as_rows(t, is_mtp) for t in (x, dt, B, C, z))
    if state_scale is not None and state_scale.dim() == 4 and state_scale.size(-1) == 1:
        state_scale = state_scale.squeeze(-1)
    _check_rand_seed(rand_seed, state_scale, philox_rounds)
    if intermediate_states_buffer is not None and dst_state_batch_indices is not None:
        raise ValueError("intermediate_states_buffer and dst_state_batch_indices are mutually exclusive")
    if algorithm not in ALGORITHMS:
        raise ValueError(f"Unknown algorithm: {algorithm}")
    if backend not in BACKENDS:
        raise ValueError(f"Unknown backend: {backend}")
    output = out if out is not None else empty_like(x)
    tensors = {"state": state, "x": x, "dt": dt, "A": A, "B": B, "C": C, "D": D, "z": z, "dt_bias": dt_bias,
               "state_batch_indices": state_batch_indices, "dst_state_batch_indices": dst_state_batch_indices,
               "state_scale": state_scale, "output": output, "intermediate_states_buffer": intermediate_states_buffer,
               "intermediate_state_indices": intermediate_state_indices,
               "intermediate_state_scales": intermediate_state_scales, "rand_seed": rand_seed,
               "cu_seqlens": cu_seqlens, "num_accepted_tokens": num_accepted_tokens}
    scalars = {"pad_slot_id": int(pad_slot_id), "cache_steps": int(cache_steps), "algorithm": ALGORITHMS[algorithm],
               "dt_softplus": 1 if dt_softplus else 0, "disable_state_update": 1 if disable_state_update else 0}
    return tensors, scalars, output


def make_call(tensors, scalars, stream):
    """The ssu_call of prepare()'s tensors and scalars."""
    call = Call()
    for name in TENSORS:
        setattr(call, name, describe(tensors[name], "out" if name == "output" else name))
    for name, value in scalars.items():
        setattr(call, name, value)
    call.stream = stream
    return call


def selective_state_update(state, x, dt, A, B, C, D, z=None, dt_bias=None, dt_softplus=False,
                           state_batch_indices=None, pad_slot_id=-1, state_scale=None, out=None,
                           disable_state_update=False, intermediate_states_buffer=None,
                           intermediate_state_indices=None, intermediate_state_scales=None, rand_seed=None,
                           philox_rounds=10, cache_steps=0, algorithm="auto", dst_state_batch_indices=None,
                           cu_seqlens=None, num_accepted_tokens=None, backend="auto", *, library=None):
    """flashinfer.mamba.selective_state_update (its docstring says what each argument is), through
    the shim library `library` (default $SSD_FLASHINFER_SHIM). Returns the output tensor."""
    lib = load(library)
    tensors, scalars, output = prepare(
        state, x, dt, A, B, C, D, z=z, dt_bias=dt_bias, dt_softplus=dt_softplus,
        state_batch_indices=state_batch_indices, pad_slot_id=pad_slot_id, state_scale=state_scale, out=out,
        disable_state_update=disable_state_update, intermediate_states_buffer=intermediate_states_buffer,
        intermediate_state_indices=intermediate_state_indices, intermediate_state_scales=intermediate_state_scales,
        rand_seed=rand_seed, philox_rounds=philox_rounds, cache_steps=cache_steps, algorithm=algorithm,
        dst_state_batch_indices=dst_state_batch_indices, cu_seqlens=cu_seqlens,
        num_accepted_tokens=num_accepted_tokens, backend=backend)
    lib.run(make_call(tensors, scalars, current_stream(tensors["state"])))
    return output
