"""make_subsets.sh (and the make_variant.sh it calls) on a stand-in build whose compiler and linker
write what they were given: each subset's library holds its candidates' options and replacement
files and the build's objects for the rest; bad arguments stop before anything is built."""
import os
import pathlib
import subprocess

from standin import OUT_AND_REST, executable

BENCH_DIR = pathlib.Path(__file__).resolve().parents[1]
ROOT = BENCH_DIR.parents[1]
SCRIPT = BENCH_DIR / "make_subsets.sh"


def stand_in_build(tmp_path):
    """A build folder of two sources, a.cu and b.cu, whose ninja prints compile and link lines of
    stand-in tools: the compiler writes its source and options into its object, the linker the
    objects' contents into the library."""
    build, tools = tmp_path / "build", tmp_path / "tools"
    objects = build / "gpu" / "CMakeFiles" / "ssd_gpu.dir" / "src"
    objects.mkdir(parents=True)
    tools.mkdir()
    (build / "build.ninja").write_text("# stand-in\n")
    for name in ("a", "b"):
        (objects / f"{name}.cu.o").write_text(f"built {name}.cu\n")
    src = f"{ROOT}/gpu/src"
    obj = "gpu/CMakeFiles/ssd_gpu.dir/src"
    executable(tools / "ninja", f"""#!/bin/sh
echo ": && cc_stand_in -MD -MT {obj}/a.cu.o -MF {obj}/a.cu.o.d -c {src}/a.cu -o {obj}/a.cu.o"
echo ": && cc_stand_in -MD -MT {obj}/b.cu.o -MF {obj}/b.cu.o.d -c {src}/b.cu -o {obj}/b.cu.o"
echo ": && link_stand_in {obj}/a.cu.o {obj}/b.cu.o -o kernels/libssd-kernels-cuda.so"
""")
    executable(tools / "cc_stand_in", "#!/bin/sh\n" + OUT_AND_REST + 'echo "compiled$rest" >"$out"\n')
    executable(tools / "link_stand_in", "#!/bin/sh\n" + OUT_AND_REST + 'cat $rest >"$out"\n')
    env = dict(os.environ, SSD_BUILD_DIR=str(build), PATH=f"{tools}:{os.environ.get('PATH', '')}")
    return build, env


def run(env, *args):
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], env=env, capture_output=True, text=True,
                          timeout=60)


def test_each_subset_holds_its_candidates(tmp_path):
    build, env = stand_in_build(tmp_path)
    replacement = tmp_path / "b_new.cu"
    replacement.write_text("// b, changed\n")
    result = run(env, "a.cu:-DA_OPTION=2", f"b.cu={replacement}")
    assert result.returncode == 0, result.stderr
    library = {name: (build / "variants" / f"{name}.so").read_text() for name in ("sub_10", "sub_01", "sub_11")}
    # sub_10: a.cu recompiled with the option, b.cu's object as built.
    assert "-DA_OPTION=2" in library["sub_10"] and f"{ROOT}/gpu/src/a.cu" in library["sub_10"]
    assert "built b.cu" in library["sub_10"] and str(replacement) not in library["sub_10"]
    # sub_01: b.cu replaced, a.cu's object as built, no option.
    assert str(replacement) in library["sub_01"] and "built a.cu" in library["sub_01"]
    assert "-DA_OPTION" not in library["sub_01"]
    # sub_11: both.
    assert "-DA_OPTION=2" in library["sub_11"] and str(replacement) in library["sub_11"]
    assert "built" not in library["sub_11"]


def test_two_options_of_one_source_compile_it_once(tmp_path):
    build, env = stand_in_build(tmp_path)
    result = run(env, "a.cu:-DA_ONE=1", "a.cu:-DA_TWO=1")
    assert result.returncode == 0, result.stderr
    library = {name: (build / "variants" / f"{name}.so").read_text() for name in ("sub_10", "sub_01", "sub_11")}
    assert "-DA_ONE=1" in library["sub_10"] and "-DA_TWO" not in library["sub_10"]
    assert "-DA_TWO=1" in library["sub_01"] and "-DA_ONE" not in library["sub_01"]
    # sub_11: one compile of a.cu with both options, b.cu's object as built.
    assert library["sub_11"].count(f"{ROOT}/gpu/src/a.cu") == 1, library["sub_11"]
    assert "-DA_ONE=1" in library["sub_11"] and "-DA_TWO=1" in library["sub_11"]
    assert "built b.cu" in library["sub_11"]


def test_one_candidate_of_two_options(tmp_path):
    build, env = stand_in_build(tmp_path)
    result = run(env, "a.cu:-DA_ONE=1:-DA_TWO=2", "b.cu:-DB=1")
    assert result.returncode == 0, result.stderr
    library = {name: (build / "variants" / f"{name}.so").read_text() for name in ("sub_10", "sub_01", "sub_11")}
    assert "-DA_ONE=1" in library["sub_10"] and "-DA_TWO=2" in library["sub_10"] and "built b.cu" in library["sub_10"]
    assert "-DA_ONE" not in library["sub_01"] and "-DB=1" in library["sub_01"]
    assert "-DA_TWO=2" in library["sub_11"] and "-DB=1" in library["sub_11"]


def test_bad_candidates_stop_before_any_build(tmp_path):
    build, env = stand_in_build(tmp_path)
    for name in ("a_new.cu", "b_new.cu"):
        (tmp_path / name).write_text("// changed\n")
    for args, message in ((["a.cu:-DA=1"], "usage"),
                          (["a.cu:-DA=1", f"a.cu={tmp_path / 'a_new.cu'}"], "a candidate replaces a.cu"),
                          ([f"b.cu={tmp_path / 'b_new.cu'}", f"b.cu={tmp_path / 'b_new.cu'}"],
                           "a candidate replaces b.cu"),
                          (["a.cu:-D1BAD", "b.cu:-DB=1"], "not SOURCE.cu:-DNAME=VALUE"),
                          (["a.cu:-DA=1:BAD", "b.cu:-DB=1"], "not SOURCE.cu:-DNAME=VALUE"),
                          (["a.cu:-DA=1", f"b.cu={tmp_path / 'missing.cu'}"], "no file"),
                          (["a.cu:-DA=1", "b.cu"], "not SOURCE.cu=REPLACEMENT.cu or SOURCE.cu:-DNAME=VALUE")):
        result = run(env, *args)
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr, (args, result.stderr)
    assert not (build / "variants").exists()
