"""pick_session.sh on a bundle of stand-in programs: the faster candidate's library is installed and
its verification started; a candidate that fails the problem file is not kept; bad input stops the
call before anything runs."""
import os
import pathlib
import shutil
import subprocess

from standin import executable, options

BENCH_DIR = pathlib.Path(__file__).resolve().parents[1]

# ssd-bench: every library is a text file naming itself; sub_10 (and sub_11) run 9 us a workload,
# sub_01 11 us, the landed library and base 10 us.
BENCH = "#!/bin/sh\n" + options("kernels", "json") + """case $(cat "$kernels") in
  "lib sub_10"|"lib sub_11") us=9 ;;
  "lib sub_01") us=11 ;;
  *) us=10 ;;
esac
[ -n "$json" ] && printf '{"rows": [{"op": "Op", "workload": "w1", "us": %s}, {"op": "Op", "workload": "w2", "us": %s}]}\\n' "$us" "$us" >"$json"
echo "| Op | w1 | $us |"
"""
# ssd-fuzz: a campaign (--time T) sleeps T seconds; a problem file fails for the library whose name
# contains $FAIL_PROBLEMS.
FUZZ = "#!/bin/sh\n" + options("time", "kernels", "problems", time=0) + """[ "$time" != 0 ] && sleep "$time"
if [ -n "$problems" ] && [ -n "${FAIL_PROBLEMS:-}" ] && grep -q "$FAIL_PROBLEMS" "$kernels"; then
  echo "1 FAILED (stand-in)"
  exit 1
fi
echo "no failures after $time s (stand-in)"
"""


def bundle(tmp_path, variants=("base", "sub_10", "sub_01", "sub_11")):
    here = tmp_path / "bundle"
    for folder in ("lib", "before", "variants"):
        (here / folder).mkdir(parents=True)
    for script in ("pick_session.sh", "ab_session.sh", "fast_session.sh", "pick_subset.py", "ab_compare.py",
                   "keep_candidate.py"):
        shutil.copy(BENCH_DIR / script, here / script)
    executable(here / "ssd-bench", BENCH)
    executable(here / "ssd-fuzz", FUZZ)
    executable(here / "ssd-kernel-worker", "#!/bin/sh\n")
    executable(here / "ssd_gpu_tests", "#!/bin/sh\necho '[  PASSED  ] 1 test.'\n")
    (here / "libssd-kernels-cuda.so").write_text("lib landed")
    (here / "before" / "libssd-kernels-cuda.so").write_text("lib landed")
    for name in variants:
        (here / "variants" / f"{name}.so").write_text(f"lib {name}")
    (here / "fast_problems.txt").write_text("")
    (here / "manifest.txt").write_text("")
    (here / "split.txt").write_text("chunk_scan:f16 b1 s64 h2 p8 g1 n8 q16 seed=1\n")
    return here


def run(here, tmp_path, **extra):
    tools = tmp_path / "tools"
    tools.mkdir(exist_ok=True)
    executable(tools / "nvidia-smi", "#!/bin/sh\necho 'Stand-in GPU, 1980 MHz'\n")
    env = dict(os.environ, OUT=str(tmp_path / "out"), SSD_CAMPAIGN_DIR=str(tmp_path / "campaign"),
               SSD_FUZZ_SECONDS="1", AB_FUZZ_SECONDS="0", PATH=f"{tools}:{os.environ.get('PATH', '')}",
               PICK_PLAN="t * op : base sub_10 sub_01", PICK_CANDIDATES="sub_10 sub_01",
               PICK_FUZZ="sub_10:op sub_01:op")
    env.update(extra)
    # Through a pipe, as a device call runs it; pipefail keeps the script's exit status.
    command = f"set -o pipefail; bash {here}/pick_session.sh 2>&1 | cat"
    return subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True, timeout=60)


def test_keeps_the_faster_candidate_and_starts_its_verification(tmp_path):
    here = bundle(tmp_path)
    result = run(here, tmp_path)
    assert result.returncode == 0, result.stdout
    # sub_10: base / sub_10 = 10 / 9 on both workloads, kept; sub_01: 10 / 11, not kept -> sub_10.
    assert "kept: sub_10" in result.stdout, result.stdout
    assert (here / "libssd-kernels-cuda.so").read_text() == "lib sub_10"
    # verify-start timed it against before/ (9 against 10 us: kept) and started the campaign.
    assert "campaign started" in result.stdout and "keep: candidate" in result.stdout, result.stdout
    assert (tmp_path / "out" / "verify-start.tgz").is_file()
    assert (tmp_path / "out" / "pick.txt").read_text().splitlines()[-1] == "kept: sub_10"


