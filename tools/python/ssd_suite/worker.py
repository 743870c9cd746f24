"""A campaign's worker process, seen from the campaign: a long-lived Python process
(ssd_suite._worker) that imports the adapter once and checks the cases it is sent as problem
strings. A call that kills the process is CRASHED (the signal or exit status named), one that
outlives its time limit is TIMEOUT (the process is killed), and after either the next case gets a
fresh process, as with ssd-fuzz's ssd-kernel-worker (docs/python.md, "Isolation")."""
import collections
import os
import signal
import subprocess
import sys
import time

from . import _capi, _wire
from .adapter import as_declared
from .judgement import Judgement

# Time limits of one adapter call when the campaign sets none (docs/python.md, "Isolation").
# ssd-fuzz gives a compiled kernel 5 s plus 1 s per million elements. A Python adapter of a JIT
# library compiles on calls: Triton compiles (and mamba_ssm autotunes) each new specialization,
# tens of seconds on an H200, so every call gets 60 s, or what the adapter declares (call_seconds);
# the first of each op and dtype in a fresh process also imports the library and compiles its
# kernels from cold, so it gets 300 s, or call_seconds where that is longer.
BASE_SECONDS = 60.0
FIRST_CALL_SECONDS = 300.0
SECONDS_PER_ELEMENT = 1e-6
STARTUP_SECONDS = 300.0  # importing the adapter (torch, a library) before the first case
EXIT_GRACE_SECONDS = 2.0  # a worker that closed its pipe exits within this, or is killed
POLL_SECONDS = 0.05  # how often the call record is read while no adapter call is timed


def default_case_timeout(elements, first_call, call_seconds=None):
    """Seconds an adapter call on a case of `elements` tensor elements (inputs and outputs) may run
    when the campaign gives no case_timeout; `first_call`: the first call of its op and dtype in
    this worker process; `call_seconds`: the adapter's declared base (None: BASE_SECONDS)."""
    base = BASE_SECONDS if call_seconds is None else call_seconds
    if first_call:
        base = max(base, FIRST_CALL_SECONDS)
    return base + SECONDS_PER_ELEMENT * elements


def declared_call_seconds(adapter):
    """The adapter's `call_seconds` (seconds in (0, 1e7] that any of its calls may take, set by
    adapters of libraries that compile on calls), or None when it declares none."""
    seconds = getattr(adapter, "call_seconds", None)
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 < seconds <= 1e7:
        raise ValueError(f"adapter attribute 'call_seconds': {seconds!r} is not a number of seconds in (0, 1e7]")
    return float(seconds)


def signal_text(number):
    """"signal 11 (SIGSEGV: Segmentation fault)", as ssd-fuzz names a signal."""
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = "?"
    text = signal.strsignal(number)
    return f"signal {number} ({name}" + (f": {text}" if text else "") + ")"


def seconds_text(seconds):
    return f"{seconds:.3g} s"


# What the worker process runs: `python3 -m ssd_suite._worker`, with this ssd_suite found first.
_BOOTSTRAP = ("import sys; sys.path.insert(0, sys.argv[1]); from ssd_suite._worker import main; "
              "sys.exit(main(sys.argv[2:]))")

_WHERE = {_wire.CallRecord.PREPARING: "while making the case's inputs, before the adapter call",
          _wire.CallRecord.JUDGING: "after the adapter call returned, while its outputs were judged"}


class WorkerError(_capi.SsdError):
    """The worker process could not be started, or cannot take a case."""


class Request:
    """A case sent to the worker: its kind ("check" or "dump"), problem and arguments, the sequence
    number it went with, and once known its outcome, (the reply, None) or (None, (verdict, message))
    when it cost the worker its life."""

    __slots__ = ("kind", "problem", "args", "sequence", "outcome")

    def __init__(self, kind, problem, args):
        self.kind, self.problem, self.args, self.sequence, self.outcome = kind, problem, args, 0, None


