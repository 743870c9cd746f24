"""fast_session.sh verify-start / verify-finish on a bundle of stand-in programs: the call that starts
the campaign returns while the campaign runs, also when its output goes through a pipe (as a device
call's `| tail` does), and verify-finish waits for the campaign and keeps its shards' results;
verify-once runs every step in one call and ends with the campaign, times SSD_VERIFY_BENCH_OPS first
and gives memcheck the problems of SSD_MEMCHECK_OPS alone."""
import os
import pathlib
import re
import shutil
import signal
import subprocess
import tarfile
import time

from standin import executable, options

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "fast_session.sh"
CAMPAIGN_SECONDS = 4

# ssd-fuzz: a campaign (--time T) sleeps T seconds and prints a result line, or its summary at once
# on SIGTERM, as the real one does; a problem file passes.
FUZZ = "#!/bin/sh\n" + options("time", time=0) + """echo "ssd-fuzz stand-in: $time s"
trap 'echo "no failures after 1 s (stand-in, stopped by SIGTERM)"; exit 0' TERM
[ "$time" != 0 ] && { sleep "$time" & wait $!; }
echo "| op | cases |"
echo "no failures after $time s (stand-in)"
"""
TESTS = """#!/bin/sh
echo "SSD_GPU_WGMMA=${SSD_GPU_WGMMA:-unset}"
echo "[  PASSED  ] 1 test."
"""
# compute-sanitizer: a clean run of whatever it is given.
SANITIZER = """#!/bin/sh
echo "========= ERROR SUMMARY: 0 errors"
"""


def bundle(tmp_path):
    here = tmp_path / "bundle"
    (here / "lib").mkdir(parents=True)
    shutil.copy(SCRIPT, here / "fast_session.sh")
    executable(here / "ssd-fuzz", FUZZ)
    executable(here / "ssd-kernel-worker", "#!/bin/sh\n")
    executable(here / "ssd_gpu_tests", TESTS)
    (here / "libssd-kernels-cuda.so").write_text("stand-in")
    (here / "fast_problems.txt").write_text("")
    (here / "manifest.txt").write_text("")
    return here


def phase_env(tmp_path, out, sanitizer=SANITIZER, **extra):
    tools = tmp_path / "tools"
    tools.mkdir(exist_ok=True)
    executable(tools / "compute-sanitizer", sanitizer)
    env = dict(os.environ, OUT=str(out), SSD_CAMPAIGN_DIR=str(tmp_path / "campaign"),
               SSD_FUZZ_SECONDS=str(CAMPAIGN_SECONDS), SSD_WORKLOAD_OPS="mamba2",
               PATH=f"{tools}:{os.environ.get('PATH', '')}")
    env.update(extra)
    return env


def phase_logs(archive_path):
    """File name -> text of every file in a phase's archive (fast_session.sh's $OUT/<phase>.tgz)."""
    with tarfile.open(archive_path) as archive:
        return {pathlib.PurePath(m.name).name: archive.extractfile(m).read().decode()
                for m in archive.getmembers() if m.isfile()}


def run_phase(here, tmp_path, phase, out, sanitizer=SANITIZER, **extra):
    env = phase_env(tmp_path, out, sanitizer, **extra)
    # Through a pipe, which only closes when every process holding the script's stdout has ended.
    started = time.monotonic()
    shell = subprocess.run(["bash", "-c", f"set -o pipefail; bash {here}/fast_session.sh {phase} 2>&1 | cat"], env=env,
                           capture_output=True, text=True, timeout=60)
    return shell, time.monotonic() - started