def test_a_candidate_failing_the_problem_file_is_not_kept(tmp_path):
    here = bundle(tmp_path)
    result = run(here, tmp_path, PICK_PROBLEMS=str(here / "split.txt"), FAIL_PROBLEMS="sub_10")
    assert result.returncode == 0, result.stdout
    assert "split.txt, sub_10: exit 1" in result.stdout and "split.txt, sub_01: exit 0" in result.stdout
    assert "kept: base" in result.stdout, result.stdout
    assert (here / "libssd-kernels-cuda.so").read_text() == "lib landed"


def test_pick_verify_0_installs_the_kept_library_and_starts_no_campaign(tmp_path):
    here = bundle(tmp_path)
    result = run(here, tmp_path, PICK_VERIFY="0")
    assert result.returncode == 0, result.stdout
    assert "kept: sub_10" in result.stdout and (here / "libssd-kernels-cuda.so").read_text() == "lib sub_10"
    assert "campaign started" not in result.stdout and "verify-start not run" in result.stdout, result.stdout
    assert not (tmp_path / "campaign").exists() and not (tmp_path / "out" / "verify-start.tgz").exists()


def test_bad_input_stops_before_anything_runs(tmp_path):
    here = bundle(tmp_path, variants=("base", "sub_10"))
    result = run(here, tmp_path)
    assert result.returncode == 2
    assert "no variant" in result.stdout and "sub_01.so" in result.stdout
    assert not (tmp_path / "out" / "ab.log").exists()
    (here / "before" / "libssd-kernels-cuda.so").unlink()
    result = run(here, tmp_path, PICK_CANDIDATES="sub_10")
    assert result.returncode == 2 and "the landed library" in result.stdout
    result = run(bundle(tmp_path / "again"), tmp_path / "again", PICK_PLAN="")
    assert result.returncode == 2 and "PICK_PLAN" in result.stdout
    result = run(bundle(tmp_path / "third"), tmp_path / "third", PICK_VERIFY="no")
    assert result.returncode == 2 and "PICK_VERIFY" in result.stdout


# time_mamba_ssm.py: one workload's time, written to --out.
TIME_MAMBA = """import json, sys
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
json.dump({"w1": 9.5}, open(args["--out"], "w"))
"""


def test_pick_table_1_tables_the_kept_library_before_its_campaign(tmp_path):
    here = bundle(tmp_path)
    (here / "time_mamba_ssm.py").write_text(TIME_MAMBA)
    (here / "workload_targets.json").write_text("{}")
    (tmp_path / "mamba" / "mamba_ssm").mkdir(parents=True)
    result = run(here, tmp_path, PICK_TABLE="1", SSD_MAMBA_DIR=str(tmp_path / "mamba"))
    assert result.returncode == 0, result.stdout
    # The table ran on the kept library (sub_10: 9 us a workload), and before the campaign started.
    table = subprocess.run(["tar", "xzOf", str(tmp_path / "out" / "table.tgz"), "./table.txt"],
                           capture_output=True, text=True, check=True).stdout
    assert "| Op | w1 | 9 |" in table, table
    assert "table exit 0" in result.stdout, result.stdout
    assert result.stdout.index("table exit 0") < result.stdout.index("campaign started"), result.stdout


def test_pick_table_1_needs_the_mamba_ssm_package(tmp_path):
    here = bundle(tmp_path)
    result = run(here, tmp_path, PICK_TABLE="1", SSD_MAMBA_DIR=str(tmp_path / "nowhere"))
    assert result.returncode == 2 and "SSD_MAMBA_DIR" in result.stdout, result.stdout
    assert not (tmp_path / "out" / "ab.log").exists()
    result = run(bundle(tmp_path / "again"), tmp_path / "again", PICK_TABLE="yes")
    assert result.returncode == 2 and "PICK_TABLE" in result.stdout, result.stdout
