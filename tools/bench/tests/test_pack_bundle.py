"""pack_bundle.sh on a stand-in bundle and build folder: what the archive holds and leaves out, and
bad arguments named without an archive left behind."""
import os
import pathlib
import subprocess
import tarfile

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "pack_bundle.sh"


def stand_in(tmp_path):
    bundle = tmp_path / "bundle"
    (bundle / "lib").mkdir(parents=True)
    (bundle / "kernels").mkdir()
    (bundle / "ssd_gpu_tests").write_text("#!/bin/sh\n")
    (bundle / "ssd_gpu_tests").chmod(0o755)
    (bundle / "libssd-kernels-cuda.so").write_text("candidate")
    (bundle / "lib" / "libfmt.so.9").write_text("a shared library")
    (bundle / "kernels" / "libssd-kernels-mutant-x.so").write_text("a planted bug")
    build = tmp_path / "build"
    (build / "variants").mkdir(parents=True)
    (build / "variants" / "fast.so").write_text("a variant")
    before = tmp_path / "before.so"
    before.write_text("the last verified library")
    return bundle, build, before


def run(build, *args):
    env = dict(os.environ, SSD_BUILD_DIR=str(build))
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=env)


def test_archive_holds_the_bundle_scripts_variants_and_before(tmp_path):
    bundle, build, before = stand_in(tmp_path)
    archive = tmp_path / "b.tgz"
    result = run(build, bundle, archive, before)
    assert result.returncode == 0, result.stderr
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
        assert tar.extractfile("bundle/before/libssd-kernels-cuda.so").read() == b"the last verified library"
        assert tar.extractfile("bundle/variants/fast.so").read() == b"a variant"
    for kept in ["bundle/ssd_gpu_tests", "bundle/libssd-kernels-cuda.so", "bundle/lib/libfmt.so.9",
                 "bundle/fast_session.sh", "bundle/ab_session.sh", "bundle/fast_problems.txt",
                 "bundle/mamba_ssm_h200.json"]:
        assert kept in names, kept
    assert not any(n.startswith("bundle/kernels") for n in names)  # ssd-suite's libraries stay out
    assert not any(n.startswith("bundle/tests") for n in names)  # tools/bench's own tests too
    assert "variants: fast.so" in result.stdout


def test_bad_arguments_are_named_and_leave_no_archive(tmp_path):
    bundle, build, before = stand_in(tmp_path)
    archive = tmp_path / "b.tgz"
    cases = [
        ((tmp_path / "none", archive), "argument 'BUNDLE'"),
        ((bundle, tmp_path / "b.zip"), "argument 'ARCHIVE'"),
        ((bundle, tmp_path / "no" / "b.tgz"), "argument 'ARCHIVE'"),
        ((bundle, archive, tmp_path / "absent.so"), "argument 'BEFORE'"),
        ((bundle,), "usage"),
    ]
    for args, message in cases:
        result = run(build, *args)
        assert result.returncode == 2 and message in result.stderr, (args, result.stderr)
    assert not archive.exists() and not (tmp_path / "b.tgz.part").exists()