def test_verify_start_returns_while_the_campaign_runs(tmp_path):
    here = bundle(tmp_path)
    start, seconds = run_phase(here, tmp_path, "verify-start", tmp_path / "out1")
    assert start.returncode == 0, start.stdout
    assert "campaign started" in start.stdout and "keep: candidate" in start.stdout
    assert ", ends at " in start.stdout, start.stdout
    # The campaign sleeps CAMPAIGN_SECONDS; the call must not have waited for it.
    assert seconds < CAMPAIGN_SECONDS - 1, start.stdout
    assert (tmp_path / "out1" / "verify-start.tgz").is_file()

    finish, seconds = run_phase(here, tmp_path, "verify-finish", tmp_path / "out2")
    assert finish.returncode == 0, finish.stdout
    # Both shards ran to their end and their last lines were kept.
    assert finish.stdout.count(f"no failures after {CAMPAIGN_SECONDS} s (stand-in)") == 2, finish.stdout
    for shard in (0, 1):
        assert "no failures" in (tmp_path / "campaign" / f"shard{shard}.txt").read_text()


def test_verify_finish_stops_the_campaign_at_finish_by_with_its_summary(tmp_path):
    here = bundle(tmp_path)
    start, _ = run_phase(here, tmp_path, "verify-start", tmp_path / "out1", SSD_FUZZ_SECONDS="30")
    assert start.returncode == 0, start.stdout
    finish, seconds = run_phase(here, tmp_path, "verify-finish", tmp_path / "out2", SSD_FINISH_BY="1")
    assert finish.returncode == 0, finish.stdout
    # Stopped long before its 30 s, each shard's summary printed and returned in the archive.
    assert seconds < 15, finish.stdout
    assert "campaign stopped by SIGTERM" in finish.stdout, finish.stdout
    assert finish.stdout.count("stopped by SIGTERM)") == 2, finish.stdout
    shard = phase_logs(tmp_path / "out2" / "verify-finish.tgz")["verify_shard0.txt"]
    assert "stopped by SIGTERM" in shard, shard


def test_verify_finish_cut_at_its_limit_still_returns_the_shards_logs(tmp_path):
    here = bundle(tmp_path)
    start, _ = run_phase(here, tmp_path, "verify-start", tmp_path / "out1", SSD_FUZZ_SECONDS="30")
    assert start.returncode == 0, start.stdout
    # A device call's limit: the phase and its children killed while the campaign runs on.
    finish = subprocess.Popen(["bash", str(here / "fast_session.sh"), "verify-finish"], start_new_session=True,
                              env=phase_env(tmp_path, tmp_path / "out2"), stdout=subprocess.DEVNULL)
    time.sleep(6)
    os.killpg(finish.pid, signal.SIGKILL)
    finish.wait()
    subprocess.run(["pkill", "-f", str(tmp_path / "campaign")])  # the stand-in campaign's rest
    shard = phase_logs(tmp_path / "out2" / "verify-finish.tgz")["verify_shard0.txt"]
    assert "ssd-fuzz stand-in: 30 s" in shard, shard


def test_verify_start_rejects_campaign_seconds_that_are_not_a_number(tmp_path):
    here = bundle(tmp_path)
    start, _ = run_phase(here, tmp_path, "verify-start", tmp_path / "out1", SSD_FUZZ_SECONDS="10m")
    assert start.returncode == 2 and "SSD_FUZZ_SECONDS" in start.stdout, start.stdout
    assert not (tmp_path / "campaign").exists()


def test_verify_finish_rejects_a_finish_by_that_is_not_seconds(tmp_path):
    here = bundle(tmp_path)
    run_phase(here, tmp_path, "verify-start", tmp_path / "out1")
    finish, _ = run_phase(here, tmp_path, "verify-finish", tmp_path / "out2", SSD_FINISH_BY="5m")
    assert finish.returncode == 2 and "SSD_FINISH_BY" in finish.stdout, finish.stdout