class Worker:
    """The campaign's handle on its worker process: check(problem) -> Judgement and
    dump(problem, folder) -> case file path, each run in the worker; or submit(problem) now and
    judgement(request) later, so that the worker runs one case while the campaign judges the
    last. Requests run in order; the process is started on first use and again after each death,
    and what was queued behind a death goes to the next process. `starts` counts the processes."""

    def __init__(self, adapter, spec, case_timeout=None):
        self.adapter, self.spec, self.case_timeout = adapter, spec, case_timeout
        self.call_seconds = declared_call_seconds(adapter)  # checked before any worker starts
        self.starts = 0
        self._process = None
        self._sequence = 0
        self._pending = collections.deque()  # sent, outcome not yet read: oldest first
        self._not_taken = 0  # deaths in a row before the oldest request was taken

    def submit(self, problem, kind="check", *args):
        """Sends a case to the worker and returns its Request at once."""
        if self._process is None:
            self.start()
        request = Request(kind, problem, args)
        self._pending.append(request)
        self._send(request)
        return request

    def judgement(self, request):
        """The Judgement of a submitted check, waiting for it (and for those sent before it)."""
        value, death = self._outcome(request)
        if death is None:
            return value
        verdict, message = death
        return Judgement(verdict, as_declared(self.adapter, request.problem), message=message)

    def check(self, problem):
        return self.judgement(self.submit(problem))

    def dump(self, problem, folder):
        """The case file of `problem` written by the worker ("" when nothing was written, or when
        the worker died writing it)."""
        value, death = self._outcome(self.submit(problem, "dump", folder))
        return "" if death else value

    def start(self):
        """Starts a worker process (unless one runs) and waits until it has imported the adapter."""
        if self._process is not None:
            return
        _capi.lib()  # the library this process loaded is the one the worker loads
        requests_read, requests = os.pipe()
        replies, replies_write = os.pipe()
        record, record_file = _wire.CallRecord.create()
        env = dict(os.environ)
        if _capi.library_path and os.sep in _capi.library_path:
            env["SSD_CAPI_LIBRARY"] = os.path.abspath(_capi.library_path)
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # where this ssd_suite lies
        # fork and exec at once: the worker is a fresh interpreter, so no CUDA context (nor any
        # thread) of this process crosses into it. This ssd_suite goes first on its sys.path
        # without touching PYTHONPATH, which the library's own subprocesses inherit.
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-c", _BOOTSTRAP, root, str(requests_read), str(replies_write),
                 str(record_file.fileno())],
                pass_fds=(requests_read, replies_write, record_file.fileno()), stdin=subprocess.DEVNULL, env=env)
        except (OSError, ValueError) as e:
            for fd in (requests, replies):
                os.close(fd)
            record.close()
            raise WorkerError(f"cannot start a worker process with {sys.executable!r}: {e}") from e
        finally:
            os.close(requests_read)
            os.close(replies_write)
            record_file.close()
        self._requests, self._replies, self._record = requests, _wire.Reader(replies), record
        self._first_calls_done = set()  # (op, dtype) whose call in this process was not SKIPPED
        self.starts += 1
        try:
            _wire.send(self._requests, {"spec": self.spec, "path": list(sys.path)})
            reply = self._replies.read(time.monotonic() + STARTUP_SECONDS)
        except (EOFError, BrokenPipeError):
            reply = None
        if isinstance(reply, tuple) and reply[0] == "ready":
            return
        why = reply[1] if isinstance(reply, tuple) and reply[0] == "failed" else (
            f"it did not start within {seconds_text(STARTUP_SECONDS)}" if reply is _wire.TIMED_OUT else
            "it exited before it was ready")
        self._end(kill=True)
        raise WorkerError(f"a worker process cannot load adapter '{self.spec}': {why}")

    def close(self):
        """Ends the worker process, dropping what is queued: it exits when its request pipe
        closes (after the call it is in), else it is killed."""
        self._pending.clear()
        if self._process is not None:
            self._end(kill=False)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _send(self, request):
        self._sequence += 1
        request.sequence = self._sequence
        try:
            _wire.send(self._requests, (request.kind, request.sequence, str(request.problem), request.args))
        except BrokenPipeError:
            pass  # dead already: the reply pipe's end and the call record say so when it is waited for

    def _outcome(self, request):
        while request.outcome is None:
            self._settle_oldest()
        return request.outcome

    def _settle_oldest(self):
        """Waits for the oldest request's reply or death. A worker that died before taking it
        (after the previous one) is replaced and the request sent again: that death is not its.
        Whatever the ended process had queued goes to a new one."""
        oldest = self._pending[0]
        ended = self._wait(oldest)
        if ended is None:
            self._not_taken += 1
            if self._not_taken > 1:
                self._pending.clear()
                raise WorkerError("the worker process died twice before taking a case (does importing the adapter "
                                  "kill it?)")
        else:
            self._not_taken = 0
            self._pending.popleft()
        if self._process is None and self._pending:
            self.start()
            for queued in self._pending:
                self._send(queued)
        if ended is not None and ended[0] == "raised":
            raise ended[1]  # the suite's own error, not the adapter's: as in process
        if ended is not None:
            oldest.outcome = ended[1:]

    def _wait(self, request):
        """("reply", value, None), ("death", None, (verdict, message)), ("raised", error), or None
        when the worker died before taking `request`."""
        sequence, key = request.sequence, (request.problem.op, request.problem.dtype)
        while True:
            seen, phase, start, elements = self._record.read()
            deadline = None
            if seen == sequence and phase == _wire.CallRecord.CALLING:
                limit = self._limit(key, elements)
                deadline = start + limit
            try:
                reply = self._replies.read(deadline if deadline is not None else time.monotonic() + POLL_SECONDS)
            except EOFError:
                death = self._death(sequence)
                return None if death is None else ("death", None, death)
            if reply is _wire.TIMED_OUT:
                if deadline is not None and self._record.read()[:3] == (sequence, phase, start):
                    self._end(kill=True)
                    return "death", None, ("TIMEOUT", f"the adapter call was still running after {seconds_text(limit)} "
                                                      "(--case-timeout); its process was killed")
                continue
            tag, replied_to, value, retiring = reply
            if replied_to != sequence:
                continue  # not a reply to this request
            if retiring:
                self._end(kill=False)  # its device is lost: it exits by itself
            if tag == "raised":
                return "raised", value
            if tag == "check" and value.verdict != "SKIPPED":
                self._first_calls_done.add(key)
            return "reply", value, None

    def _limit(self, key, elements):
        if self.case_timeout is not None:
            return self.case_timeout
        return default_case_timeout(elements, key not in self._first_calls_done, self.call_seconds)

    def _death(self, sequence):
        """(verdict, message) of the worker's death during request `sequence`, or None when it
        died before taking it."""
        seen, phase, _, _ = self._record.read()
        killed, status = self._end(kill=False)
        if seen != sequence:
            return None
        if killed:
            return "CRASHED", "the worker closed its connection during the adapter call and did not exit; it was killed"
        if phase == _wire.CallRecord.CALLING:
            if status < 0:
                return "CRASHED", f"the adapter call killed its process with {signal_text(-status)}"
            return "CRASHED", (f"the process exited with status {status} during the adapter call "
                               "(exit or os._exit inside the adapter)")
        how = f"was killed by {signal_text(-status)}" if status < 0 else f"exited with status {status}"
        return "CRASHED", f"the worker process {how} {_WHERE[phase]}"

    def _end(self, kill):
        """Closes the pipes and reaps the process, killing it at once (`kill`) or when it does not
        exit within the grace period; (whether it was killed here, its exit status)."""
        process, self._process = self._process, None
        if kill:
            process.kill()
        os.close(self._requests)
        os.close(self._replies.fd)
        self._record.close()
        try:
            return kill, process.wait(EXIT_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            return True, process.wait()
