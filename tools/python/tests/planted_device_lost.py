"""An adapter that loses its device the way a CUDA kernel's illegal memory access does: its
chunk_cumsum raises on cases of two chunks or more (s > q), and from then on every call in the
process raises the same error (a sticky error), while device_healthy() says False. Honest
otherwise: a fresh process has a fresh device."""
from ssd_suite.adapters import numpy_ref

name = "planted_device_lost"
ERROR = "CUDA error: an illegal memory access was encountered"
_lost = False


class AcceleratorError(RuntimeError):
    """What torch raises for a CUDA error."""


def _check_device():
    if _lost:
        raise AcceleratorError(ERROR)


def chunk_cumsum(problem, inputs):
    global _lost
    _check_device()
    if problem.sizes["s"] > problem.chunk_size:
        _lost = True
        raise AcceleratorError(ERROR)
    return numpy_ref.chunk_cumsum(problem, inputs)


def recurrent(problem, inputs):
    _check_device()
    return numpy_ref.recurrent(problem, inputs)


def device_healthy():
    return not _lost
