"""What a campaign and its worker process exchange: pickled messages on pipes, read with a deadline,
and the call record, a few shared bytes in which the worker says which request it is on, whether
the adapter call is running and since when, so that the campaign can time the call alone without
a message per phase."""
import mmap
import os
import pickle
import select
import struct
import tempfile
import time

_LENGTH = struct.Struct("<Q")
TIMED_OUT = object()  # what Reader.read returns when the deadline passed first


def send(fd, message):
    """Writes one message (any picklable value) to a pipe, whole."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


class Reader:
    """The messages of one pipe, in order."""

    def __init__(self, fd):
        self.fd = fd
        self._buffer = bytearray()
        self._poll = select.poll()  # not select.select: a campaign may hold fds past 1024
        self._poll.register(fd, select.POLLIN)

    def read(self, deadline=None):
        """The next message; TIMED_OUT when time.monotonic() reaches `deadline` first (None: waits
        as long as it takes). Raises EOFError when the writer is gone."""
        while True:
            message = self._take()
            if message is not None:
                return pickle.loads(message)
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not self._poll.poll(max(1, int(left * 1000 + 0.999))):
                    if time.monotonic() >= deadline:
                        return TIMED_OUT
                    continue  # poll's millisecond rounding woke it early
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                raise EOFError("the other end of the pipe closed it")
            self._buffer += chunk

    def _take(self):
        if len(self._buffer) < _LENGTH.size:
            return None
        (length,) = _LENGTH.unpack_from(self._buffer)
        end = _LENGTH.size + length
        if len(self._buffer) < end:
            return None
        message = bytes(self._buffer[_LENGTH.size:end])
        del self._buffer[:end]
        return message


class CallRecord:
    """32 bytes shared by the campaign and its worker: the phase of the request being run, when
    its adapter call started (time.monotonic(), one clock for every process of the host), the
    case's element count, and that request's sequence number. The worker writes the sequence
    number last, so a reader that sees it sees the fields written with it."""

    PREPARING, CALLING, JUDGING = 0, 1, 2  # making the inputs, in the adapter call, after it
    SIZE = 32
    _FIELDS = struct.Struct("<qdq")  # phase, start, elements
    _SEQUENCE = struct.Struct("<q")
    _PHASE = struct.Struct("<q")

    def __init__(self, fd):
        self._map = mmap.mmap(fd, self.SIZE)

    @classmethod
    def create(cls):
        """A new record and its file (an unlinked temporary file), whose descriptor the worker
        inherits; the caller closes the file once the worker has started."""
        f = tempfile.TemporaryFile()
        f.truncate(cls.SIZE)
        return cls(f.fileno()), f

    def begin(self, sequence, phase, start=0.0, elements=0):
        self._map[0:self._FIELDS.size] = self._FIELDS.pack(phase, start, elements)
        self._map[self._FIELDS.size:self.SIZE] = self._SEQUENCE.pack(sequence)

    def enter(self, phase):
        """The phase of the request already begun."""
        self._map[0:self._PHASE.size] = self._PHASE.pack(phase)

    def read(self):
        """(sequence, phase, start, elements) as last written."""
        (sequence,) = self._SEQUENCE.unpack_from(self._map, self._FIELDS.size)
        phase, start, elements = self._FIELDS.unpack_from(self._map, 0)
        return sequence, phase, start, elements

    def close(self):
        self._map.close()
