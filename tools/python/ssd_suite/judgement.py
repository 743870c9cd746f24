"""Verdicts on a kernel's outputs: judge() hands numpy (or torch, or any array-like) outputs to
the C API's judge under the oracle's bounds and returns a Judgement."""
import ctypes

import numpy as np

from . import _capi
from .arrays import Inputs, as_numpy, as_problem, truth_handle


class Element:
    """One of the worst elements: output, index "[b,t,h,p]", flat, got, expected, bound, r, why."""

    def __init__(self, e):
        self.output, self.index, self.flat = e.output.decode(), e.index.decode(), e.flat
        self.got, self.expected, self.bound, self.r, self.why = e.got, e.expected, e.bound, e.r, e.why.decode()

    def __repr__(self):
        return f"Element({self.output}{self.index} got {self.got!r} expected {self.expected!r} r {self.r:.3g})"

    def __reduce__(self):
        # Pickled as a tuple of its fields: a worker process sends a few per case, and this is
        # several times faster to load than an object's __dict__.
        return _element, (self.output, self.index, self.flat, self.got, self.expected, self.bound, self.r, self.why)


def _element(*fields):
    e = Element.__new__(Element)
    e.output, e.index, e.flat, e.got, e.expected, e.bound, e.r, e.why = fields
    return e


class Judgement:
    """The verdict on one case: `verdict` ("PASSED", "FAILED", "MISTRUSTED", "SKIPPED", "INVALID",
    "SUSPECT", "VARIANT", and from a worker process "CRASHED" or "TIMEOUT"), `max_r`, `max_ratio`
    (the statistical verdict's largest ratio), `message`, `problem` (the canonical string),
    `description` (what ssd::describe prints), `worst` (Elements) and `outputs` ({name: dict of
    compared, over_bound, exact_mismatches, not_finite, max_r}). Judgements pickle, so a worker
    process can send them back."""

    def __init__(self, verdict, problem, max_r=0.0, message="", description=None, worst=(), outputs=None,
                 max_ratio=0.0):
        self.verdict, self.problem, self.max_r, self.message = verdict, str(problem), max_r, message
        self.max_ratio = max_ratio
        self.worst, self.outputs = list(worst), dict(outputs or {})
        self.description = description if description is not None else self._describe()

    def _describe(self):
        """ssd::describe's format, for verdicts given here (an adapter that raised or skipped, a
        worker process that died or ran past its time limit)."""
        if self.verdict in ("CRASHED", "TIMEOUT"):  # no outputs to show: the call never returned
            return f"{self.verdict}    {self.problem}" + (f"\n  {self.message}" if self.message else "") + \
                f"\n  repro: {self.problem}"
        parts = ", ".join(f"{name} {o['max_r']:.3g}" for name, o in self.outputs.items())
        text = f"{self.verdict:<10} max r {self.max_r:.3g} ({parts})  {self.problem}"
        if self.message:
            text += "\n  " + self.message
        if self.verdict == "FAILED":
            text += "\n  repro: " + self.problem
        return text

    @property
    def passed(self):
        return self.verdict == "PASSED"

    @property
    def failed(self):
        """FAILED, or a failure of its own name (ssd::is_failure): CRASHED, TIMEOUT, VARIANT."""
        return self.verdict in ("FAILED", "CRASHED", "TIMEOUT", "VARIANT")

    @property
    def suspect(self):
        return self.verdict == "SUSPECT"

    @property
    def alarm(self):
        """A verdict that makes a campaign exit 1 (ssd::is_alarm): FAILED or SUSPECT."""
        return self.failed or self.suspect

    @property
    def not_finite(self):
        return any(o["not_finite"] > 0 for o in self.outputs.values())

    def __str__(self):
        return self.description

    def __repr__(self):
        return f"Judgement({self.verdict}, max_r={self.max_r:.3g}, problem={self.problem!r})"

    def __reduce__(self):
        return Judgement, (self.verdict, self.problem, self.max_r, self.message, self.description, self.worst,
                           self.outputs, self.max_ratio)

    @classmethod
    def _from_handle(cls, handle):
        h = handle.ptr
        verdict, message, problem, text = (ctypes.c_char_p() for _ in range(4))
        max_r, max_ratio, count = ctypes.c_double(), ctypes.c_double(), ctypes.c_int64()
        _capi.call("judgement_verdict", h, ctypes.byref(verdict))
        _capi.call("judgement_max_r", h, ctypes.byref(max_r))
        _capi.call("judgement_max_ratio", h, ctypes.byref(max_ratio))
        _capi.call("judgement_message", h, ctypes.byref(message))
        _capi.call("judgement_problem", h, ctypes.byref(problem))
        _capi.call("judgement_describe", h, ctypes.byref(text))
        outputs = {}
        _capi.call("judgement_output_count", h, ctypes.byref(count))
        for i in range(count.value):
            o = _capi.OutputJudgement()
            _capi.call("judgement_output", h, i, ctypes.byref(o))
            outputs[o.name.decode()] = {"compared": o.compared, "over_bound": o.over_bound,
                                        "exact_mismatches": o.exact_mismatches, "not_finite": o.not_finite,
                                        "max_r": o.max_r}
        worst = []
        _capi.call("judgement_worst_count", h, ctypes.byref(count))
        for i in range(count.value):
            e = _capi.Element()
            _capi.call("judgement_worst", h, i, ctypes.byref(e))
            worst.append(Element(e))
        return cls(verdict.value.decode(), problem.value.decode(), max_r.value, message.value.decode(),
                   text.value.decode(), worst, outputs, max_ratio.value)


def _c_outputs(outputs):
    """The outputs as C structs of float64 values in the contract's storage dtype (rounded there,
    as a kernel's store would round them); the arrays are returned too, to keep them alive."""
    if not hasattr(outputs, "items"):
        raise TypeError(f"argument 'outputs': a dict of output name to array, not {type(outputs).__name__}")
    structs = (_capi.Output * max(1, len(outputs)))()
    keep = []
    for i, (name, array) in enumerate(outputs.items()):
        a = np.ascontiguousarray(as_numpy(array, f"outputs['{name}']"), dtype=np.float64)
        if a.ndim > _capi.MAX_RANK:
            raise ValueError(f"argument 'outputs': '{name}' has rank {a.ndim}, above {_capi.MAX_RANK}")
        keep.append(a)
        s = structs[i]
        s.name = str(name).encode()
        s.dtype, s.encoding, s.rank = _capi.DTYPE_CONTRACT, _capi.AS_F64, a.ndim
        for d, extent in enumerate(a.shape):
            s.shape[d] = extent
        s.data = a.ctypes.data
    return structs, len(outputs), keep


def judge(problem, outputs, inputs=None, worst=5, truth=None):
    """The verdict on a kernel's outputs ({name: array}) for a valid problem. Values are read as
    float64 and rounded to each output's storage dtype (what the kernel stores). `inputs` (from
    ssd_suite.inputs of the same problem) saves remaking them; an unknown output name raises
    SsdArgumentError, a missing or mis-shaped one is a FAILED verdict."""
    problem = as_problem(problem)
    handle = truth if truth is not None else truth_handle(problem, inputs if isinstance(inputs, Inputs) else None)
    structs, count, keep = _c_outputs(outputs)
    judgement = _capi.make("judgement", "judge", handle.ptr, structs, count, worst)
    del keep
    return Judgement._from_handle(judgement)