def test_verify_once_runs_every_step_and_ends_with_the_campaign(tmp_path):
    here = bundle(tmp_path)
    once, seconds = run_phase(here, tmp_path, "verify-once", tmp_path / "out")
    assert once.returncode == 0, once.stdout
    # It waited for both shards of the campaign, and not much longer.
    assert once.stdout.count(f"no failures after {CAMPAIGN_SECONDS} s (stand-in)") == 2, once.stdout
    assert CAMPAIGN_SECONDS <= seconds < CAMPAIGN_SECONDS + 30, once.stdout
    for line in ("GPU tests exit 0", "GPU tests with SSD_GPU_WGMMA=0 exit 0", "fast_problems.txt exit 0",
                 "full-size workloads exit 0", "memcheck (fast_problems.txt) exit 0, 0 problems", "racecheck exit 0"):
        assert line in once.stdout, (line, once.stdout)
    logs = phase_logs(tmp_path / "out" / "verify-once.tgz")
    # The fallback tests ran with the wgmma kernels switched off, the others with them on.
    assert "SSD_GPU_WGMMA=0" in logs["once_fallback_tests.txt"]
    assert "SSD_GPU_WGMMA=unset" in logs["once_tests.txt"]
    assert "no failures" in logs["once_shard0.txt"] and "no failures" in logs["once_shard1.txt"]


# compute-sanitizer that lists the problems it was given (the argument after --problems).
LISTING_SANITIZER = """#!/bin/sh
while [ $# -gt 0 ]; do
  [ "$1" = --problems ] && sed 's/^/given: /' "$2"
  shift
done
echo "========= ERROR SUMMARY: 0 errors"
"""
BENCH = """#!/bin/sh
echo "| SSDStatePassingFwd | stand-in ops $* | 1.00 | 1.50x |"
"""


def test_verify_once_times_the_ops_named_and_narrows_memcheck(tmp_path):
    here = bundle(tmp_path)
    (here / "fast_problems.txt").write_text("# aimed problems\nstate_passing:f16 b1 s64 q16 h2 d8 seed=1\n"
                                            "chunk_scan:f16 b1 s64 h2 p8 g1 n8 q16 seed=2\n")
    executable(here / "ssd-bench", BENCH)
    once, _ = run_phase(here, tmp_path, "verify-once", tmp_path / "out", sanitizer=LISTING_SANITIZER,
                        SSD_VERIFY_BENCH_OPS="state_passing", SSD_MEMCHECK_OPS="state_passing|mamba2")
    assert once.returncode == 0, once.stdout
    assert "| SSDStatePassingFwd | stand-in ops --kernels" in once.stdout and "--ops state_passing" in once.stdout
    assert "memcheck (fast_problems.txt) exit 0, 1 problems" in once.stdout, once.stdout
    memcheck = phase_logs(tmp_path / "out" / "verify-once.tgz")["once_memcheck_problems.txt"]
    assert "given: state_passing:f16" in memcheck and "chunk_scan" not in memcheck, memcheck


def test_memcheck_counts_problems_not_comments(tmp_path):
    here = bundle(tmp_path)
    (here / "fast_problems.txt").write_text("# aimed problems\n\nstate_passing:f16 b1 s64 q16 h2 d8 seed=1\n"
                                            "  # an indented comment\nchunk_scan:f16 b1 s64 h2 p8 g1 n8 q16 seed=2\n")
    once, _ = run_phase(here, tmp_path, "verify-once", tmp_path / "out", sanitizer=LISTING_SANITIZER)
    assert once.returncode == 0, once.stdout
    assert "memcheck (fast_problems.txt) exit 0, 2 problems" in once.stdout, once.stdout


# ssd-bench writing --json: the library under before/ takes 2 us per workload, any other 1 us.
JSON_BENCH = "#!/bin/sh\n" + options("kernels", "json") + """us=1.0
case $kernels in */before/*) us=2.0 ;; esac
printf '{"rows": [{"op": "SSDStatePassingFwd", "workload": "state_passing:f16 b1 s64 q16 h2 d8", "us": %s}]}' \\
  "$us" > "$json"
echo "| SSDStatePassingFwd | stand-in $kernels | $us |"
"""


