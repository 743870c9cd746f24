"""Adapters whose chunk_cumsum takes its process down on cases of two chunks or more (s > q) and is
honest on the rest, as a kernel with an out-of-bounds tail would: `segfault` (reads address 0),
`exits` (os._exit(3)), `hangs` (sleeps for 1000 s), `hangs_declared` (the same, with call_seconds = 1,
as a JIT library's adapter declares its own limit). recurrent stays honest in all of them, and
`chatty` is honest everywhere but prints to stdout, which must not reach the worker's pipe."""
import ctypes
import os
import sys
import time

from ssd_suite.adapters import numpy_ref


def multi_chunk(problem):
    return problem.sizes["s"] > problem.chunk_size


class Planted:
    """numpy_ref's chunk_cumsum and recurrent, with `fault` called first on multi-chunk cases."""

    def __init__(self, name, fault):
        self.name, self._fault = name, fault

    def chunk_cumsum(self, problem, inputs):
        if multi_chunk(problem):
            self._fault()
        return numpy_ref.chunk_cumsum(problem, inputs)

    def recurrent(self, problem, inputs):
        return numpy_ref.recurrent(problem, inputs)


def _chatter():
    print("planted_faults.chatty: a line on stdout")
    sys.stdout.flush()


segfault = Planted("segfault", lambda: ctypes.string_at(0))
exits = Planted("exits", lambda: os._exit(3))
hangs = Planted("hangs", lambda: time.sleep(1000))
chatty = Planted("chatty", _chatter)
hangs_declared = Planted("hangs_declared", lambda: time.sleep(1000))
hangs_declared.call_seconds = 1
