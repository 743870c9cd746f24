"""Where a case's inputs lie in memory (layout=zxbcdt, layout=strided, +far; docs/problem-string.md
section 3.1), as the C API describes it (ssd_capi_layout_*): the buffers the laid-out inputs are
views into, and each view's shape, strides and offset in elements. Needs no numpy."""
import ctypes

from . import _capi


class Buffer:
    """One buffer of views: `extent` elements of the contract dtype `dtype` ("bf16"); the elements
    no view reaches are gaps, which hold `poison` (the bit pattern of one element, 16 bits for f16
    and bf16) when the kernel-ABI runner lays the buffer out."""

    def __init__(self, name, dtype, extent, poison):
        self.name, self.dtype, self.extent, self.poison = name, dtype, extent, poison

    def __repr__(self):
        return f"Buffer({self.name!r}, {self.dtype}, extent={self.extent}, poison=0x{self.poison:X})"


class Placement:
    """One laid-out input: element [i0, i1, ...] of input `role` is element
    offset + i0*strides[0] + i1*strides[1] + ... of buffer `buffer` (strides in elements, 0 along
    an expanded axis)."""

    def __init__(self, role, buffer, shape, strides, offset):
        self.role, self.buffer = role, buffer
        self.shape, self.strides, self.offset = tuple(shape), tuple(strides), offset

    @property
    def last(self):
        """The largest element of the buffer the view reaches (its offset when it is empty)."""
        return self.offset + sum((n - 1) * s for n, s in zip(self.shape, self.strides) if n > 0)

    @property
    def numel(self):
        count = 1
        for n in self.shape:
            count *= n
        return count

    def __repr__(self):
        return (f"Placement({self.role!r} in {self.buffer!r}, shape={self.shape}, strides={self.strides}, "
                f"offset={self.offset})")


class Layout:
    """The layout of a problem's inputs: `buffers` {name: Buffer} and `placements` {role:
    Placement}, in the C API's order. Inputs without a placement are dense; a layout=contiguous
    problem has none (the Layout is then false)."""

    def __init__(self, buffers=(), placements=()):
        self.buffers = {b.name: b for b in buffers}
        self.placements = {v.role: v for v in placements}

    def find(self, role):
        """The placement of input `role`, or None when it is a dense tensor of its own."""
        return self.placements.get(role)

    def views_of(self, buffer):
        """The placements that lie in buffer `buffer`, in order."""
        return [v for v in self.placements.values() if v.buffer == buffer]

    def __bool__(self):
        return bool(self.placements)

    def __repr__(self):
        return f"Layout({list(self.buffers.values())}, {list(self.placements.values())})"


def layout_of(problem):
    """The Layout of a valid problem (SsdArgumentError naming 'problem' for an invalid one)."""
    handle = _capi.make("layout", "layout_make", problem._handle.ptr)
    count = ctypes.c_int64()
    buffers, placements = [], []
    _capi.call("layout_buffer_count", handle.ptr, ctypes.byref(count))
    for i in range(count.value):
        b = _capi.LayoutBuffer()
        _capi.call("layout_buffer", handle.ptr, i, ctypes.byref(b))
        buffers.append(Buffer(b.name.decode(), _capi.dtype_name(b.dtype), b.extent, b.poison))
    _capi.call("layout_placement_count", handle.ptr, ctypes.byref(count))
    for i in range(count.value):
        v = _capi.Placement()
        _capi.call("layout_placement", handle.ptr, i, ctypes.byref(v))
        placements.append(Placement(v.role.decode(), v.buffer.decode(), v.shape[: v.rank], v.strides[: v.rank],
                                    v.offset))
    return Layout(buffers, placements)
