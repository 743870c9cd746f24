"""The worker process of an isolated campaign, started by ssd_suite.worker (never by hand) with the
descriptors of its request pipe, its reply pipe and the call record: imports the adapter once,
then checks or dumps each case it is sent as a problem string, making the inputs itself (a pure
function of the string), so that a crash, a hang or a lost device costs the campaign one case
and a restart of this process."""
import os
import signal
import sys
import time

from . import _wire

LOST = ("; the device is lost (device_healthy() is False after the error): the worker process exits, "
        "and the next case runs in a fresh one")


class Watch:
    """Tells the campaign, through the call record, when the adapter call of a request starts and
    ends; after a call that raised, asks the adapter's device_healthy() (inside the timed call, as
    it synchronizes a device that may hang)."""

    def __init__(self, record, sequence, healthy):
        self._record, self._sequence, self._healthy = record, sequence, healthy
        self.lost = False

    def calling(self, inputs):
        from .arrays import _tensor_infos

        elements = sum(int(a.size) for a in inputs.values() if a is not None)
        try:
            # The oracle, needed to judge anyway, is not the adapter's time; the outputs' sizes
            # are in the time limit, as in ssd-fuzz's.
            elements += sum(info.numel for info in _tensor_infos(inputs.truth(), "truth"))
        except Exception:  # noqa: BLE001 - judged, and reported, after the call as in process
            pass
        self._record.begin(self._sequence, _wire.CallRecord.CALLING, time.monotonic(), elements)

    def returned(self, error):
        if error is not None and self._healthy is not None:
            try:
                self.lost = not self._healthy()
            except Exception:  # noqa: BLE001 - a hook that cannot tell has lost its device too
                self.lost = True
        self._record.enter(_wire.CallRecord.JUDGING)


def health_hook(adapter, spec):
    """The adapter's device_healthy(), or its module's, or None."""
    for owner in (adapter, sys.modules.get(spec.partition(":")[0])):
        hook = getattr(owner, "device_healthy", None)
        if callable(hook):
            return hook
    return None


def with_lost_device(judgement):
    """The judgement with the lost device said in its message."""
    from .judgement import Judgement

    return Judgement(judgement.verdict, judgement.problem, judgement.max_r, judgement.message + LOST, None,
                     judgement.worst, judgement.outputs, judgement.max_ratio)


def picklable(error):
    """`error` when it pickles (the campaign raises it again), else an SsdError with its text."""
    import pickle

    from ._capi import SsdError

    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:  # noqa: BLE001 - any exception class that cannot travel
        return SsdError(f"{type(error).__name__}: {error}")


def serve(reader, replies, record, adapter, healthy):
    """Runs requests until the campaign closes the pipe (0) or the device is lost (0, after the reply)."""
    from .adapter import run_case
    from .campaign import dump_case
    from .problem import Problem

    while True:
        try:
            kind, sequence, text, args = reader.read()
        except EOFError:
            return 0
        record.begin(sequence, _wire.CallRecord.PREPARING)
        watch = Watch(record, sequence, healthy)
        try:
            problem = Problem(text)
            if kind == "check":
                value = run_case(adapter, problem, watch)[0]
                if watch.lost:
                    value = with_lost_device(value)
            else:
                value = dump_case(adapter, problem, args[0], watch)
        except Exception as e:  # noqa: BLE001 - the suite's own error: the campaign raises it
            value, kind = picklable(e), "raised"
        try:
            _wire.send(replies, (kind, sequence, value, watch.lost))
        except BrokenPipeError:
            return 0  # the campaign ended, dropping this case
        if watch.lost:
            return 0


def main(argv):
    """argv: the request pipe's, the reply pipe's and the call record's file descriptors."""
    requests, replies, record_fd = (int(a) for a in argv)
    # Ctrl-C belongs to the campaign, which then closes this process; the worker sees it too (one
    # process group) and would otherwise die as CRASHED.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    reader = _wire.Reader(requests)
    try:
        hello = reader.read()
    except EOFError:
        return 0
    sys.path[:] = hello["path"]  # the campaign's, where it found the adapter
    record = _wire.CallRecord(record_fd)
    os.close(record_fd)
    try:
        from .adapter import load_adapter

        adapter = load_adapter(hello["spec"])
        healthy = health_hook(adapter, hello["spec"])
    except Exception as e:  # noqa: BLE001 - whatever the import raised, the campaign reports it
        _wire.send(replies, ("failed", f"{type(e).__name__}: {e}"))
        return 1
    _wire.send(replies, ("ready", os.getpid()))
    return serve(reader, replies, record, adapter, healthy)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
