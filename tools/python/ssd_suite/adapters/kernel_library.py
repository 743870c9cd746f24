"""Any kernel library behind the kernel ABI (a path to a .so, or a suite name such as "emulation"
or "mutant-b_c_swapped") as an adapter: each case is checked by the C API exactly as ssd-fuzz
checks it (ssd::check_case), so a Python campaign over it reproduces ssd-fuzz's verdicts. The
inputs never pass through Python: the C++ runner lays them out, so a library of kernel ABI 5 or
later receives a layout= problem's inputs as strided views into poisoned buffers (ViewBuffer)."""
import ctypes

from .. import _capi
from ..judgement import Judgement


class KernelLibrary:
    def __init__(self, kernels):
        self.kernels = kernels
        self._handle = _capi.make("library", "library_open", str(kernels).encode())
        name = ctypes.c_char_p()
        _capi.call("library_name", self._handle.ptr, ctypes.byref(name))
        self.name = name.value.decode()

    def implements(self, op):
        yes = ctypes.c_int32()
        _capi.call("library_implements", self._handle.ptr, op.encode(), ctypes.byref(yes))
        return bool(yes.value)

    def check(self, problem):
        return Judgement._from_handle(_capi.make("judgement", "check_case", self._handle.ptr, problem._handle.ptr))

    def __repr__(self):
        return f"KernelLibrary({self.kernels!r}: {self.name})"
