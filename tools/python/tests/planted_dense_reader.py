"""The numpy reference adapter with a planted view bug: every laid-out input is read flat from its
buffer, starting at the view's offset, as if the view were dense (its strides ignored), the way the
emulation's planted strides_ignored reads them. On a contiguous case nothing is laid out and it is
the honest reference; on zxbcdt or strided views it reads neighbouring columns, pads and poison."""
import numpy as np

from ssd_suite.adapters import numpy_ref

name = "planted_dense_reader"


def read_as_dense(inputs):
    """The inputs with each view replaced by the dense reading of its buffer from the view's first
    element (past the buffer's end, which a stride-0 view may reach, it reads zeros)."""
    read = dict(inputs)
    for role, v in inputs.layout.placements.items():
        if role not in inputs:
            continue
        flat = inputs.buffers[v.buffer]
        values = np.zeros(v.numel, dtype=flat.dtype)
        taken = flat[v.offset: v.offset + v.numel]
        values[: taken.size] = taken
        read[role] = values.reshape(v.shape)
    return read


def _reading_as_dense(op):
    def run(problem, inputs):
        return op(problem, read_as_dense(inputs))

    run.__name__ = op.__name__
    return run


chunk_cumsum = _reading_as_dense(numpy_ref.chunk_cumsum)
chunk_coupling = _reading_as_dense(numpy_ref.chunk_coupling)
state_passing = _reading_as_dense(numpy_ref.state_passing)
recurrent = _reading_as_dense(numpy_ref.recurrent)
