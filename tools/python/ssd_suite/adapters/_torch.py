"""What the adapters of GPU libraries share: torch imported on first use (a missing torch, CUDA
device or library makes every case SKIPPED, never a crashed campaign), a case's inputs as CUDA
tensors in their contract storage dtypes (strided views where the problem lays them out), the
library's source folder put on sys.path, the decode step's slot tables in the padding
convention of serving libraries, and device_healthy(), which tells a worker process that a sticky
CUDA error has left its context unusable."""
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


def device_healthy():
    """False when this process's CUDA context is lost: after a sticky error (an illegal memory
    access, a device-side assert) every later CUDA call fails with it, so a worker process asks
    this after an adapter raised and exits when it is False, and the next case runs in a fresh
    context. True without torch, without CUDA, or before CUDA was ever used here."""
    try:
        import torch as module
    except ImportError:
        return True
    if not module.cuda.is_available() or not module.cuda.is_initialized():
        return True  # nothing was run on the device (asking would create a context)
    try:
        module.cuda.synchronize()
        return (module.ones(1, device="cuda") + 1).item() == 2.0  # a tiny allocation and kernel
    except Exception:  # noqa: BLE001 - whatever the error, the device cannot be used any more
        return False


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
    as exact float32 and are narrowed without rounding); absent optional inputs are None. An input
    the problem lays out (inputs.layout: layout=zxbcdt, layout=strided, +far) is a torch.as_strided
    view into a device buffer of that layout, with the strides and offset the C API gives, so the
    library receives the views a Mamba2 layer hands it; the buffer's gaps hold the kernel-ABI
    runner's poison. Any other input is a dense tensor of its own."""

    def __init__(self, inputs):
        self._inputs = inputs
        self._made = {}
        self._buffers = {}  # device buffers of the layout, by name

    def __contains__(self, name):
        return name in self._inputs

    def __getitem__(self, name):
        if name not in self._inputs:
            return None
        if name not in self._made:
            self._made[name] = self.laid_out(name, self._inputs[name])
        return self._made[name]

    get = __getitem__

    def laid_out(self, name, values):
        """`values` (a numpy array of input `name`'s shape and storage dtype) on the device, laid out
        as input `name` is: a view into its layout's buffer, or a dense tensor. An adapter that must
        rewrite an input's values (vLLM's slot tables) keeps its layout this way."""
        t = torch()
        host = np.ascontiguousarray(values)
        if not host.flags.writeable:  # a read-only view that happens to be dense: torch.from_numpy warns
            host = host.copy()
        dense = t.from_numpy(host).to(device="cuda").to(torch_dtype(self._inputs.dtypes[name]))
        placement = self._inputs.layout.find(name)
        if placement is None:
            return dense
        # The input's own buffer when it is the input, a fresh one for rewritten values (a zxbcdt
        # buffer is shared by several views, so a rewrite must not land in it).
        fresh = values is not self._inputs[name]
        view = t.as_strided(self._buffer(placement.buffer, fresh), placement.shape, placement.strides,
                            placement.offset)
        # copy_ refuses a destination whose elements overlap: a stride-0 axis (recurrent +tie's dt
        # along P) holds one value, written through index 0 of it.
        index = tuple(slice(0, 1) if s == 0 else slice(None) for s in placement.strides)
        view[index].copy_(dense[index])
        return view

    def _buffer(self, name, fresh=False):
        """Buffer `name` of the layout on the device, every element poison until a view is written.
        The whole buffer is filled, +far's 4 to 8 GiB too: on the device that costs milliseconds,
        and the library then finds poison wherever it strays (the runner fills only the spans)."""
        if fresh or name not in self._buffers:
            t = torch()
            b = self._inputs.layout.buffers[name]
            flat = t.empty(b.extent, dtype=torch_dtype(b.dtype), device="cuda")
            bits = 16 if b.dtype in ("f16", "bf16") else 32
            signed = b.poison - (1 << bits) if b.poison >= 1 << (bits - 1) else b.poison
            flat.view(t.int16 if bits == 16 else t.int32).fill_(signed)
            if fresh:
                return flat
            self._buffers[name] = flat
        return self._buffers[name]
