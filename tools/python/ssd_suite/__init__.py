"""ssd_suite: the SSD suite's float64 oracle, per-element bounds, verdicts and fuzz campaigns
from Python, through the C API (libssd-capi.so, loaded with ctypes). docs/python.md.

    import ssd_suite
    p = ssd_suite.Problem("chunk_cumsum:bf16 b1 s30 h2 q7 +dt_bias seed=6")
    x = ssd_suite.inputs(p)                      # {name: numpy array}
    want = ssd_suite.oracle(p)                   # {name: OracleOutput(value, defined, bound, exact)}
    j = ssd_suite.judge(p, my_kernel(p, x))      # Judgement: verdict, max_r, description
    ssd_suite.fuzz(my_adapter, ops=["chunk_cumsum"], time=60)

Problems, fuzz cases and shrink candidates need no numpy; arrays, verdicts and campaigns do (they
are loaded on first use)."""
from ._capi import SsdArgumentError, SsdError
from .problem import Problem, campaign_problem, op_names, shrink_candidates

__version__ = "0.1.0"

_LAZY = {"inputs": "arrays", "oracle": "arrays", "as_numpy": "arrays", "Inputs": "arrays",
         "OracleOutput": "arrays", "judge": "judgement", "Judgement": "judgement", "fuzz": "campaign",
         "FuzzResult": "campaign", "shrink": "campaign", "check_case": "adapter"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'ssd_suite' has no attribute '{name}'")


def capi_version():
    """The C API version of the loaded libssd-capi.so (SSD_CAPI_VERSION)."""
    from . import _capi

    return _capi.lib().ssd_capi_version()


__all__ = ["Problem", "campaign_problem", "shrink_candidates", "op_names", "SsdError", "SsdArgumentError",
           "capi_version", *_LAZY]
