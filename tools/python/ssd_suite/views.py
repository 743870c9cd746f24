"""A case's laid-out inputs as numpy views, the way the kernel-ABI runner lays them out
(fuzz/harness/src/view_buffer.cpp): each buffer of the layout is one flat array, every view a
read-only np.lib.stride_tricks.as_strided array into it holding the input's values, and every gap
(an element no view reaches) the runner's poison, a quiet NaN no arithmetic produces.

+far buffers span 2^31 elements and more (4 to 8 GiB). As the runner does on a host, only the
stretches around the views are written: np.zeros takes a buffer that size from calloc, which maps
fresh zero pages that the kernel commits only when written, so the gigabytes between the rows of
a view cost address space, not memory. Those untouched stretches read as 0, not poison (the
runner leaves them unfilled too)."""
import numpy as np

# Stretches of untouched elements shorter than this are filled with the views around them
# (view_buffer.cpp's kMergeElements): a buffer without +far is filled whole.
MERGE_ELEMENTS = 1 << 20

_NUMPY = {"f32": np.float32, "f16": np.float16, "i32": np.int32}


def numpy_dtype(dtype, bf16="float32"):
    """The numpy dtype a buffer of contract dtype `dtype` is held in: bf16 as float32 (its values
    exactly) or, with bf16="bits", as uint16 bit patterns, as ssd_suite.inputs gives bf16 arrays."""
    if dtype == "bf16":
        return np.dtype(np.uint16 if bf16 == "bits" else np.float32)
    return np.dtype(_NUMPY[dtype])


def poison_of(buffer, held_in):
    """The gap element of `buffer` as it is held in numpy dtype `held_in`, as unsigned bits of its
    width: bf16 poison held as float32 is the float32 whose top half it is (the exact widening)."""
    if buffer.dtype == "bf16" and held_in.itemsize == 4:
        return np.uint32(buffer.poison << 16)
    return np.uint16(buffer.poison) if held_in.itemsize == 2 else np.uint32(buffer.poison)


def spans(views, extent, merge=MERGE_ELEMENTS):
    """The element ranges [begin, end) of a buffer that are filled (view_buffer.cpp's view_spans):
    the range of every row along axis 0 of every view, merged where fewer than `merge` elements lie
    between them, the first reaching back to 0 and the last on to `extent` when they are closer
    than `merge` to the buffer's ends. Sorted and disjoint."""
    rows = []
    for v in views:
        if v.numel == 0:
            continue
        if not v.shape:
            rows.append((v.offset, v.offset + 1))
            continue
        reach = [(n - 1) * s for n, s in zip(v.shape[1:], v.strides[1:])]
        lo, hi = sum(r for r in reach if r < 0), sum(r for r in reach if r > 0)
        for i in range(v.shape[0]):
            base = v.offset + i * v.strides[0]
            rows.append((base + lo, base + hi + 1))
    merged = []
    for begin, end in sorted(rows):
        if merged and begin - merged[-1][1] < merge:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([begin, end])
    if merged and merged[0][0] < merge:
        merged[0][0] = 0
    if merged and extent - merged[-1][1] < merge:
        merged[-1][1] = extent
    return [tuple(s) for s in merged]


def view(flat, placement, writeable=False):
    """The strided view of `placement` into the flat buffer `flat` (read-only unless asked)."""
    if placement.offset < 0 or placement.last >= flat.size or min(placement.strides, default=0) < 0:
        raise ValueError(f"placement {placement} does not lie inside its buffer of {flat.size} elements")
    strides = tuple(s * flat.itemsize for s in placement.strides)
    return np.lib.stride_tricks.as_strided(flat[placement.offset:], placement.shape, strides, writeable=writeable)


def distinct(placement):
    """The index of a view's distinct elements: index 0 along every stride-0 axis (an expanded
    axis, such as recurrent +tie's dt along P, holds one element repeated)."""
    return tuple(slice(0, 1) if s == 0 else slice(None) for s in placement.strides)


def allocate(buffer, held_in):
    """A zero buffer of `buffer.extent` elements (lazily committed for a large one, see above)."""
    try:
        return np.zeros(buffer.extent, dtype=held_in)
    except MemoryError as e:
        gib = buffer.extent * held_in.itemsize / 2**30
        raise MemoryError(f"cannot allocate the {gib:.1f} GiB buffer '{buffer.name}' of the input views "
                          f"({buffer.extent} elements)") from e


def lay_out(layout, arrays, bf16="float32"):
    """The buffers of `layout` with the values of `arrays` ({role: dense numpy array}) in their
    views and poison in their gaps: ({buffer name: flat array}, {role: read-only view}). Roles of
    the layout missing from `arrays` are left out, their elements left as gaps."""
    buffers, views = {}, {}
    for name, buffer in layout.buffers.items():
        placed = [v for v in layout.views_of(name) if v.role in arrays]
        if not placed:
            continue  # as the runner does: no view given, nothing to allocate
        held_in = numpy_dtype(buffer.dtype, bf16)
        flat = allocate(buffer, held_in)
        bits = flat.view(np.uint16 if held_in.itemsize == 2 else np.uint32)
        poison = poison_of(buffer, held_in)
        for begin, end in spans(placed, buffer.extent):
            bits[begin:end] = poison
        for v in placed:
            values = np.asarray(arrays[v.role])
            if values.shape != v.shape or values.dtype != held_in:
                raise ValueError(f"input {v.role} {values.shape} {values.dtype} does not fit its view {v.shape} "
                                 f"of {name} ({held_in})")
            index = distinct(v)
            if not np.array_equal(np.broadcast_to(values[index], v.shape), values, equal_nan=True):
                raise ValueError(f"input {v.role} is not constant along the stride-0 axes of its view {v}")
            view(flat, v, writeable=True)[index] = values[index]
            views[v.role] = view(flat, v)
        buffers[name] = flat
    return buffers, views
