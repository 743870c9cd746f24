"""The C API through ctypes: loads libssd-capi.so once, declares every function's signature, and
turns a non-OK status into SsdError carrying the library's message (which names the argument)."""
import ctypes
import os
from ctypes import POINTER, c_char, c_char_p, c_double, c_int32, c_int64, c_uint32, c_uint64, c_void_p

from . import _locate

API_VERSION = 2  # the SSD_CAPI_VERSION this package is written against
MAX_RANK = 8

OK, INVALID_ARGUMENT, ERROR = 0, 1, 2
F64, F32, F16, BF16, I32, U8, DTYPE_CONTRACT = 0, 1, 2, 3, 4, 5, -1
AS_F64, NATIVE = 0, 1
ORACLE, DEFINED, BOUND, EXACT = 0, 1, 2, 3


class SsdError(Exception):
    """A call of the C API failed; the message names the function and the argument."""

    def __init__(self, message, status=ERROR):
        super().__init__(message)
        self.status = status


class SsdArgumentError(SsdError, ValueError):
    """INVALID_ARGUMENT: a malformed problem string, an invalid problem, an unknown name, ..."""


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("dtype", c_int32), ("rank", c_int32), ("shape", c_int64 * MAX_RANK),
                ("numel", c_int64), ("has_undefined", c_int32), ("has_exact", c_int32),
                ("reduction_length", c_int64)]


class Output(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("dtype", c_int32), ("encoding", c_int32), ("rank", c_int32),
                ("shape", c_int64 * MAX_RANK), ("data", c_void_p)]


class Element(ctypes.Structure):
    _fields_ = [("output", c_char_p), ("index", c_char_p), ("flat", c_int64), ("got", c_double),
                ("expected", c_double), ("bound", c_double), ("r", c_double), ("why", c_char_p)]


class OutputJudgement(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("compared", c_int64), ("over_bound", c_int64), ("exact_mismatches", c_int64),
                ("not_finite", c_int64), ("max_r", c_double)]


class LayoutBuffer(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("dtype", c_int32), ("extent", c_int64), ("poison", c_uint32)]


class Placement(ctypes.Structure):
    _fields_ = [("role", c_char_p), ("buffer", c_char_p), ("rank", c_int32), ("shape", c_int64 * MAX_RANK),
                ("strides", c_int64 * MAX_RANK), ("offset", c_int64)]


class CampaignOptions(ctypes.Structure):
    _fields_ = [("seed", c_uint64), ("shard", c_int64), ("shards", c_int64), ("dtypes", c_char_p),
                ("large_fraction", c_double), ("huge_fraction", c_double)]


P = c_void_p  # every handle is opaque
_STATUS = {
    "versions": [POINTER(c_char_p)] * 3,
    "round_to": [c_int32, c_void_p, c_void_p, c_int64],
    "problem_parse": [c_char_p, POINTER(P)],
    "problem_string": [P, POINTER(c_char_p)],
    "problem_op": [P, POINTER(c_char_p)],
    "problem_dtype": [P, POINTER(c_int32)],
    "problem_size_letters": [P, POINTER(c_char_p)],
    "problem_size": [P, c_char, POINTER(c_int64)],
    "problem_seed": [P, POINTER(c_uint64)],
    "problem_flag": [P, c_char_p, POINTER(c_int32)],
    "problem_value": [P, c_char_p, POINTER(c_int64)],
    "problem_dt_limit": [P, POINTER(c_double), POINTER(c_double)],
    "problem_invalid_reason": [P, POINTER(c_char_p)],
    "problem_equal": [P, P, POINTER(c_int32)],
    "inputs_make": [P, POINTER(P)],
    "inputs_count": [P, POINTER(c_int64)],
    "inputs_info": [P, c_int64, POINTER(TensorInfo)],
    "inputs_copy": [P, c_char_p, c_int32, c_void_p, c_int64],
    "layout_make": [P, POINTER(P)],
    "layout_buffer_count": [P, POINTER(c_int64)],
    "layout_buffer": [P, c_int64, POINTER(LayoutBuffer)],
    "layout_placement_count": [P, POINTER(c_int64)],
    "layout_placement": [P, c_int64, POINTER(Placement)],
    "truth_compute": [P, P, POINTER(P)],
    "truth_count": [P, POINTER(c_int64)],
    "truth_info": [P, c_int64, POINTER(TensorInfo)],
    "truth_copy": [P, c_char_p, c_int32, c_void_p, c_int64],
    "judge": [P, POINTER(Output), c_int64, c_int32, POINTER(P)],
    "judge_against_oracle": [P, POINTER(Output), c_int64, c_int32, POINTER(P)],
    "judgement_verdict": [P, POINTER(c_char_p)],
    "judgement_max_r": [P, POINTER(c_double)],
    "judgement_max_ratio": [P, POINTER(c_double)],
    "judgement_message": [P, POINTER(c_char_p)],
    "judgement_problem": [P, POINTER(c_char_p)],
    "judgement_describe": [P, POINTER(c_char_p)],
    "judgement_output_count": [P, POINTER(c_int64)],
    "judgement_output": [P, c_int64, POINTER(OutputJudgement)],
    "judgement_worst_count": [P, POINTER(c_int64)],
    "judgement_worst": [P, c_int64, POINTER(Element)],
    "campaign_defaults": [POINTER(CampaignOptions)],
    "campaign_problem": [c_char_p, POINTER(CampaignOptions), c_int64, POINTER(P)],
    "shrink_candidates": [P, POINTER(P)],
    "problem_list_count": [P, POINTER(c_int64)],
    "problem_list_get": [P, c_int64, POINTER(P)],
    "library_open": [c_char_p, POINTER(P)],
    "library_name": [P, POINTER(c_char_p)],
    "library_implements": [P, c_char_p, POINTER(c_int32)],
    "check_case": [P, P, POINTER(P)],
}
_FREE = ["problem", "inputs", "layout", "truth", "judgement", "problem_list", "library"]

