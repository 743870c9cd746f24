"""ab_compare.py on hand-made ab_session.sh folders: medians over rounds, ratios, geometric means."""
import json
import pathlib
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "ab_compare.py"


def bench(folder, name, rows):
    (folder / name).write_text(json.dumps({"rows": [{"op": op, "workload": w, "us": us} for op, w, us in rows]}))


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def test_medians_ratios_and_means(tmp_path):
    # base, w1: rounds 10, 12, 20 -> median 12; new, w1: 6, 6 -> median 6, base / new = 2.
    # base, w2: 9 and 9; new, w2: 12, 6 -> median 9: ratio 1. Op A over w1, w2: sqrt(2 * 1) = 1.414;
    # mean times 10.5 and 7.5.
    # Op B (w3): base 5, new absent -> no ratio, no mean. A file of another variant whose name
    # starts like base's ("base2") is not read as base's.
    for r, (w1, w2) in enumerate([(10, 9), (12, 9), (20, 9)], start=1):
        bench(tmp_path, f"base.t.{r}.json", [("A", "w1", w1), ("A", "w2", w2), ("B", "w3", 5.0)])
    bench(tmp_path, "new.t.1.json", [("A", "w1", 6.0), ("A", "w2", 12.0)])
    bench(tmp_path, "new.t.2.json", [("A", "w1", 6.0), ("A", "w2", 6.0)])
    bench(tmp_path, "base2.t.1.json", [("A", "w1", 1000.0)])
    result = run(str(tmp_path), "base", "new")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "| A | `w1` | 12.00 | 6.00 | 2.000 |" in lines
    assert "| A | `w2` | 9.00 | 9.00 | 1.000 |" in lines
    assert "| B | `w3` | 5.00 | - | - |" in lines
    assert "A: base / new 1.414 (2), mean us 10.50 / 7.50" in lines  # (12 + 9) / 2, (6 + 9) / 2
    assert not any(line.startswith("B:") for line in lines)


def test_bad_input_names_the_argument(tmp_path):
    missing = run(str(tmp_path / "none"), "base", "new")
    assert missing.returncode == 2 and "argument 'DIR'" in missing.stderr
    bench(tmp_path, "base.t.1.json", [("A", "w1", 1.0)])
    absent = run(str(tmp_path), "base", "new")
    assert absent.returncode == 2 and "argument 'NAME': no new.TAG.ROUND.json" in absent.stderr
    (tmp_path / "new.t.1.json").write_text("{}")
    bad = run(str(tmp_path), "base", "new")
    assert bad.returncode == 2 and "not an ssd-bench --json file" in bad.stderr
