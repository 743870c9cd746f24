"""Results case files (docs/case-files.md) from Python: a case's problem, its inputs as the suite
stores them, and a kernel's outputs in their storage dtypes, each dataset with its SHA-256, written
atomically; `ssd-golden check FILE` then judges the stored outputs without the kernel. Needs h5py."""
import ctypes
import hashlib
import os
import tempfile

import numpy as np

from . import _capi
from .arrays import as_numpy, as_problem, inputs as make_inputs, truth_handle, _tensor_infos

FORMAT, FORMAT_VERSION = "ssd-case", 1


def file_name(problem):
    """<op>-<dtype>-<16 hex of the SHA-256 of the canonical string>.h5, as ssd-fuzz names its dumps."""
    text = str(problem)
    return f"{problem.op}-{problem.dtype}-{hashlib.sha256(text.encode()).hexdigest()[:16]}.h5"


def round_to(dtype, values):
    """float64 values rounded to f32, f16 or bf16 by the suite's own rounding (no double rounding)."""
    code = {"f32": _capi.F32, "f16": _capi.F16, "bf16": _capi.BF16}[dtype]
    a = np.ascontiguousarray(values, dtype=np.float64)
    out = np.empty_like(a)
    _capi.call("round_to", code, a.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p), a.size)
    return out


def stored(values, dtype):
    """The little-endian storage of `values` (exactly representable in `dtype`) in a case file."""
    if dtype == "f32":
        return np.asarray(values).astype("<f4")
    if dtype == "f16":
        return np.asarray(values).astype(np.float16).view(np.uint16).astype("<u2")
    if dtype == "bf16":
        return (np.asarray(values).astype(np.float32).view(np.uint32) >> np.uint32(16)).astype("<u2")
    if dtype == "i32":
        return np.asarray(values).astype("<i4")
    raise ValueError(f"argument 'dtype': cannot store '{dtype}'")


def _dataset(group, name, data, dtype):
    d = group.create_dataset(name, data=data)
    d.attrs["dtype"] = dtype
    d.attrs["sha256"] = hashlib.sha256(np.ascontiguousarray(data).tobytes()).hexdigest()


def write_results(path, problem, outputs):
    """Writes a kind=results case file of `problem` with the kernel's `outputs` ({name: array},
    rounded to each output's storage dtype); every output the case produces must be there, in its
    shape (ValueError otherwise: the reader would refuse the file)."""
    import h5py  # only this module needs it

    problem = as_problem(problem)
    x = make_inputs(problem, bf16="bits", views=False)  # the values only: a case file has no layout
    truth = truth_handle(problem, x)
    expected = {info.name.decode(): (_capi.dtype_name(info.dtype), tuple(info.shape[: info.rank]))
                for info in _tensor_infos(truth, "truth")}
    if set(outputs) != set(expected):
        raise ValueError(f"argument 'outputs': {sorted(outputs)} given, the case produces {sorted(expected)}")
    contract, generator, oracle = (ctypes.c_char_p() for _ in range(3))
    _capi.call("versions", ctypes.byref(contract), ctypes.byref(generator), ctypes.byref(oracle))
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".tmp-", dir=folder)
    os.close(fd)
    try:
        with h5py.File(tmp, "w") as f:
            f.attrs["format"], f.attrs["format_version"] = FORMAT, np.int64(FORMAT_VERSION)
            f.attrs["problem"], f.attrs["kind"] = str(problem), "results"
            f.attrs["contract_version"] = contract.value.decode()
            f.attrs["generator_version"] = generator.value.decode()
            f.attrs["oracle_version"] = oracle.value.decode()
            group = f.create_group("inputs")
            for name, values in x.items():
                dtype = x.dtypes[name]
                # bf16 came as its bit patterns, f16 as float16: both are stored as their uint16 bits
                data = values.view(np.uint16).astype("<u2") if dtype in ("f16", "bf16") else stored(values, dtype)
                _dataset(group, name, data, dtype)
            group = f.create_group("outputs")
            for name, (dtype, shape) in expected.items():
                values = as_numpy(outputs[name], f"outputs['{name}']")
                if tuple(values.shape) != shape:
                    raise ValueError(f"argument 'outputs': '{name}' has shape {tuple(values.shape)}, the case needs {shape}")
                _dataset(group, name, stored(round_to(dtype, values), dtype), dtype)
        os.replace(tmp, path)  # atomic: a crash never leaves half a file
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
