"""tools/wgmma_guard.sh around stand-in compilers that print what nvcc with ptxas -v prints: a
serialized wgmma (C7512) fails the compile, ptxas' resource lines are dropped unless asked for, and
the compiler's own output and exit status pass through."""
import os
import pathlib
import subprocess

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "wgmma_guard.sh"

# What ptxas -v prints for one kernel (the lines the guard drops), as nvcc 13.0 printed it here.
REPORT = (
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function '_Z6kernelv' for 'sm_90a'\n"
    "ptxas info    : Function properties for _Z6kernelv\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 128 registers, used 3 barriers\n"
)
SERIALIZED = ("ptxas info    : (C7512) Potential Performance Loss: wgmma.mma_async instructions are serialized "
              "due to insufficient register resources for the function '_Z6kernelv'\n")


def compiler(tmp_path, stderr_text, status=0):
    script = tmp_path / "nvcc"
    (tmp_path / "stderr.txt").write_text(stderr_text)
    script.write_text(f"#!/bin/sh\ncat {tmp_path / 'stderr.txt'} >&2\necho compiled \"$@\"\nexit {status}\n")
    script.chmod(0o755)
    return script


def run(*args, report=None):
    env = dict(os.environ)
    env.pop("SSD_PTXAS_REPORT", None)
    if report is not None:
        env["SSD_PTXAS_REPORT"] = report
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=env)


def test_a_clean_report_passes_quietly(tmp_path):
    result = run(compiler(tmp_path, REPORT), "-c", "a.cu")
    assert result.returncode == 0
    assert result.stdout == "compiled -c a.cu\n"
    assert result.stderr == ""


def test_a_serialized_wgmma_fails_and_is_named(tmp_path):
    result = run(compiler(tmp_path, REPORT + SERIALIZED), "-c", "a.cu")
    assert result.returncode == 1
    assert "C7512" in result.stderr and "_Z6kernelv" in result.stderr
    assert "serialized wgmma" in result.stderr


def test_the_report_is_shown_when_asked_for(tmp_path):
    result = run(compiler(tmp_path, REPORT), "-c", "a.cu", report="1")
    assert result.returncode == 0
    assert "Used 128 registers" in result.stderr and "spill stores" in result.stderr


def test_other_output_and_the_status_pass_through(tmp_path):
    error = "a.cu(3): error: identifier \"x\" is undefined\n"
    result = run(compiler(tmp_path, REPORT + error, status=2), "-c", "a.cu")
    assert result.returncode == 2
    assert result.stderr == error


def test_no_compiler_is_a_usage_error(tmp_path):
    result = run()
    assert result.returncode == 2
    assert "usage" in result.stderr
