"""Fuzz campaigns of a Python adapter: ssd-fuzz's cases (case k of a seed, the same ops in turn,
the same shards), run in a worker process by default (ssd_suite.isolation), a progress line, every
failure shrunk greedily through the C API's shrink candidates (a SUSPECT case kept as drawn) and
printed with a repro line, ssd-fuzz's summary table and exit status (0 clean, 1 failures, CRASHED,
TIMEOUT or SUSPECT cases, 3 nothing tested)."""
import contextlib
import itertools
import os
import signal
import sys
import threading
import time as _time

from .adapter import adapter_name, implemented_ops, is_library, load_adapter, run_case
from .arrays import as_problem
from .isolation import adapter_spec, open_checker
from .problem import Problem, campaign_options, campaign_problem, op_names, shrink_candidates
from .report import DECADES, json_report, r_decade, write_report

VERDICTS = ("PASSED", "FAILED", "MISTRUSTED", "SKIPPED", "INVALID", "SUSPECT", "VARIANT", "CRASHED", "TIMEOUT")


class OpTally:
    """Counts of one op, as ssd-fuzz keeps them (ssd::OpTally)."""

    def __init__(self):
        self.cases = self.passed = self.failed = self.mistrusted = self.skipped = self.invalid = 0
        self.crashed = self.timeout = 0  # of the failed cases, those whose call never returned
        self.variant = 0  # of the failed cases, those within every bound but not packing-invariant
        self.suspect = 0  # within every bound, error norm far above honest rounding (docs/tolerance.md)
        self.not_finite = 0
        self.max_r = 0.0
        self.max_ratio = 0.0  # the largest statistical ratio of any output (SUSPECT above the threshold)
        self.seconds = 0.0
        self.r_decades = [0] * len(DECADES)  # judged cases (PASSED, FAILED, MISTRUSTED) by max r
        self.skip_reasons = {}  # message of a SKIPPED case -> how many cases gave it

    def record(self, j, seconds):
        self.cases += 1
        self.seconds += seconds
        setattr(self, j.verdict.lower(), getattr(self, j.verdict.lower()) + 1)
        if j.verdict in ("CRASHED", "TIMEOUT"):
            self.failed += 1  # counted as failures, with no outputs to measure
            return
        if j.verdict == "VARIANT":
            self.failed += 1  # a failure whose outputs were judged within every bound
        if j.verdict == "SKIPPED":
            self.skip_reasons[j.message] = self.skip_reasons.get(j.message, 0) + 1
        if j.verdict in ("SKIPPED", "INVALID"):
            return
        self.not_finite += 1 if j.not_finite else 0
        if j.outputs:
            self.max_r = max(self.max_r, j.max_r)
            self.max_ratio = max(self.max_ratio, j.max_ratio)
            self.r_decades[r_decade(j.max_r)] += 1


class Failure:
    """A failing (or SUSPECT) case: where it started, the minimal problem, its judgement, and its case file."""

    def __init__(self, original, minimal, judgement, dump=""):
        self.original, self.minimal, self.judgement, self.dump = original, minimal, judgement, dump


def dump_case(adapter, problem, folder, watch=None):
    """The failing case as a results case file (inputs and the adapter's outputs), which
    `ssd-golden check` replays without the adapter; "" when there is nothing to store (the adapter
    raised, an output is missing or mis-shaped, a kernel library, or no h5py). `watch` as for
    run_case (a worker process dumps the cases of an isolated campaign)."""
    judgement, outputs = run_case(adapter, problem, watch)
    if outputs is None or not judgement.alarm:
        return ""
    try:
        from .case_file import file_name, write_results

        os.makedirs(folder, exist_ok=True)
        return write_results(os.path.join(folder, file_name(problem)), problem, outputs)
    except (ImportError, ValueError, TypeError, OSError):
        return ""  # the repro line still reproduces it


class CampaignStopped(BaseException):
    """SIGTERM arrived during a campaign (a BaseException, as KeyboardInterrupt, so that no adapter's
    `except Exception` swallows it): the campaign ends as if its time were up."""