_lib = None


def _load():
    errors = []
    for path in _locate.candidates():
        if os.sep in path and not os.path.exists(path):
            errors.append(path + ": not found")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise SsdError("cannot load libssd-capi.so (build the suite, or set SSD_CAPI_LIBRARY to its path): " +
                   "; ".join(errors))


def lib():
    """The loaded library with its signatures declared (loaded on first use)."""
    global _lib, library_path
    if _lib is None:
        handle, library_path = _load()
        handle.ssd_capi_version.restype = c_int32
        version = handle.ssd_capi_version()
        if version != API_VERSION:
            raise SsdError(f"{library_path} has C API version {version}; this package needs {API_VERSION}")
        for name, args in _STATUS.items():
            f = getattr(handle, "ssd_capi_" + name)
            f.argtypes, f.restype = args, c_int32
        for name in _FREE:
            f = getattr(handle, f"ssd_capi_{name}_free")
            f.argtypes, f.restype = [P], None
        for name in ("last_error", "op_names", "dtype_name"):
            getattr(handle, "ssd_capi_" + name).restype = c_char_p
        handle.ssd_capi_dtype_name.argtypes = [c_int32]
        _lib = handle
    return _lib


library_path = None


_functions = {}


def call(name, *args):
    """Calls ssd_capi_<name>; raises SsdError (SsdArgumentError for INVALID_ARGUMENT) on failure."""
    f = _functions.get(name)
    if f is None:
        f = _functions[name] = getattr(lib(), "ssd_capi_" + name)
    status = f(*args)
    if status != OK:
        message = lib().ssd_capi_last_error().decode()
        raise (SsdArgumentError if status == INVALID_ARGUMENT else SsdError)(message, status)


def text(value):
    return None if value is None else value.decode()


class Handle:
    """Owns one C API handle and frees it with its kind's _free function."""

    _kind = None

    def __init__(self, pointer):
        self._ptr = pointer

    @property
    def ptr(self):
        return self._ptr

    def __del__(self):
        ptr, self._ptr = getattr(self, "_ptr", None), None
        if ptr and _lib is not None:
            try:
                getattr(_lib, f"ssd_capi_{self._kind}_free")(ptr)
            except Exception:  # noqa: BLE001 - at interpreter exit ctypes may already be torn down
                pass


def make(kind, name, *args):
    """Calls a constructor ssd_capi_<name>(..., &out) and wraps the new handle."""
    out = P()
    call(name, *args, ctypes.byref(out))
    handle = Handle(out.value)
    handle._kind = kind
    return handle


def dtype_name(code):
    return lib().ssd_capi_dtype_name(code).decode()


def op_names():
    return lib().ssd_capi_op_names().decode().split(",")