def test_verify_once_compares_with_the_library_before(tmp_path):
    here = bundle(tmp_path)
    for helper in ("ab_compare.py", "keep_candidate.py"):
        shutil.copy(SCRIPT.parent / helper, here / helper)
    (here / "before").mkdir()
    (here / "before" / "libssd-kernels-cuda.so").write_text("stand-in")
    executable(here / "ssd-bench", JSON_BENCH)
    once, _ = run_phase(here, tmp_path, "verify-once", tmp_path / "out", SSD_VERIFY_BENCH_OPS="state_passing",
                        SSD_VERIFY_ROUNDS="3")
    assert once.returncode == 0, once.stdout
    logs = phase_logs(tmp_path / "out" / "verify-once.tgz")
    names = set(logs)
    # Three alternating rounds of each library, compared by median: before / after = 2 / 1.
    for which in ("before", "after"):
        for round_ in (1, 2, 3):
            assert f"{which}.bench.{round_}.json" in names, names
    assert "2.000" in logs["once_ab.txt"], logs["once_ab.txt"]
    assert "candidate" in logs["once_keep.txt"], logs["once_keep.txt"]


# time_mamba_ssm.py: writes one workload's time to --out and names the package folder it was given.
TIME_MAMBA = """import json, sys
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
print("mamba folder", args["--mamba"])
json.dump({"mamba2:bf16 b1 s2048 h80 p64 g1 n128 q256 +softplus fill=bench seed=0": 97.5}, open(args["--out"], "w"))
"""


def table_bundle(tmp_path):
    here = bundle(tmp_path)
    executable(here / "ssd-bench", BENCH)
    (here / "time_mamba_ssm.py").write_text(TIME_MAMBA)
    (here / "workload_targets.json").write_text("{}")
    (tmp_path / "tools").mkdir()
    executable(tmp_path / "tools" / "nvidia-smi", "#!/bin/sh\necho 'Stand-in GPU, 1980 MHz'\n")
    return here


def test_table_times_mamba_ssm_then_ours_against_it(tmp_path):
    here = table_bundle(tmp_path)
    (tmp_path / "mamba" / "mamba_ssm").mkdir(parents=True)
    table, _ = run_phase(here, tmp_path, "table", tmp_path / "out", SSD_MAMBA_DIR=str(tmp_path / "mamba"))
    assert table.returncode == 0, table.stdout
    logs = phase_logs(tmp_path / "out" / "table.tgz")
    assert f"mamba folder {tmp_path / 'mamba'}" in logs["mamba_ssm.txt"]
    assert "97.5" in logs["mamba_ssm.json"] and "Stand-in GPU" in logs["gpu.txt"]
    # ssd-bench read this call's mamba_ssm times, with the targets, and wrote the table's JSON.
    bench = logs["table.txt"]
    assert re.search(r"--against (\S+)/mamba_ssm\.json --against-name mamba_ssm .*--json \1/table\.json", bench), bench
    assert f"--targets {here}/workload_targets.json" in bench, bench
    assert "--memory-rates 512" in bench, bench  # the device's copy and fill rates in the same table


def test_table_needs_the_mamba_ssm_package(tmp_path):
    here = table_bundle(tmp_path)
    table, _ = run_phase(here, tmp_path, "table", tmp_path / "out", SSD_MAMBA_DIR=str(tmp_path / "nowhere"))
    assert table.returncode == 2 and "SSD_MAMBA_DIR" in table.stdout, table.stdout


def test_table_stops_without_mamba_ssm_times(tmp_path):
    here = table_bundle(tmp_path)
    (here / "time_mamba_ssm.py").write_text("import sys\nprint('triton: no GPU')\nsys.exit(1)\n")
    (tmp_path / "mamba" / "mamba_ssm").mkdir(parents=True)
    table, _ = run_phase(here, tmp_path, "table", tmp_path / "out", SSD_MAMBA_DIR=str(tmp_path / "mamba"))
    # ssd-bench is not run against nothing: the phase fails and says why.
    assert table.returncode == 1 and "table: no mamba_ssm times" in table.stdout, table.stdout
    assert "stand-in ops" not in table.stdout, table.stdout
