"""The pytest plugin run as a user would: items named by problem strings, the planted bug failing
only chunk_cumsum items, the honest reference passing every item."""
import os
import subprocess
import sys


def pytest_run(tmp_path, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "ssd_suite.pytest_plugin", "-p", "no:cacheprovider",
                           "-q", "-rN", str(tmp_path), *args], env=env, capture_output=True, text=True, cwd=tmp_path)


def test_items_are_named_by_problem_strings(tmp_path):
    done = pytest_run(tmp_path, "--collect-only", "--ssd-adapter=ssd_suite.adapters.numpy_ref", "--ssd-cases=2",
                      "--ssd-seed=4")
    assert done.returncode == 0, done.stdout + done.stderr
    names = [line for line in done.stdout.splitlines() if line.startswith("::")]
    # golden problems of the four ops numpy_ref implements, then 2 generated cases per op
    assert any(n.startswith("::golden[chunk_cumsum:") for n in names)
    assert any(n.startswith("::golden[recurrent:") for n in names)
    assert len([n for n in names if n.startswith("::fuzz[")]) == 8
    assert not any("chunk_scan" in n for n in names)


def test_planted_bug_fails_its_items_and_only_those(tmp_path):
    honest = pytest_run(tmp_path, "--ssd-adapter=ssd_suite.adapters.numpy_ref", "--ssd-cases=5", "--ssd-golden=none")
    assert honest.returncode == 0, honest.stdout + honest.stderr
    buggy = pytest_run(tmp_path, "--ssd-adapter=planted_bug", "--ssd-cases=10", "--ssd-golden=none")
    assert buggy.returncode == 1, buggy.stdout + buggy.stderr
    failed = [line for line in buggy.stdout.splitlines() if line.startswith("FAILED ")]
    assert failed and all("chunk_cumsum:" in line for line in failed)
    assert "repro: chunk_cumsum:" in buggy.stdout
