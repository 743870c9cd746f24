"""Campaigns in a worker process: an adapter that segfaults, exits, hangs or loses its device costs
its case a CRASHED, TIMEOUT or FAILED verdict and the worker a restart, never the campaign; the
next honest case passes; shrinking goes through the worker; an honest adapter gets the same
verdicts with and without isolation; and the default isolation is chosen as documented."""
import io
import json
import os
import pickle
import subprocess
import sys
import time

import pytest

import planted_device_lost
import planted_faults
import ssd_suite
from ssd_suite.adapters import _torch, numpy_ref
from ssd_suite.adapters.kernel_library import KernelLibrary
from ssd_suite.isolation import adapter_spec, open_checker
from ssd_suite.problem import Problem
from ssd_suite.worker import Worker, WorkerError, declared_call_seconds, default_case_timeout

MULTI_CHUNK = "chunk_cumsum:f32 b1 s30 h2 q7 seed=1"  # s > q: where the planted adapters fault
ONE_CHUNK = "chunk_cumsum:f32 b1 s5 h2 q7 seed=1"
RECURRENT = "recurrent:f32 b1 h2 p2 g1 n2 seed=1"


def run(adapter, **kw):
    out = io.StringIO()
    kw.setdefault("shrink_seconds", 0)
    result = ssd_suite.fuzz(adapter, out=out, progress=False, **kw)
    return result, out.getvalue()


def tally(result, op="chunk_cumsum"):
    return result.tallies[op]


@pytest.mark.parametrize("name,message", [
    ("segfault", "the adapter call killed its process with signal 11 (SIGSEGV"),
    ("exits", "the process exited with status 3 during the adapter call"),
])
def test_a_crashing_adapter_costs_its_case_and_the_campaign_goes_on(tmp_path, name, message):
    report = tmp_path / "report.json"
    result, text = run(f"planted_faults:{name}", problems=[MULTI_CHUNK, ONE_CHUNK, RECURRENT], report=str(report),
                       dump=str(tmp_path / "dump"))
    t = tally(result)
    assert (t.cases, t.crashed, t.failed, t.passed) == (2, 1, 1, 1), text
    assert tally(result, "recurrent").passed == 1
    j = result.failures[0].judgement
    assert j.verdict == "CRASHED" and message in j.message
    assert f"CRASHED    {MULTI_CHUNK}\n  {message}" in text
    assert f"repro: python3 -m ssd_suite fuzz --adapter planted_faults:{name} --problem '{MULTI_CHUNK}'" in text
    assert result.exit_status == 1 and "FAILURES FOUND: 1 failing case(s)" in text
    assert result.failures[0].dump == ""  # no outputs to store
    row = json.loads(report.read_text())["by_op_and_dtype"][0]
    assert (row["CRASHED"], row["FAILED"], row["PASSED"]) == (1, 1, 1)


def test_a_hanging_adapter_is_timeout_and_its_worker_is_killed():
    start = time.monotonic()
    result, text = run("planted_faults:hangs", problems=[MULTI_CHUNK, ONE_CHUNK], case_timeout=1)
    assert time.monotonic() - start < 10  # one time limit and a restart, not the 1000 s sleep
    t = tally(result)
    assert (t.timeout, t.failed, t.passed) == (1, 1, 1), text
    assert "the adapter call was still running after 1 s (--case-timeout); its process was killed" in text
    assert result.exit_status == 1 and f"TIMEOUT    {MULTI_CHUNK}" in text


def test_a_lost_device_fails_its_case_and_the_next_case_gets_a_fresh_worker():
    problems = [MULTI_CHUNK, ONE_CHUNK, RECURRENT]
    result, text = run(planted_device_lost, problems=problems)
    j = result.failures[0].judgement
    assert j.verdict == "FAILED" and planted_device_lost.ERROR in j.message and "the device is lost" in j.message
    assert tally(result).passed == 1 and tally(result, "recurrent").passed == 1, text
    # In process the error is sticky: every later case fails with it, as vLLM's did on an H200.
    result, text = run(planted_device_lost, problems=problems, isolation="none")
    assert tally(result).failed == 2 and tally(result, "recurrent").failed == 1, text
    assert all(planted_device_lost.ERROR in f.judgement.message for f in result.failures)


