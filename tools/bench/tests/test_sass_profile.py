"""sass_profile.py on a hand-made source page: four instructions in two runs of one count each."""
import pathlib
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "sass_profile.py"

# Two straight-line runs: IMAD, IMAD executed 100 times each (200 instructions), then HMMA and a
# predicated branch 400 times each (800): 1,000 in all. Samples 5 + 3 + 10 + 2 = 20.
PAGE = '''"Kernel Name","void k(int)",
"Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","Instructions Executed"
"0x10","      IMAD R1, R2, R3, RZ","5","4","100"
"0x20","      IMAD.WIDE.U32 R4, R1, 0x4, R6","3","2","100"
"0x30","      HMMA.16816.F32.BF16 R8, R12, R16, R8","10","9","400"
"0x40","@P0   BRA 0x30","2","1","400"
'''


def run(tmp_path, text, *args):
    page = tmp_path / "page.csv"
    page.write_text(text)
    return subprocess.run([sys.executable, str(SCRIPT), str(page), *args], capture_output=True, text=True)


def test_shares_by_opcode_and_run(tmp_path):
    done = run(tmp_path, PAGE)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    # 1,000 instructions; IMAD is integer arithmetic: 200 / 1,000 = 20%.
    assert out.startswith("1,000 warp instructions executed, 20 stall samples, 4 instructions")
    assert "integer and address arithmetic 20.0%" in out
    # HMMA 400 / 1,000 = 40% of instructions, 10 / 20 = 50% of samples; BRA (predicate dropped) 40%, 10%.
    assert "| HMMA | 40.0 | 50.0 |" in out
    assert "| BRA | 40.0 | 10.0 |" in out
    assert "| IMAD | 20.0 | 40.0 |" in out
    # The hotter run first: 0x30-0x40, 400 executions of 2 instructions = 80%, samples 12 / 20 = 60%.
    runs = [line for line in out.splitlines() if line.startswith("| 0x")]
    assert runs[0] == "| 0x30-0x40 | 400 | 2 | 80.0 | 60.0 | HMMA 1, BRA 1 |"
    assert runs[1] == "| 0x10-0x20 | 100 | 2 | 20.0 | 40.0 | IMAD 2 |"


def test_bad_input_names_the_argument(tmp_path):
    done = run(tmp_path, "a,b\n1,2\n")
    assert done.returncode == 2
    assert "argument 'PROFILE.csv'" in done.stderr and "no 'Address,Source,...' header" in done.stderr
    missing = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "none.csv")], capture_output=True, text=True)
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    no_counts = run(tmp_path, '"Address","Source","Other"\n"0x10","IMAD R1","1"\n')
    assert no_counts.returncode == 2 and "Instructions Executed" in no_counts.stderr
    bad_runs = run(tmp_path, PAGE, "--runs", "0")
    assert bad_runs.returncode == 2 and "--runs" in bad_runs.stderr
