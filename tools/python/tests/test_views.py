"""Inputs as views (ssd_suite.views): the layout the C API describes matches hand-worked numbers,
each view holds exactly the contiguous input's bits at the place its strides say, every element no
view reaches holds the runner's poison, the views are read-only, and +far buffers of 2^31 elements
cost memory only around their views."""
import numpy as np
import pytest

import ssd_suite
from ssd_suite.layout import Placement
from ssd_suite.views import spans

# A zxbcdt row of mamba2 with H=2 P=2 G=1 N=2: W = 2HP + 2GN + H = 8 + 4 + 2 = 14, z at column 0,
# x at HP = 4, B at 2HP = 8, C at 2HP + GN = 10, dt at 2HP + 2GN = 12 (docs/problem-string.md 3.1).
MAMBA2 = "mamba2:f32 b2 s3 h2 p2 g1 n2 q2 +z layout=zxbcdt seed=1"
LAID_OUT = [MAMBA2,
            "recurrent:f32 b2 h2 p3 g1 n2 +tie +z layout=zxbcdt seed=1",
            "chunk_scan:f16 b2 s37 h4 p8 g2 n8 q16 +D +z layout=zxbcdt seed=9",
            "chunk_cumsum:bf16 b2 s37 h3 q16 +dt_bias +softplus layout=strided seed=3",
            "recurrent:bf16 b4 h4 p8 g4 n8 +dt_bias +softplus +Dhp +sbi slots=9 layout=strided seed=3",
            "state_passing:f16 b2 s100 q16 h3 d16 +init seq=rand layout=strided seed=2"]

# The poison of docs/contract.md's runner (fuzz/harness/include/ssd/harness/poison.h): quiet NaNs
# with payloads no arithmetic produces, and a sentinel for i32.
POISON = {"f32": 0x7FC0DEAD, "bf16": 0x7FDE, "f16": 0x7EAD, "i32": 0x5EADBEEF}


def bits(a):
    """The raw bits of an array, to compare NaNs and signed zeros exactly."""
    a = np.ascontiguousarray(a)
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def covered(placement, extent):
    """The buffer elements a view reaches, from its strides alone (not from ssd_suite.views)."""
    mask = np.zeros(extent, dtype=bool)
    index = np.indices(placement.shape).reshape(len(placement.shape), -1)
    mask[placement.offset + np.tensordot(placement.strides, index, axes=1)] = True
    return mask


def test_the_layout_of_zxbcdt_is_the_hand_worked_one():
    layout = ssd_suite.Problem(MAMBA2).layout
    assert list(layout.buffers) == ["zxbcdt"]
    b = layout.buffers["zxbcdt"]
    assert (b.dtype, b.extent, b.poison) == ("f32", 6 * 14, POISON["f32"])  # b*s = 6 rows of 14
    # token-major views: a token is a row (14), a batch row three tokens (42); dense within a row
    want = {"z": (0, (42, 14, 2, 1)), "x": (4, (42, 14, 2, 1)), "B": (8, (42, 14, 2, 1)),
            "C": (10, (42, 14, 2, 1)), "dt": (12, (42, 14, 1))}
    assert {r: (v.offset, v.strides) for r, v in layout.placements.items()} == want
    assert layout.find("A") is None and layout.find("D") is None  # not views of the projection
    assert not ssd_suite.Problem("mamba2:f32 b2 s3 h2 p2 g1 n2 q2 +z seed=1").layout


def test_zxbcdt_views_sit_at_their_columns():
    x = ssd_suite.inputs(MAMBA2)
    flat = x.buffers["zxbcdt"]
    assert x["x"].strides == (42 * 4, 14 * 4, 2 * 4, 4)
    assert x["x"].ctypes.data - flat.ctypes.data == 4 * 4  # column HP = 4
    dense = ssd_suite.inputs(MAMBA2, views=False)
    assert flat[14 + 4] == dense["x"][0, 1, 0, 0]  # the second token's row, column 4
    assert flat[42 + 12 + 1] == dense["dt"][1, 0, 1]  # batch row 1, dt column 12 + head 1
    assert flat[10 + 1] == dense["C"][0, 0, 0, 1]
    assert np.isnan(x["A"]).sum() == 0 and x["A"].flags.c_contiguous  # A is no view