def test_a_worker_is_started_again_only_after_a_death():
    with Worker(planted_faults.segfault, "planted_faults:segfault") as worker:
        assert worker.check(Problem(ONE_CHUNK)).passed and worker.check(Problem(RECURRENT)).passed
        assert worker.starts == 1
        assert worker.check(Problem(MULTI_CHUNK)).verdict == "CRASHED"
        assert worker.check(Problem(ONE_CHUNK)).passed
        assert worker.starts == 2
    with Worker(planted_device_lost, "planted_device_lost") as worker:
        assert worker.check(Problem(MULTI_CHUNK)).failed
        assert worker.check(Problem(RECURRENT)).passed and worker.starts == 2


def test_cases_queued_behind_a_death_go_to_the_next_worker():
    with Worker(planted_faults.segfault, "planted_faults:segfault") as worker:
        requests = [worker.submit(Problem(p)) for p in (ONE_CHUNK, MULTI_CHUNK, ONE_CHUNK, RECURRENT)]
        assert [worker.judgement(r).verdict for r in requests] == ["PASSED", "CRASHED", "PASSED", "PASSED"]
        assert worker.starts == 2
    with Worker(planted_device_lost, "planted_device_lost") as worker:
        lost, after = worker.submit(Problem(MULTI_CHUNK)), worker.submit(Problem(RECURRENT))
        assert worker.judgement(after).passed and worker.judgement(lost).failed and worker.starts == 2


def test_a_campaign_one_case_ahead_runs_the_cases_it_would_run_in_process():
    # planted_bug's chunk_cumsum stops at its first failure; the case drawn ahead of that failure
    # is dropped when its op has stopped, so both modes count the same cases.
    import planted_bug

    for ops, cases in ((["chunk_cumsum"], 50), (["chunk_cumsum", "recurrent"], 40)):
        process, none = (run(planted_bug, ops=ops, cases=cases, seed=3, isolation=i)[0] for i in ("process", "none"))
        counts = [{op: (t.cases, t.failed) for op, t in r.tallies.items()} for r in (process, none)]
        assert counts[0] == counts[1] and counts[0]["chunk_cumsum"][1] == 1
        if len(ops) == 1:
            assert counts[0]["chunk_cumsum"][0] < cases  # the campaign ended at the failure


def test_shrinking_runs_through_the_worker():
    # Every multi-chunk candidate kills a worker: the campaign shrinks to two chunks of one token.
    result, text = run("planted_faults:segfault", ops=["chunk_cumsum", "recurrent"], cases=30, seed=3,
                       shrink_seconds=30)
    f = result.failures[0]
    assert f.judgement.verdict == "CRASHED" and f.minimal.sizes["s"] > f.minimal.chunk_size
    assert f.minimal.sizes["b"] == 1 and f.minimal.sizes["h"] == 1
    assert tally(result, "recurrent").failed == 0 and tally(result, "recurrent").cases > 1, text
    for adapter in (planted_faults.segfault, "planted_faults:segfault"):  # shrink() by itself, too
        shrunk = ssd_suite.shrink(adapter, "chunk_cumsum:f32 b1 s6 h2 q3 seed=1", seconds=30)
        assert shrunk.sizes["s"] > shrunk.chunk_size and shrunk.sizes["h"] == 1


def test_an_honest_adapter_has_the_same_verdicts_with_and_without_isolation(tmp_path):
    reports = {}
    for isolation in ("process", "none"):
        reports[isolation] = tmp_path / f"{isolation}.json"
        result, text = run(numpy_ref, cases=120, seed=5, isolation=isolation, report=str(reports[isolation]))
        assert result.exit_status == 0, text
    rows = {k: [{f: v for f, v in row.items() if f != "seconds"}
                for row in json.loads(p.read_text())["by_op_and_dtype"]] for k, p in reports.items()}
    assert rows["process"] == rows["none"]
    problems = [ssd_suite.campaign_problem(op, k, seed=5) for op in ("chunk_cumsum", "state_passing", "recurrent")
                for k in range(10)]
    with Worker(numpy_ref, "ssd_suite.adapters.numpy_ref") as worker:
        for p in problems:
            a, b = worker.check(p), ssd_suite.check_case(numpy_ref, p)
            assert (a.verdict, a.max_r, a.max_ratio, a.description) == (b.verdict, b.max_r, b.max_ratio, b.description)


