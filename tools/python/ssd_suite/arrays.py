"""numpy views of a case: any array-like to numpy (DLPack first, so torch tensors work), a
problem's inputs (strided views where its layout= says so), and its oracle with masks and bounds,
copied out of the C API."""
import ctypes

import numpy as np

from . import _capi
from .layout import Layout
from .problem import Problem
from .views import lay_out

# How each storage dtype arrives in numpy. bf16 has no numpy dtype: its values come as float32,
# each exactly a bf16 value (bf16 is the top half of a float32), unless bits are asked for.
_NUMPY = {_capi.F64: np.float64, _capi.F32: np.float32, _capi.F16: np.float16, _capi.I32: np.int32,
          _capi.U8: np.uint8}


def as_problem(problem):
    return problem if isinstance(problem, Problem) else Problem(problem)


def as_numpy(array, name="array"):
    """A numpy array of `array`: a numpy array as is; a DLPack producer (torch, jax, cupy on the
    host) through np.from_dlpack; a tensor on another device or in bf16 first moved to the host
    and widened to float32 (exact); anything else through np.asarray."""
    if isinstance(array, np.ndarray):
        return array
    if hasattr(array, "__dlpack__") and hasattr(np, "from_dlpack"):
        try:
            return np.from_dlpack(array)
        except (TypeError, BufferError, RuntimeError, ValueError):
            pass  # another device or a dtype numpy lacks (bf16): handled below
        moved = array
        if hasattr(moved, "detach"):
            moved = moved.detach()
        if hasattr(moved, "cpu"):
            moved = moved.cpu()
        if str(getattr(moved, "dtype", "")).endswith("bfloat16") and hasattr(moved, "float"):
            moved = moved.float()
        try:
            return np.from_dlpack(moved)
        except (TypeError, BufferError, RuntimeError, ValueError):
            array = moved
    try:
        return np.asarray(array)
    except Exception as e:
        raise TypeError(f"argument '{name}': cannot be read as a numpy array ({type(array).__name__}: {e})") from e


class Inputs(dict):
    """The input tensors of a case by contract name, in the op's role order; `dtypes` gives each
    one's storage dtype ("bf16" for a float32 array holding bf16 values). `layout` is the Layout
    the arrays follow: the laid-out inputs are read-only views into the flat arrays of `buffers`
    ({buffer name: array}, gaps poisoned); both are empty when every array is contiguous."""

    def __init__(self, problem, arrays, dtypes, handle, layout=None, buffers=None):
        super().__init__(arrays)
        self.problem = problem
        self.dtypes = dtypes
        self.layout = layout if layout is not None else Layout()
        self.buffers = buffers or {}
        self._handle = handle  # the C inputs, reused by the oracle of the same case
        self._truth = None

    def truth(self):
        """The case's oracle handle, computed once from the C inputs (never from these arrays, which
        an adapter may have written to)."""
        if self._truth is None:
            self._truth = _capi.make("truth", "truth_compute", self.problem._handle.ptr, self._handle.ptr)
        return self._truth

    @property
    def outputs(self):
        """{output name: (contract dtype name, shape)}, in the op's order: what the contract asks
        the kernel to produce (e.g. to pick a library's output dtype or allocate its outputs)."""
        return {info.name.decode(): (_capi.dtype_name(info.dtype), tuple(info.shape[: info.rank]))
                for info in _tensor_infos(self.truth(), "truth")}


def _tensor_infos(handle, kind):
    count = ctypes.c_int64()
    _capi.call(kind + "_count", handle.ptr, ctypes.byref(count))
    infos = []
    for i in range(count.value):
        info = _capi.TensorInfo()
        _capi.call(kind + "_info", handle.ptr, i, ctypes.byref(info))
        infos.append(info)
    return infos


def _copy(kind, handle, name, what, dtype, shape):
    out = np.empty(shape, dtype=dtype)
    _capi.call(kind + "_copy", handle.ptr, name, what, out.ctypes.data_as(ctypes.c_void_p), out.nbytes)
    return out


def inputs(problem, bf16="float32", views=True):
    """The inputs of a valid problem (a pure function of its string): f32 as float32, f16 as
    float16, i32 as int32, bf16 as float32 values that are exactly bf16 (bf16="bits": the uint16
    bit patterns instead). Under layout=zxbcdt or layout=strided the laid-out inputs are read-only
    strided views into buffers whose gaps hold poison (ssd_suite.views), with the same values;
    views=False gives them as contiguous arrays instead."""
    if bf16 not in ("float32", "bits"):
        raise ValueError(f"argument 'bf16': '{bf16}' is neither 'float32' nor 'bits'")
    if views not in (True, False):
        raise ValueError(f"argument 'views': {views!r} is neither True nor False")
    problem = as_problem(problem)
    handle = _capi.make("inputs", "inputs_make", problem._handle.ptr)
    arrays, dtypes = {}, {}
    for info in _tensor_infos(handle, "inputs"):
        shape = tuple(info.shape[: info.rank])
        if info.dtype == _capi.BF16:
            if bf16 == "bits":
                a = _copy("inputs", handle, info.name, _capi.NATIVE, np.uint16, shape)
            else:
                a = _copy("inputs", handle, info.name, _capi.AS_F64, np.float64, shape).astype(np.float32)
        else:
            a = _copy("inputs", handle, info.name, _capi.NATIVE, _NUMPY[info.dtype], shape)
        name = info.name.decode()
        arrays[name] = a
        dtypes[name] = _capi.dtype_name(info.dtype)
    layout = problem.layout if views else Layout()
    buffers = {}
    if layout:
        buffers, laid_out = lay_out(layout, arrays, bf16)
        arrays.update(laid_out)  # in place of the dense arrays, keeping the role order
    return Inputs(problem, arrays, dtypes, handle, layout, buffers)


class OracleOutput:
    """One output of the oracle: `value` float64, `defined` (bool: compared), `bound` (float64 per
    element), `exact` (bool: must match exactly), the storage `dtype` and the reduction length."""

    def __init__(self, name, dtype, value, defined, bound, exact, reduction_length):
        self.name, self.dtype, self.value = name, dtype, value
        self.defined, self.bound, self.exact = defined, bound, exact
        self.reduction_length = reduction_length

    @property
    def shape(self):
        return self.value.shape

    def __repr__(self):
        return f"OracleOutput({self.name!r}, dtype={self.dtype!r}, shape={self.value.shape})"


def truth_handle(problem, inputs_=None):
    problem = as_problem(problem)
    if isinstance(inputs_, Inputs) and inputs_.problem == problem:
        return inputs_.truth()
    return _capi.make("truth", "truth_compute", problem._handle.ptr, None)


def oracle(problem):
    """The float64 oracle of a valid problem with its masks and bounds: {output name: OracleOutput},
    in the order the op produces them."""
    return oracle_of(truth_handle(problem))


def oracle_of(handle):
    out = {}
    for info in _tensor_infos(handle, "truth"):
        shape = tuple(info.shape[: info.rank])
        fields = [_copy("truth", handle, info.name, field, dtype, shape)
                  for field, dtype in ((_capi.ORACLE, np.float64), (_capi.DEFINED, np.uint8),
                                       (_capi.BOUND, np.float64), (_capi.EXACT, np.uint8))]
        name = info.name.decode()
        out[name] = OracleOutput(name, _capi.dtype_name(info.dtype), fields[0], fields[1].astype(bool), fields[2],
                                 fields[3].astype(bool), info.reduction_length)
    return out
