"""`pip install --no-build-isolation` of the package works offline (setuptools only), and the
installed copy, outside the checkout, loads the C API named by SSD_CAPI_LIBRARY and runs a campaign in
its worker process."""
import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.skipif(importlib.util.find_spec("pip") is None or importlib.util.find_spec("setuptools") is None,
                    reason="needs pip and setuptools")
def test_pip_install_offline(tmp_path):
    source = tmp_path / "source"  # a copy: the build leaves build/ and *.egg-info behind
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__"))
    target = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
                           "--quiet", "--target", str(target), str(source)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (target / "ssd_suite" / "adapters" / "numpy_ref.py").exists()
    env = dict(os.environ, PYTHONPATH=str(target))
    check = subprocess.run([sys.executable, "-c", "import ssd_suite; print(ssd_suite.__file__); "
                            "print(ssd_suite.Problem('chunk_cumsum:f32 b1 s4 h1 q2 seed=1'))"],
                           env=env, capture_output=True, text=True, cwd=tmp_path)
    assert check.returncode == 0, check.stderr
    assert check.stdout.splitlines() == [str(target / "ssd_suite" / "__init__.py"), "chunk_cumsum:f32 b1 s4 h1 q2 seed=1"]
    # The installed copy runs a campaign in its worker process, which finds that same copy.
    fuzz = subprocess.run([sys.executable, "-m", "ssd_suite", "fuzz", "--adapter", "ssd_suite.adapters.numpy_ref",
                           "--cases", "4", "--seed", "1", "--dump", ""], env=env, capture_output=True, text=True,
                          cwd=tmp_path)
    assert fuzz.returncode == 0 and "no failures after" in fuzz.stdout, fuzz.stdout + fuzz.stderr