def test_errors_of_the_suite_itself_are_raised_as_in_process():
    invalid = Problem("chunk_cumsum:f32 b1 s0 h2 q7 seed=1")
    with Worker(numpy_ref, "ssd_suite.adapters.numpy_ref") as worker:
        with pytest.raises(ssd_suite.SsdArgumentError, match="size s must be positive"):
            worker.check(invalid)
        assert worker.check(Problem(ONE_CHUNK)).passed and worker.starts == 1


def test_what_the_adapter_prints_does_not_reach_the_worker_pipe(capfd):
    result, _ = run("planted_faults:chatty", problems=[MULTI_CHUNK, ONE_CHUNK])
    assert result.exit_status == 0 and tally(result).passed == 2
    assert "planted_faults.chatty: a line on stdout" in capfd.readouterr().out


def test_the_default_isolation():
    assert adapter_spec(numpy_ref) == ("ssd_suite.adapters.numpy_ref", None)
    assert adapter_spec(planted_faults.hangs) == ("planted_faults:hangs", None)
    spec, why = adapter_spec({"chunk_cumsum": numpy_ref.chunk_cumsum})
    assert spec is None and "dict" in why
    stray = planted_faults.Planted("stray", lambda: None)  # not a module-level name
    assert adapter_spec(stray)[0] is None
    checker, note = open_checker(numpy_ref)
    with checker:
        assert isinstance(checker, Worker) and note is None
    checker, note = open_checker(KernelLibrary("emulation"))  # its calls run in the C API's worker already
    assert not isinstance(checker, Worker) and note is None
    result, text = run({"chunk_cumsum": numpy_ref.chunk_cumsum}, problems=[ONE_CHUNK])
    assert result.exit_status == 0
    assert "ssd_suite.fuzz: isolation none: a dict of functions has no name another process can import" in text
    _, text = run(numpy_ref, problems=[ONE_CHUNK])
    assert "isolation none" not in text


def test_a_worker_that_cannot_load_the_adapter_says_so():
    with pytest.raises(WorkerError, match="a worker process cannot load adapter 'no_such_module'"):
        Worker(numpy_ref, "no_such_module").start()


def test_isolation_arguments_are_checked():
    with pytest.raises(ValueError, match="argument 'isolation': 'thread'"):
        open_checker(numpy_ref, isolation="thread")
    with pytest.raises(ValueError, match="argument 'isolation': 'process' needs an adapter"):
        open_checker({"chunk_cumsum": numpy_ref.chunk_cumsum}, isolation="process")
    for bad in (0, -1, float("nan"), 1e8, "soon"):
        with pytest.raises(ValueError, match="argument 'case_timeout'"):
            open_checker(numpy_ref, case_timeout=bad)


def test_default_time_limits():
    assert default_case_timeout(0, first_call=False) == 60.0
    assert default_case_timeout(2_000_000, first_call=False) == 62.0
    assert default_case_timeout(2_000_000, first_call=True) == 302.0
    # An adapter's call_seconds replaces the 60 s; a first call still gets at least 300 s.
    assert default_case_timeout(2_000_000, first_call=False, call_seconds=300) == 302.0
    assert default_case_timeout(0, first_call=True, call_seconds=30) == 300.0
    assert default_case_timeout(0, first_call=True, call_seconds=500) == 500.0


def test_declared_call_seconds_are_checked():
    assert declared_call_seconds(numpy_ref) is None
    assert declared_call_seconds(planted_faults.hangs_declared) == 1.0
    for bad in (0, -2, float("nan"), 1e8, "300", True):
        adapter = planted_faults.Planted("bad", lambda: None)
        adapter.call_seconds = bad
        with pytest.raises(ValueError, match="adapter attribute 'call_seconds'"):
            Worker(adapter, "planted_faults:bad")


