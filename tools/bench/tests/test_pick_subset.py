"""pick_subset.py on hand-made ab_session.sh output: the keep rule per candidate and the subset's name."""
import json
import pathlib
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "pick_subset.py"


def bench(folder, name, tag, rnd, rows):
    (folder / f"{name}.{tag}.{rnd}.json").write_text(
        json.dumps({"rows": [{"op": "Op", "workload": w, "us": us} for w, us in rows.items()]}))


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_keeps_the_faster_candidates(tmp_path):
    log = tmp_path / "ab.txt"
    log.write_text("fuzz opa, fast: exit 0\nfuzz opb, slow: exit 0\nfuzz opa,opb, broken: exit 1\n")
    for rnd in (1, 2):
        bench(tmp_path, "base", "t", rnd, {"w1": 10.0, "w2": 4.0})
    # fast: medians 9.0 (rounds 8, 10) and 4.0: ratios 10/9 = 1.111 and 1, mean sqrt(1.111) = 1.054.
    bench(tmp_path, "fast", "t", 1, {"w1": 8.0, "w2": 4.0})
    bench(tmp_path, "fast", "t", 2, {"w1": 10.0, "w2": 4.0})
    # slow: 10/9.5 = 1.0526 but 4/4.2 = 0.9524, below the lowest allowed 0.97; mean
    # sqrt(1.0526 * 0.9524) = sqrt(1.0025) = 1.0013.
    for rnd in (1, 2):
        bench(tmp_path, "slow", "t", rnd, {"w1": 9.5, "w2": 4.2})
        bench(tmp_path, "broken", "t", rnd, {"w1": 5.0, "w2": 2.0})  # 2x faster, but its fuzz failed
        bench(tmp_path, "unfuzzed", "t", rnd, {"w1": 5.0})           # 2x faster, no fuzz run
    result = run(tmp_path, log, "base", "fast", "slow", "broken", "unfuzzed")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "sub_1000\n"
    assert "fast: 2 workloads, base / fast 1.0541, lowest 1.0000, fuzz exit 0: kept" in result.stderr
    assert "slow: 2 workloads, base / slow 1.0013, lowest 0.9524, fuzz exit 0: not kept" in result.stderr
    assert "broken: 2 workloads, base / broken 2.0000, lowest 2.0000, fuzz exit 1: not kept" in result.stderr
    assert "unfuzzed: 1 workloads, base / unfuzzed 2.0000, lowest 2.0000, no fuzz run: not kept" in result.stderr
    # Under a looser rule (gain 0.1%, lowest 0.95) slow is kept too: bits in the order given.
    loose = run(tmp_path, log, "base", "slow", "fast", "--worst", "0.95", "--gain", "0.001")
    assert loose.stdout == "sub_11\n", loose.stderr
    # 1.054 is below a 10% gain: none kept, and the base is the library to verify.
    none = run(tmp_path, log, "base", "fast", "slow", "--gain", "0.1")
    assert none.stdout == "base\n", none.stderr


def test_bad_input_names_the_argument(tmp_path):
    log = tmp_path / "ab.txt"
    log.write_text("")
    bench(tmp_path, "base", "t", 1, {"w1": 1.0})
    bench(tmp_path, "cand", "t", 1, {"w1": 1.0})
    missing_dir = run(tmp_path / "none", log, "base", "cand")
    assert missing_dir.returncode == 2 and "argument 'DIR'" in missing_dir.stderr
    missing_log = run(tmp_path, tmp_path / "none.txt", "base", "cand")
    assert missing_log.returncode == 2 and "argument 'LOG'" in missing_log.stderr
    no_base = run(tmp_path, log, "other", "cand")
    assert no_base.returncode == 2 and "argument 'BASE'" in no_base.stderr
    no_cand = run(tmp_path, log, "base", "other")
    assert no_cand.returncode == 2 and "argument 'CANDIDATE'" in no_cand.stderr
    (tmp_path / "bad.t.1.json").write_text("{}")
    bad = run(tmp_path, log, "base", "bad")
    assert bad.returncode == 2 and "argument 'DIR'" in bad.stderr and "not an ssd-bench" in bad.stderr
    assert run(tmp_path, log, "base", "cand", "--worst", "1.5").returncode == 2
