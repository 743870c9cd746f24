"""keep_candidate.py on hand-made ssd-bench files: per-op geometric means and the keep rule."""
import json
import pathlib
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "keep_candidate.py"


def bench(tmp_path, name, rows):
    path = tmp_path / name
    path.write_text(json.dumps({"rows": [{"op": op, "workload": w, "us": us} for op, w, us in rows]}))
    return str(path)


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def test_geometric_means_and_the_rule(tmp_path):
    # Op A: before / after 4/2 = 2 and 9/9 = 1, geometric mean sqrt(2) = 1.414. Op B: 10/10.2 =
    # 0.980, 2% slower. A workload only one file times (w5) is left out.
    before = bench(tmp_path, "b.json", [("A", "w1", 4.0), ("A", "w2", 9.0), ("B", "w3", 10.0), ("B", "w5", 1.0)])
    after = bench(tmp_path, "a.json", [("A", "w1", 2.0), ("A", "w2", 9.0), ("B", "w3", 10.2)])
    strict = run(before, after)
    assert strict.returncode == 0, strict.stderr
    assert strict.stdout == "before\n"
    assert "A: before / after 1.414" in strict.stderr and "B: before / after 0.980  (slower)" in strict.stderr
    loose = run(before, after, "--slower-by", "0.05")
    assert loose.stdout == "candidate\n" and "(slower)" not in loose.stderr


def test_bad_input_names_the_argument(tmp_path):
    good = bench(tmp_path, "g.json", [("A", "w1", 1.0)])
    missing = run(str(tmp_path / "none.json"), good)
    assert missing.returncode == 2 and "argument 'BEFORE.json'" in missing.stderr
    (tmp_path / "bad.json").write_text("{}")
    bad = run(good, str(tmp_path / "bad.json"))
    assert bad.returncode == 2 and "argument 'AFTER.json'" in bad.stderr and "not an ssd-bench" in bad.stderr
    other = bench(tmp_path, "o.json", [("A", "w9", 1.0)])
    disjoint = run(good, other)
    assert disjoint.returncode == 2 and "no workload is timed in both" in disjoint.stderr
    assert run(good, good, "--slower-by", "1.5").returncode == 2
