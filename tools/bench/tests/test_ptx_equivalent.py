"""ptx_equivalent.py on hand-written PTX: renamings it accepts, changes it must report."""
import pathlib
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "ptx_equivalent.py"

# acc0 and acc1 start at 0.0; the loop adds x * y to acc0 and x to acc1; the store writes acc0 + acc1.
KERNEL = """
.visible .entry _ZN7ssd_gpu41_GLOBAL__N__0123abcd_6_k_cu_deadbeef1kEv(
\t.param .u64 p
)
{{
\t.reg .f32 \t%f<9>;
\t.reg .pred \t%p<2>;
\t.loc 1 10 3 // a line marker
\tmov.f32 \t%f{a0}, 0f00000000;
\tmov.f32 \t%f{a1}, %f{a0};
{label}:
\tld.global.f32 \t%f{x}, [%rd1];
\tld.global.f32 \t%f{y}, [%rd2];
\tfma.rn.f32 \t%f{a0}, %f{x}, %f{y}, %f{a0};
\tadd.f32 \t%f{a1}, %f{a1}, %f{x};
\t@%p1 bra \t{label};
\tadd.f32 \t%f{s}, %f{a0}, %f{a1};
\tst.global.f32 \t[%rd3], %f{s};
\tret;
}}
"""


def ptx(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def run(old, new, *extra):
    return subprocess.run([sys.executable, str(SCRIPT), str(old), str(new), *extra], capture_output=True, text=True)


def kernel(**names):
    fields = dict(a0=1, a1=2, x=3, y=4, s=5, label="$L__BB0_1")
    fields.update(names)
    return KERNEL.format(**fields)


def test_the_same_file_is_equivalent(tmp_path):
    a = ptx(tmp_path, "a.ptx", kernel())
    result = run(a, a)
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines()[-1] == "equivalent"


def test_renumbered_registers_and_labels_are_equivalent(tmp_path):
    # Every register and the label renamed one for one: x 3 -> 7, y 4 -> 8, s 5 -> 6.
    a = ptx(tmp_path, "a.ptx", kernel())
    b = ptx(tmp_path, "b.ptx", kernel(x=7, y=8, s=6, label="$L__BB0_9"))
    assert run(a, b).returncode == 0


def test_zeroed_accumulators_pair_in_any_order(tmp_path):
    # In b the two accumulators trade names (a0 = %f2, a1 = %f1) and the zeroing block reads
    # "mov %f2, 0; mov %f1, %f2": both start at 0.0, so the kernels are the same.
    a = ptx(tmp_path, "a.ptx", kernel())
    b = ptx(tmp_path, "b.ptx", kernel(a0=2, a1=1))
    assert run(a, b).returncode == 0


def test_a_renamed_source_operand_is_reported(tmp_path):
    # fma x * x instead of x * y: one operand takes another register, which no renaming explains.
    a = ptx(tmp_path, "a.ptx", kernel())
    b = ptx(tmp_path, "b.ptx", kernel().replace("%f3, %f4, %f1;", "%f3, %f3, %f1;"))
    result = run(a, b)
    assert result.returncode == 1
    assert "renamed two ways" in result.stdout
    assert result.stdout.splitlines()[-1] == "NOT equivalent"


def test_an_accumulator_that_starts_elsewhere_is_reported(tmp_path):
    # acc1 starts at 1.0 in b: not a move of 0.0, so the blocks differ.
    a = ptx(tmp_path, "a.ptx", kernel())
    b = ptx(tmp_path, "b.ptx", kernel().replace("mov.f32 \t%f2, %f1;", "mov.f32 \t%f2, 0f3F800000;"))
    assert run(a, b).returncode == 1


def test_a_zeroed_register_swapped_with_a_live_one_is_reported(tmp_path):
    # b adds y where a adds x to acc1: the same instruction, another register (x is not a zero).
    a = ptx(tmp_path, "a.ptx", kernel())
    b = ptx(tmp_path, "b.ptx", kernel().replace("add.f32 \t%f2, %f2, %f3;", "add.f32 \t%f2, %f2, %f4;"))
    assert run(a, b).returncode == 1


def test_another_opcode_is_reported(tmp_path):
    a = ptx(tmp_path, "a.ptx", kernel())
    b = ptx(tmp_path, "b.ptx", kernel().replace("fma.rn.f32", "fma.rz.f32"))
    result = run(a, b)
    assert result.returncode == 1
    assert "instructions differ" in result.stdout


def test_a_redundant_zero_move_is_left_out(tmp_path):
    # b sets acc0 to 0.0 again right after its block: a no-op, whichever accumulator it names.
    a = ptx(tmp_path, "a.ptx", kernel())
    b = ptx(tmp_path, "b.ptx", kernel().replace("mov.f32 \t%f2, %f1;\n", "mov.f32 \t%f2, %f1;\n\tmov.f32 \t%f2, 0f00000000;\n"))
    assert run(a, b).returncode == 0


def test_a_zero_move_after_a_label_counts(tmp_path):
    # After the label acc0 may hold anything (the loop comes back there): zeroing it there is a change.
    a = ptx(tmp_path, "a.ptx", kernel())
    b = ptx(tmp_path, "b.ptx", kernel().replace("$L__BB0_1:\n", "$L__BB0_1:\n\tmov.f32 \t%f1, 0f00000000;\n"))
    assert run(a, b).returncode == 1


def test_the_path_part_of_anonymous_namespaces_is_ignored_but_not_the_name(tmp_path):
    a = ptx(tmp_path, "a.ptx", kernel())
    moved = ptx(tmp_path, "moved.ptx", kernel().replace("0123abcd", "99999999"))
    assert run(a, moved).returncode == 0
    renamed = ptx(tmp_path, "renamed.ptx", kernel().replace("1kEv", "1jEv"))
    result = run(a, renamed)
    assert result.returncode == 1
    assert "names differ" in result.stdout
    assert run(a, renamed, "--ignore-names").returncode == 0


def test_bad_input_names_the_argument(tmp_path):
    a = ptx(tmp_path, "a.ptx", kernel())
    result = run(a, tmp_path / "missing.ptx")
    assert result.returncode == 2
    assert "argument 'NEW.ptx'" in result.stderr
    not_ptx = ptx(tmp_path, "notes.txt", "no kernels here\n")
    result = run(not_ptx, a)
    assert result.returncode == 2
    assert "argument 'OLD.ptx'" in result.stderr and "not PTX" in result.stderr


def test_same_ptx_names_a_bad_argument():
    # same_ptx.sh (which compiles, so the suite checks only its argument errors) on a REV that is
    # no commit and on too few arguments.
    script = SCRIPT.parent / "same_ptx.sh"
    result = subprocess.run(["bash", str(script), "no-such-revision-x", "chunk_scan.cu"], capture_output=True, text=True)
    assert result.returncode == 2
    assert "argument 'REV'" in result.stderr
    result = subprocess.run(["bash", str(script), "HEAD"], capture_output=True, text=True)
    assert result.returncode == 2
    assert "usage" in result.stderr
    result = subprocess.run(["bash", str(script), "HEAD", "chunk_scan.cu", "--old"], capture_output=True, text=True)
    assert result.returncode == 2
    assert "argument '--old'" in result.stderr
