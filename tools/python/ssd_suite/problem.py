"""Problems (one case of one op, named by its problem string: docs/problem-string.md), the cases
ssd-fuzz generates, and the shrink candidates of a failing case. Needs no numpy."""
import ctypes
from ctypes import c_char_p, c_double, c_int32, c_int64, c_uint64

from . import _capi

FLAGS = ("dt_bias", "softplus", "D", "Dhp", "z", "init", "causal", "sbi", "tie")


class Problem:
    """A parsed problem string. str() is the canonical string; equal problems compare equal."""

    def __init__(self, text):
        if isinstance(text, Problem):
            text = str(text)
        if not isinstance(text, str):
            raise TypeError(f"Problem(): argument 'text' must be a problem string, not {type(text).__name__}")
        self._handle = _capi.make("problem", "problem_parse", text.encode())
        self._read()

    @classmethod
    def _wrap(cls, handle):
        p = cls.__new__(cls)
        p._handle = handle
        p._read()
        return p

    def _read(self):
        h = self._handle.ptr
        s, op, letters, reason = c_char_p(), c_char_p(), c_char_p(), c_char_p()
        dtype, seed, lo, hi = c_int32(), c_uint64(), c_double(), c_double()
        _capi.call("problem_string", h, ctypes.byref(s))
        _capi.call("problem_op", h, ctypes.byref(op))
        _capi.call("problem_dtype", h, ctypes.byref(dtype))
        _capi.call("problem_size_letters", h, ctypes.byref(letters))
        _capi.call("problem_seed", h, ctypes.byref(seed))
        _capi.call("problem_invalid_reason", h, ctypes.byref(reason))
        _capi.call("problem_dt_limit", h, ctypes.byref(lo), ctypes.byref(hi))
        self._text = s.value.decode()
        self.op = op.value.decode()
        self.dtype = _capi.dtype_name(dtype.value)
        self.seed = seed.value
        self.invalid_reason = _capi.text(reason.value)
        self.dt_limit = (lo.value, hi.value)
        self.sizes = {}
        for letter in letters.value.decode():
            v = c_int64()
            _capi.call("problem_size", h, letter.encode(), ctypes.byref(v))
            self.sizes[letter] = v.value
        self.flags = set()
        for flag in FLAGS:
            on = c_int32()
            _capi.call("problem_flag", h, flag.encode(), ctypes.byref(on))
            if on.value:
                self.flags.add(flag)

    @property
    def valid(self):
        return self.invalid_reason is None

    @property
    def chunk_size(self):
        return self.sizes.get("q", 0)

    def __str__(self):
        return self._text

    def __repr__(self):
        return f"Problem({self._text!r})"

    def __eq__(self, other):
        if not isinstance(other, Problem):
            return NotImplemented
        equal = c_int32()
        _capi.call("problem_equal", self._handle.ptr, other._handle.ptr, ctypes.byref(equal))
        return bool(equal.value)

    def __hash__(self):
        return hash(self._text)


def op_names():
    """Every op's short name, in the suite's order (mamba2, chunk_cumsum, ...)."""
    return _capi.op_names()


def campaign_options(seed=0, shard=(0, 1), dtypes=None, large=0.05, huge=0.0):
    """ssd-fuzz's CampaignOptions as the C struct (the dtypes string is kept alive on it)."""
    o = _capi.CampaignOptions()
    _capi.call("campaign_defaults", ctypes.byref(o))
    o.seed = seed
    o.shard, o.shards = shard
    o._dtypes = ",".join(dtypes).encode() if dtypes else None
    o.dtypes = o._dtypes
    o.large_fraction = large
    o.huge_fraction = huge
    return o


def campaign_problem(op, k, seed=0, shard=(0, 1), dtypes=None, large=0.05, huge=0.0):
    """Case k of ssd-fuzz's campaign with this seed for `op` (k must belong to the shard)."""
    options = campaign_options(seed, shard, dtypes, large, huge)
    return Problem._wrap(_capi.make("problem", "campaign_problem", op.encode(), ctypes.byref(options), k))


def shrink_candidates(problem):
    """Valid problems one step smaller than `problem`, simplest first (ssd-fuzz's token shrinking)."""
    problem = problem if isinstance(problem, Problem) else Problem(problem)
    handle = _capi.make("problem_list", "shrink_candidates", problem._handle.ptr)
    count = c_int64()
    _capi.call("problem_list_count", handle.ptr, ctypes.byref(count))
    return [Problem._wrap(_capi.make("problem", "problem_list_get", handle.ptr, i)) for i in range(count.value)]
