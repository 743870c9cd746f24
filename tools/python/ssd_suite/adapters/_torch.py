"""What the adapters of GPU libraries share: torch imported on first use (a missing torch, CUDA
device or library makes every case SKIPPED, never a crashed campaign), a case's inputs as CUDA
tensors in their contract storage dtypes, the library's source folder put on sys.path, and the
decode step's slot tables in the padding convention of serving libraries."""
import importlib
import os
import sys

import numpy as np

_TORCH_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "i32": "int32", "u8": "uint8"}


def torch():
    """The torch module with a CUDA device, or NotImplementedError (the case is SKIPPED)."""
    try:
        import torch as module
    except ImportError as e:
        raise NotImplementedError("torch is not installed") from e
    if not module.cuda.is_available():
        raise NotImplementedError("torch sees no CUDA device")
    return module


def torch_dtype(name):
    """The torch dtype of a contract dtype name ("bf16" -> torch.bfloat16)."""
    return getattr(torch(), _TORCH_DTYPES[name])


def device_tensor(array, dtype="i32"):
    """A host array as a contiguous CUDA tensor of contract dtype `dtype` (an index table by
    default); bf16 values arrive as exact float32 and are narrowed without rounding."""
    host = torch().from_numpy(np.ascontiguousarray(array))
    return host.to(device="cuda").to(torch_dtype(dtype))


def padding_as(table, pad):
    """A slot table with every padding entry written as the padding id `pad`: the contract takes
    any negative entry as padding too (§8.1), serving libraries only the id itself. None stays None."""
    return None if table is None else np.where(table < 0, pad, table).astype(np.int32)


def library(module, path_variable):
    """Imports `module` (e.g. "mamba_ssm.ops.triton.ssd_combined"), first putting the folder named by
    the environment variable `path_variable` (when set) at the front of sys.path; a library that is
    not installed makes the case SKIPPED."""
    folder = os.environ.get(path_variable)
    if folder and folder not in sys.path:
        if not os.path.isdir(folder):
            raise NotImplementedError(f"{path_variable}={folder} is not a folder")
        sys.path.insert(0, folder)
    try:
        return importlib.import_module(module)
    except ImportError as e:
        where = f" (nor under {path_variable}={folder})" if folder else f" (set {path_variable} to its source folder)"
        raise NotImplementedError(f"{module.split('.')[0]} is not importable{where}: {e}") from e


def f32_dots_of_triton():
    """How Triton's tl.dot takes f32 operands in this process: TF32 unless TRITON_F32_DEFAULT says
    "ieee" (tf32x3 rounds less than TF32, so the TF32 bounds hold for it too)."""
    return "ieee" if os.environ.get("TRITON_F32_DEFAULT", "").lower() == "ieee" else "tf32"


def asked_for(inputs, produced):
    """A library's results under the contract's output names, only those the contract asks for."""
    return {k: v for k, v in produced.items() if k in inputs.outputs and v is not None}


class Tensors:
    """A case's inputs as CUDA tensors on first use, each in its storage dtype (bf16 values arrive
    as exact float32 and are narrowed without rounding); absent optional inputs are None."""

    def __init__(self, inputs):
        self._inputs = inputs
        self._made = {}

    def __contains__(self, name):
        return name in self._inputs

    def __getitem__(self, name):
        if name not in self._inputs:
            return None
        if name not in self._made:
            self._made[name] = device_tensor(self._inputs[name], self._inputs.dtypes[name])
        return self._made[name]

    get = __getitem__
