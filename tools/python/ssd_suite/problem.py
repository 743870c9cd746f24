"""Problems (one case of one op, named by its problem string: docs/problem-string.md), the cases
ssd-fuzz generates, and the shrink candidates of a failing case. Needs no numpy."""
import ctypes
import functools
from ctypes import c_char_p, c_double, c_int32, c_int64, c_uint64

from . import _capi
from .layout import layout_of

FLAGS = ("dt_bias", "softplus", "D", "Dhp", "z", "init", "causal", "sbi", "tie", "varlen", "dst", "spec", "accepted",
         "nowrite", "inter")


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
        # The string and the op are read now (every caller needs them); the rest on first use.
        s, op = c_char_p(), c_char_p()
        _capi.call("problem_string", self._handle.ptr, ctypes.byref(s))
        _capi.call("problem_op", self._handle.ptr, ctypes.byref(op))
        self._text = s.value.decode()
        self.op = op.value.decode()

    @functools.cached_property
    def dtype(self):
        """The primary dtype's name ("bf16")."""
        dtype = c_int32()
        _capi.call("problem_dtype", self._handle.ptr, ctypes.byref(dtype))
        return _capi.dtype_name(dtype.value)

    @functools.cached_property
    def seed(self):
        seed = c_uint64()
        _capi.call("problem_seed", self._handle.ptr, ctypes.byref(seed))
        return seed.value

    @functools.cached_property
    def invalid_reason(self):
        """Why the problem is outside the contract, or None."""
        reason = c_char_p()
        _capi.call("problem_invalid_reason", self._handle.ptr, ctypes.byref(reason))
        return _capi.text(reason.value)

    @functools.cached_property
    def dt_limit(self):
        """The clamp in force: (lo, hi) of limit=, else (0, inf)."""
        lo, hi = c_double(), c_double()
        _capi.call("problem_dt_limit", self._handle.ptr, ctypes.byref(lo), ctypes.byref(hi))
        return lo.value, hi.value

    @functools.cached_property
    def sizes(self):
        """{letter: size} in the op's print order."""
        letters = c_char_p()
        _capi.call("problem_size_letters", self._handle.ptr, ctypes.byref(letters))
        sizes = {}
        for letter in letters.value.decode():
            v = c_int64()
            _capi.call("problem_size", self._handle.ptr, letter.encode(), ctypes.byref(v))
            sizes[letter] = v.value
        return sizes

    @functools.cached_property
    def flags(self):
        """The options switched on, by name without '+' ({"dt_bias", "softplus"})."""
        on, flags = c_int32(), set()
        for flag in FLAGS:
            _capi.call("problem_flag", self._handle.ptr, flag.encode(), ctypes.byref(on))
            if on.value:
                flags.add(flag)
        return frozenset(flags)

    @functools.cached_property
    def values(self):
        """The integer options: {"slots": Bs, "tokens": T (0 without tokens=), "pad": the padding slot id}."""
        values = {}
        for key in ("slots", "tokens", "pad"):
            v = c_int64()
            _capi.call("problem_value", self._handle.ptr, key.encode(), ctypes.byref(v))
            values[key] = v.value
        return values

    @functools.cached_property
    def layout(self):
        """Where the inputs lie in memory (ssd_suite.layout.Layout): the buffers of layout=zxbcdt or
        layout=strided and each laid-out input's view in them; empty (false) under layout=contiguous."""
        return layout_of(self)

    def option(self, key):
        """The value of the problem's `key=value` token as printed ("bf16" for state=bf16), or None
        when the problem has none (the op's default applies)."""
        prefix = key + "="
        for token in self._text.split():
            if token.startswith(prefix):
                return token[len(prefix):]
        return None

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