@contextlib.contextmanager
def _stopped_by_sigterm():
    """SIGTERM (what `timeout` and batch schedulers send) raises CampaignStopped in the campaign's
    thread, once: a second SIGTERM during the report's writing kills the process as usual. Only the
    main thread can take signals; elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        raise CampaignStopped()

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _signal_name(stop):
    return "SIGTERM" if isinstance(stop, CampaignStopped) else "SIGINT"


class FuzzResult:
    """What a campaign did: ops run, ops the adapter lacks, tallies per op, failures, seconds, and
    how it ended (exit_status, line) as ssd-fuzz reports it."""

    def __init__(self):
        self.ops, self.unimplemented, self.tallies, self.failures = [], [], {}, []
        self.by_dtype = {}  # (op, primary dtype) -> OpTally
        self.seconds = 0.0
        self.stopped_by = None  # "SIGTERM" or "SIGINT" when a signal ended the campaign early

    def summary(self):
        failed = sum(t.failed for t in self.tallies.values())
        suspect = sum(t.suspect for t in self.tallies.values())
        untested = [op for op in self.ops if self.tallies.get(op, OpTally()).cases ==
                    self.tallies.get(op, OpTally()).skipped]
        if failed:
            return 1, f"FAILURES FOUND: {failed} failing case(s)" + (f", {suspect} SUSPECT" if suspect else "")
        if suspect:
            return 1, f"SUSPECT: {suspect} case(s) within every bound but with errors far above honest rounding"
        if not self.ops:
            return 3, "NOTHING TESTED: the adapter implements none of the selected ops"
        if untested:
            why = [max(self.tallies[op].skip_reasons.items(), key=lambda kv: kv[1])[0]
                   for op in untested if self.tallies.get(op) and self.tallies[op].skip_reasons]
            return 3, ("NOTHING TESTED for " + ", ".join(untested) + ": every case SKIPPED" +
                       (f" (e.g. {why[0]})" if why and why[0] else ""))
        return 0, "no failures"

    def summary_line(self):
        """summary()'s line, saying when a signal ended the campaign before its time."""
        line = self.summary()[1]
        return line + (f" (stopped by {self.stopped_by})" if self.stopped_by else "")

    @property
    def exit_status(self):
        return self.summary()[0]

    def table(self):
        lines = ["| op | cases | PASSED | FAILED | SUSPECT | MISTRUSTED | SKIPPED | INVALID | not finite | max r "
                 "| max ratio | cases/s |",
                 "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        order = op_names()
        for op in sorted(self.tallies, key=order.index):
            t = self.tallies[op]
            rate = t.cases / t.seconds if t.seconds > 0 else 0.0
            lines.append(f"| {op} | {t.cases} | {t.passed} | {t.failed} | {t.suspect} | {t.mistrusted} | {t.skipped} "
                         f"| {t.invalid} | {t.not_finite} | {t.max_r:.3g} | {t.max_ratio:.3g} | {rate:.1f} |")
        lines += [f"| {op} | not implemented by the adapter |" for op in self.unimplemented]
        return "\n".join(lines)


def shrink(adapter, problem, seconds=30.0, isolation=None, case_timeout=None):
    """Greedy: moves to the first shrink candidate that still FAILS until none does or time is up.
    `adapter`, `isolation` and `case_timeout` as for fuzz(): the candidates run in a worker process
    by default."""
    spec = adapter if isinstance(adapter, str) else None
    checker, _ = open_checker(load_adapter(spec) if spec else adapter, isolation, case_timeout, spec)
    try:
        return _shrink(checker.check, as_problem(problem), seconds)[0]
    finally:
        checker.close()


def _shrink(check, problem, seconds, judgement=None):
    """(the minimal problem, its judgement) from the failing `problem`, each candidate judged by
    `check`; a candidate that crashes or hangs its worker process counts as failing, as in ssd-fuzz."""
    start, current, progressed = _time.monotonic(), problem, True
    try:
        while progressed and _time.monotonic() - start < seconds:
            progressed = False
            for candidate in shrink_candidates(current):
                if _time.monotonic() - start >= seconds:
                    break
                j = check(candidate)
                if j.failed:
                    current, judgement, progressed = candidate, j, True
                    break
    except (CampaignStopped, KeyboardInterrupt) as stop:
        stop.shrunk = current, judgement  # the smallest failing case so far, for the report
        raise
    return current, judgement


def _parse_shard(shard):
    if isinstance(shard, str):
        try:
            i, n = (int(x) for x in shard.split("/"))
        except ValueError:
            raise ValueError(f"argument 'shard': '{shard}' is not i/n") from None
        shard = (i, n)
    i, n = shard
    if n < 1 or not 0 <= i < n:
        raise ValueError(f"argument 'shard': {i}/{n} is not i/n with 0 <= i < n")
    return i, n


def fuzz(adapter, ops=None, time=None, cases=None, seed=None, shard=(0, 1), dtypes=None, large=0.05,
         max_failures=1, problems=None, shrink_seconds=30.0, repro_prefix=None, out=None, progress=None,
         report=None, dump=None, isolation=None, case_timeout=None):
    """Runs a campaign of `adapter` (an adapter, or its "MODULE[:NAME]") and prints as ssd-fuzz
    does; returns a FuzzResult whose exit_status is ssd-fuzz's. Stops after `cases` cases of this
    shard, else after `time` seconds (default 60); `problems` replays given problem strings instead
    of generating cases (all of them, unless `time` or `cases` is given); `report` names a JSON
    report file in ssd-fuzz's schema; `dump` a folder for the failing cases' case files.
    `isolation` "process" runs the adapter in a worker process (CRASHED and TIMEOUT verdicts), "none"
    in this one; by default "process" when another process can import the adapter by name.
    `case_timeout`: seconds an adapter call may run there (default: ssd_suite.worker's limits)."""
    out = out or sys.stdout
    spec = adapter if isinstance(adapter, str) else None
    if spec is not None:
        adapter = load_adapter(spec)
    shard = _parse_shard(shard)
    if seed is None:
        seed = _time.time_ns() & ((1 << 63) - 1)
    if cases is not None:
        time = None  # as ssd-fuzz: --time is ignored with --cases
    elif time is None and not problems:
        time = 60.0  # given problems all run unless a time is given
    replay = [p if isinstance(p, Problem) else Problem(p) for p in (problems or [])]
    requested = list(dict.fromkeys(p.op for p in replay)) if replay else ops
    result = FuzzResult()
    result.ops, result.unimplemented = implemented_ops(adapter, requested)
    campaign_options(seed, shard, dtypes, large)  # checks the options before any case runs
    name = adapter_name(adapter)
    if spec is None and not is_library(adapter):
        spec = adapter_spec(adapter)[0]
    prefix = repro_prefix or f"python3 -m ssd_suite fuzz --adapter {spec or name}"
    checker, note = open_checker(adapter, isolation, case_timeout, spec)
    with checker:  # the worker process ends with the campaign, however the campaign ends
        what = f"{len(replay)} given problem(s)" if replay else f"{cases} cases" if cases else f"{time:g} s"
        print(f"ssd_suite.fuzz: adapter {name}, seed {seed}, shard {shard[0]}/{shard[1]}, {what}", file=out,
              flush=True)
        if note:
            print(f"ssd_suite.fuzz: {note}", file=out, flush=True)
        if progress is None:
            progress = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
        start = _time.monotonic()
        done = 0

        def out_of_time():
            return (cases is not None and done >= cases) or (time is not None and _time.monotonic() - start >= time)

        def run(problem, request):
            nonlocal done
            done += 1
            t0 = _time.monotonic()
            j = checker.judgement(request)
            seconds = _time.monotonic() - t0
            result.tallies.setdefault(problem.op, OpTally()).record(j, seconds)
            result.by_dtype.setdefault((problem.op, problem.dtype), OpTally()).record(j, seconds)
            if j.alarm:
                # A SUSPECT case is about its size (kept as drawn); the rest shrink through the checker,
                # so a candidate that crashes or hangs costs a worker, not the campaign. A signal during
                # the shrink keeps the failure, as small as it got, and then ends the campaign.
                stop = None
                try:
                    minimal, judgement = (problem, j) if j.suspect else _shrink(checker.check, problem, shrink_seconds, j)
                except (CampaignStopped, KeyboardInterrupt) as e:
                    stop, (minimal, judgement) = e, e.shrunk
                f = Failure(problem, minimal, judgement)
                # Only judged outputs can be stored: a case that crashed, hung or raised is not run again.
                if dump and judgement.outputs:
                    f.dump = checker.dump(minimal, dump)
                result.failures.append(f)
                if progress:
                    print("\r" + " " * 100 + "\r", end="", file=sys.stderr)
                print(f.judgement.description, file=out, flush=True)
                if f.dump:
                    print(f"  case file: {f.dump}", file=out, flush=True)
                if stop is not None:
                    raise stop
            result.seconds = _time.monotonic() - start
            if progress:
                n = sum(t.cases for t in result.tallies.values())
                failed = sum(t.failed for t in result.tallies.values())
                of = f" of {int(time)}" if time else ""
                print(f"\r{n} cases, {failed} failed, {result.seconds:.0f} s{of}", end="", file=sys.stderr, flush=True)
            return j

        # ssd-fuzz's order: case k goes to op (k / shards) % len(ops); an op stopped by its own
        # failures passes its turns, so the case indices of the others stay those of ssd-fuzz.
        limit = max(1, max_failures)
        failures_of = dict.fromkeys(result.ops, 0)

        def drawn():
            if replay:
                yield from replay[shard[0]::shard[1]]
                return
            for k in itertools.count(shard[0], shard[1]):
                op = result.ops[(k // shard[1]) % len(result.ops)]
                if failures_of[op] >= limit:
                    if all(v >= limit for v in failures_of.values()):
                        return
                    continue
                yield campaign_problem(op, k, seed, shard, dtypes, large)

        def wanted(problem):
            """Whether a case drawn before the last one was judged still runs: its op may have stopped since."""
            return bool(replay) or failures_of[problem.op] < limit

        # One case ahead, as ssd-fuzz: the worker runs it while this process judges the last one and
        # draws the next. One drawn and not wanted after all is dropped (a worker runs it anyway).
        cases_drawn = drawn() if replay or result.ops else iter(())

        def run_cases():
            ahead = None
            while not out_of_time():
                problem, request = ahead if ahead else (None, None)
                ahead = None
                if problem is None:
                    problem = next(cases_drawn, None)
                    if problem is None:
                        break
                    request = checker.submit(problem)
                elif not wanted(problem):
                    continue
                if cases is None or done + 1 < cases:
                    following = next(cases_drawn, None)
                    if following is not None:
                        ahead = following, checker.submit(following)
                before = len(result.failures)
                run(problem, request)
                if not replay:
                    failures_of[problem.op] += len(result.failures) - before

        try:
            with _stopped_by_sigterm():
                run_cases()
        except (CampaignStopped, KeyboardInterrupt) as stop:
            result.stopped_by = _signal_name(stop)  # the case under way is dropped, the rest reported
        result.seconds = _time.monotonic() - start
    if progress:
        print(file=sys.stderr)
    print("\n" + result.table(), file=out)
    for f in result.failures:
        print(f"repro: {prefix} --problem '{f.judgement.problem}'", file=out)
    if report:
        kernels = getattr(adapter, "kernels", name)  # a kernel library's spec, as ssd-fuzz records it
        write_report(report, json_report(result, kernels, name, seed, shard, prefix, op_names()))
    print(f"{result.summary_line()} after {result.seconds:.1f} s (seed {seed})", file=out, flush=True)
    return result
