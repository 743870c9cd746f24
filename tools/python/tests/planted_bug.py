"""The numpy reference adapter with one planted bug: chunk_cumsum's running sum does not restart at
chunk boundaries (it runs over the whole sequence), which shows only when a case has two chunks or
more. recurrent stays honest."""
import numpy as np

from ssd_suite.adapters import numpy_ref

name = "planted_bug"
recurrent = numpy_ref.recurrent


def chunk_cumsum(problem, inputs):
    outs = numpy_ref.chunk_cumsum(problem, inputs)
    b, h, nc, q = outs["dt_out"].shape
    dA = inputs["A"].astype(np.float32)[None, :, None, None] * outs["dt_out"]
    outs["dA_cumsum"] = np.cumsum(dA.reshape(b, h, nc * q), axis=-1, dtype=np.float32).reshape(b, h, nc, q)
    return outs