def test_an_adapters_declared_limit_times_its_calls_after_the_first():
    # ONE_CHUNK passes first (the first call of chunk_cumsum f32, with its 300 s); MULTI_CHUNK then
    # hangs and is TIMEOUT after the declared 1 s, not the default 60 s.
    t0 = time.monotonic()
    result, text = run("planted_faults:hangs_declared", problems=[ONE_CHUNK, MULTI_CHUNK])
    assert time.monotonic() - t0 < 30, text
    t = tally(result)
    assert (t.cases, t.passed, t.timeout) == (2, 1, 1), text
    assert "the adapter call was still running after 1 s (--case-timeout)" in result.failures[0].judgement.message


def test_judgements_pickle():
    judged = ssd_suite.check_case(numpy_ref, Problem(MULTI_CHUNK))
    crashed = ssd_suite.Judgement("CRASHED", MULTI_CHUNK, message="the adapter call killed its process")
    for j in (judged, crashed):
        back = pickle.loads(pickle.dumps(j))
        assert (back.verdict, back.description, back.outputs) == (j.verdict, j.description, j.outputs)
    assert repr(pickle.loads(pickle.dumps(judged)).worst) == repr(judged.worst)


def test_device_healthy_without_a_device():
    pytest.importorskip("numpy")
    try:
        import torch  # noqa: F401
    except ImportError:
        assert _torch.device_healthy() is True  # nothing ran on a device, so nothing was lost
        return
    if not torch.cuda.is_available():
        assert _torch.device_healthy() is True


def test_the_command_line_options(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    cmd = [sys.executable, "-m", "ssd_suite", "fuzz", "--dump", "", "--problem", MULTI_CHUNK, "--problem", ONE_CHUNK,
           "--shrink-seconds", "0"]
    done = subprocess.run(cmd + ["--adapter", "planted_faults:segfault"], env=env, capture_output=True, text=True)
    assert done.returncode == 1 and "CRASHED" in done.stdout and "signal 11" in done.stdout, done.stdout + done.stderr
    done = subprocess.run(cmd + ["--adapter", "planted_faults:hangs", "--case-timeout", "1"], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 1 and "TIMEOUT" in done.stdout and "after 1 s" in done.stdout, done.stdout
    honest_case_only = cmd[:4] + ["--problem", ONE_CHUNK]
    done = subprocess.run(honest_case_only + ["--adapter", "planted_faults:segfault", "--isolation", "none"], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0 and "no failures" in done.stdout, done.stdout + done.stderr
    for option, value in (("--case-timeout", "0"), ("--case-timeout", "x"), ("--isolation", "thread")):
        done = subprocess.run(cmd + ["--adapter", "planted_faults:segfault", option, value], env=env,
                              capture_output=True, text=True)
        assert done.returncode == 2 and option in done.stderr, done.stderr


def test_sigterm_ends_a_campaign_with_its_report(tmp_path):
    # The honest case is judged, the next one hangs (limit 100 s); SIGTERM, as `timeout` sends it,
    # must end the campaign at once with the summary and a report of what was judged.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    report = tmp_path / "report.json"
    cmd = [sys.executable, "-m", "ssd_suite", "fuzz", "--adapter", "planted_faults:hangs", "--problem", ONE_CHUNK,
           "--problem", MULTI_CHUNK, "--case-timeout", "100", "--shrink-seconds", "0", "--report", str(report)]
    process = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(5)  # the worker starts and judges the honest case in well under a second here
    assert process.poll() is None, process.communicate()[0]  # hanging in the second case
    process.send_signal(15)
    out, _ = process.communicate(timeout=20)
    assert process.returncode == 0, out  # what was judged passed; the case under way is dropped
    assert "no failures (stopped by SIGTERM)" in out, out
    data = json.loads(report.read_text())
    assert data["stopped_by"] == "SIGTERM" and data["summary"] == "no failures (stopped by SIGTERM)"
    row = data["by_op_and_dtype"][0]
    assert (row["cases"], row["PASSED"], row["TIMEOUT"]) == (1, 1, 0), data