@pytest.mark.parametrize("text", LAID_OUT)
@pytest.mark.parametrize("bf16", ["float32", "bits"])
def test_views_hold_the_contiguous_bits_and_the_gaps_hold_poison(text, bf16):
    views = ssd_suite.inputs(text, bf16=bf16)
    dense = ssd_suite.inputs(text, bf16=bf16, views=False)
    layout = views.layout
    assert layout and set(layout.placements) <= set(views)
    assert list(views) == list(dense)  # the role order is kept
    for name, a in views.items():
        assert np.array_equal(bits(a), bits(dense[name])), name
        assert dense[name].flags.c_contiguous
        if layout.find(name) is None:
            assert a.flags.c_contiguous and a.flags.writeable
            continue
        v = layout.find(name)
        flat = views.buffers[v.buffer]
        assert not a.flags.writeable and not a.flags.c_contiguous, name
        assert a.ctypes.data == flat.ctypes.data + v.offset * flat.itemsize
        assert a.strides == tuple(s * flat.itemsize for s in v.strides)
    for name, b in layout.buffers.items():
        flat = views.buffers[name]
        assert flat.size == b.extent
        reached = np.zeros(b.extent, dtype=bool)
        for v in layout.views_of(name):
            reached |= covered(v, b.extent)
        gaps = bits(flat)[~reached]
        poison = POISON[b.dtype] << 16 if (b.dtype == "bf16" and bf16 == "float32") else POISON[b.dtype]
        assert np.all(gaps == poison), name  # (mamba2 +z leaves no gap: every column is a view)
        if b.dtype != "i32":
            assert np.all(np.isnan(flat[~reached].astype(np.float32) if bf16 == "float32" or b.dtype != "bf16"
                                   else (gaps.astype(np.uint32) << 16).view(np.float32)))


def test_the_columns_of_an_absent_role_are_poison():
    x = ssd_suite.inputs("mamba2:f32 b2 s3 h2 p2 g1 n2 q2 layout=zxbcdt seed=1")
    rows = bits(x.buffers["zxbcdt"]).reshape(6, 14)  # b*s rows of W = 14
    assert np.all(rows[:, 0:4] == POISON["f32"])  # z's columns 0..HP-1, without +z
    assert not np.any(rows[:, 4:] == POISON["f32"])  # x, B, C, dt: every other column is a value


def test_the_expanded_dt_of_tie_is_a_stride_0_view():
    x = ssd_suite.inputs("recurrent:f32 b2 h2 p3 g1 n2 +tie layout=zxbcdt seed=1")
    # W = 2*6 + 2*2 + 2 = 18; dt is column 16 + head, repeated along P
    assert x["dt"].strides == (18 * 4, 4, 0)
    assert x["dt"].ctypes.data - x.buffers["zxbcdt"].ctypes.data == 16 * 4


def test_views_are_read_only():
    x = ssd_suite.inputs(MAMBA2)
    with pytest.raises(ValueError, match="read-only"):
        x["x"][0, 0, 0, 0] = 1.0


def test_contiguous_problems_and_views_false_give_dense_arrays():
    for x in (ssd_suite.inputs("mamba2:f32 b2 s3 h2 p2 g1 n2 q2 +z seed=1"), ssd_suite.inputs(MAMBA2, views=False)):
        assert not x.layout and x.buffers == {}
        assert all(a.flags.c_contiguous for a in x.values())
    with pytest.raises(ValueError, match="argument 'views'"):
        ssd_suite.inputs(MAMBA2, views="yes")


def test_spans_merge_near_rows_and_keep_far_ones_apart():
    far = 1 << 31
    near = Placement("x", "b", (2, 3), (10, 1), 2)
    assert spans([near], 20, merge=8) == [(0, 20)]  # rows [2,5) and [12,15): 7 apart, both ends near
    assert spans([near], 40, merge=4) == [(0, 5), (12, 15)]
    v = Placement("dt", "dt", (2, 5, 3), (far + 24, 4, 1), 1)
    # row 0 covers [1, 1 + 4*4 + 2*1 + 1) = [1, 20), row 1 the same 2^31 + 24 later: [2^31 + 25,
    # 2^31 + 44); the first reaches back to 0, the last on to the buffer's end
    assert spans([v], far + 45) == [(0, 20), (far + 25, far + 45)]


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_far_views_lie_past_2_31_and_commit_only_their_spans():
    text = "chunk_cumsum:f32 b2 s37 h3 q16 +dt_bias layout=strided +far seed=3"
    before = resident_bytes()
    x = ssd_suite.inputs(text)
    grown = resident_bytes() - before
    dense = ssd_suite.inputs(text, views=False)
    v = x.layout.find("dt")
    flat = x.buffers["dt"]
    assert flat.size > 1 << 31 and flat.nbytes > 8 * 2**30  # 2^31 f32 elements: 8 GiB of address space
    assert grown < 64 * 2**20, grown  # but only the pages around the two rows are written
    assert v.strides[0] > 1 << 31
    assert np.array_equal(bits(x["dt"]), bits(dense["dt"]))
    row1 = v.offset + v.strides[0]
    assert x["dt"][1].ctypes.data - flat.ctypes.data == row1 * 4
    # Each row's stretch (row 0 from element 0, row 1 on to the buffer's end) holds the row's
    # values and poison; the 2^31 elements between them are never touched (zero).
    row = Placement("dt", "dt", v.shape[1:], v.strides[1:], 0)
    for begin, end in ((0, v.offset + row.last + 1), (row1, flat.size)):
        window = bits(flat[begin:end])
        reached = covered(Placement("dt", "dt", row.shape, row.strides, (v.offset if begin == 0 else 0)), end - begin)
        assert np.all(window[~reached] == POISON["f32"])
    assert bits(flat[v.offset + row.last + 1: v.offset + row.last + 1 + 4096]).max() == 0
    assert flat[1 << 30] == 0 and flat[row1 - 1] == 0
