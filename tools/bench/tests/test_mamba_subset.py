"""mamba_subset.sh on a stand-in clone of mamba: exactly the files time_mamba_ssm.py imports, the
package's own __init__ (which imports CUDA extensions) emptied, and bad arguments stopped before
anything is written."""
import os
import pathlib
import subprocess

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "mamba_subset.sh"
NEEDED = ["mamba_ssm/ops/__init__.py", "mamba_ssm/ops/triton/__init__.py",
          "mamba_ssm/ops/triton/ssd_combined.py", "mamba_ssm/ops/triton/ssd_bmm.py",
          "mamba_ssm/ops/triton/ssd_chunk_scan.py", "mamba_ssm/ops/triton/ssd_chunk_state.py",
          "mamba_ssm/ops/triton/ssd_state_passing.py",
          "mamba_ssm/ops/triton/selective_state_update.py", "mamba_ssm/ops/triton/softplus.py",
          "mamba_ssm/ops/triton/layernorm_gated.py", "mamba_ssm/ops/triton/k_activations.py",
          "mamba_ssm/utils/__init__.py", "mamba_ssm/utils/determinism.py", "mamba_ssm/utils/torch.py"]
# Modules time_mamba_ssm.py does not import (CUDA extensions, other models).
OTHERS = ["mamba_ssm/ops/selective_scan_interface.py", "mamba_ssm/modules/mamba2.py",
          "mamba_ssm/ops/triton/mamba3/mamba3_siso_fwd.py", "setup.py"]
GIT_ENV = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")


def clone(tmp_path, files):
    repo = tmp_path / "mamba"
    for name in files + ["mamba_ssm/__init__.py"]:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        package_init = name == "mamba_ssm/__init__.py"
        (repo / name).write_text("import selective_scan_cuda\n" if package_init else f"# {name}\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "stand-in"], check=True, env=GIT_ENV)
    return repo


def run(*args):
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60)


def test_takes_exactly_the_imported_files(tmp_path):
    repo = clone(tmp_path, NEEDED + OTHERS)
    dest = tmp_path / "subset"
    result = run(repo, dest)
    assert result.returncode == 0, result.stderr
    files = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    assert files == sorted(NEEDED + ["mamba_ssm/__init__.py"])
    assert (dest / "mamba_ssm/__init__.py").read_text() == ""
    assert (dest / "mamba_ssm/ops/triton/ssd_combined.py").read_text() == "# mamba_ssm/ops/triton/ssd_combined.py\n"


def test_bad_arguments_write_nothing(tmp_path):
    repo = clone(tmp_path, NEEDED)
    dest = tmp_path / "subset"
    dest.mkdir()
    (dest / "keep.txt").write_text("mine")
    result = run(repo, dest)
    assert result.returncode == 2 and "argument 'DEST'" in result.stderr, result.stderr
    assert (dest / "keep.txt").read_text() == "mine"

    # A leftover DEST.part is not taken for its own and removed.
    (tmp_path / "fresh.part").mkdir()
    (tmp_path / "fresh.part" / "keep.txt").write_text("mine")
    result = run(repo, tmp_path / "fresh")
    assert result.returncode == 2 and "fresh.part exists" in result.stderr, result.stderr
    assert (tmp_path / "fresh.part" / "keep.txt").read_text() == "mine"
    result = run(repo / "mamba_ssm", tmp_path / "fresh2")
    assert result.returncode == 2 and "not its top" in result.stderr, result.stderr
    result = run(repo, "")
    assert result.returncode == 2 and "argument 'DEST': empty" in result.stderr, result.stderr

    other = tmp_path / "other"
    result = run(repo, other, "no-such-rev")
    assert result.returncode == 2 and "argument 'REV'" in result.stderr, result.stderr
    result = run(tmp_path / "nowhere", other)
    assert result.returncode == 2 and "argument 'MAMBA_CLONE'" in result.stderr, result.stderr
    assert not other.exists() and not pathlib.Path(f"{other}.part").exists()


def test_a_clone_without_the_kernels_is_refused(tmp_path):
    repo = clone(tmp_path, [f for f in NEEDED if not f.endswith("selective_state_update.py")])
    result = run(repo, tmp_path / "subset")
    assert result.returncode == 2 and "selective_state_update.py" in result.stderr, result.stderr
    assert not (tmp_path / "subset").exists()
