"""sass_steps.py's pieces that need no compiler: the cubin header it rewrites for CUDA 11.8's
disassembler, and its reading of a disassembly, on hand-made input (counts by address, so an
instruction the disassembler skips still counts)."""
import pathlib
import struct
import subprocess
import sys

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "sass_steps.py"
sys.path.insert(0, str(SCRIPT.parent))
import sass_steps  # noqa: E402


def elf_header(osabi, abi_version, flags):
    header = bytearray(64)
    header[:4] = b"\x7fELF"
    header[4] = 2  # 64-bit
    header[7], header[8] = osabi, abi_version
    struct.pack_into("<I", header, 48, flags)
    return bytes(header)


def test_header_takes_the_old_encoding_of_the_architecture():
    # A CUDA 13 cubin for sm_90a: OS/ABI 0x41, ABI version 8, e_flags 0x06005a04 (SM 0x5a = 90 in
    # bits 8-15). CUDA 11.8's: OS/ABI 0x33, ABI version 7, SM in bits 0-7 and 16-23 beside 0x500.
    old = sass_steps.old_elf_header(elf_header(0x41, 8, 0x06005A04) + b"rest")
    assert old[7] == 0x33 and old[8] == 7
    assert struct.unpack_from("<I", old, 48)[0] == 0x005A055A
    assert old[64:] == b"rest"
    # A cubin already in the old encoding keeps its SM.
    again = sass_steps.old_elf_header(elf_header(0x33, 7, 0x005A055A))
    assert struct.unpack_from("<I", again, 48)[0] == 0x005A055A
    with pytest.raises(sass_steps.InputError):
        sass_steps.old_elf_header(b"not an elf file at all, but long enough to have a header of 64 bytes..")


DISASSEMBLY = """
	.section	.text._ZN7ssd_gpu6kernelI6__halfLb0EEEvNS_6ParamsE,"ax",@progbits
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   HGMMA.64x64x16.F32 R24, R60, gdesc [UR4], RZ, !UPT, gsb0 ;
        /*0020*/                   FMUL R2, R3, R4 ;
        /*0040*/                   F2FP.F16.F32.PACK_AB R5, R6, R7 ;
        /*0050*/               @P0 HGMMA.64x64x16.F32 R24, R64, gdesc [UR4], R24, gsb0 ;
        /*0060*/                   EXIT ;
        /*0070*/                   NOP;
        /*0080*/                   NOP;
	.section	.text._Z5otherPf,"ax",@progbits
        /*0000*/                   HMMA.16816.F32 R0, R4, R8, R0 ;
        /*0010*/                   EXIT ;
"""


def test_counts_come_from_the_addresses():
    found = sass_steps.kernels(DISASSEMBLY)
    assert set(found) == {"6__halfLb0", "_Z5otherPf"}
    instructions = sass_steps.listing(found["6__halfLb0"])
    # 0x00-0x60: 7 slots (the trailing NOPs dropped), 0x30 not printed: one undecoded.
    assert len(instructions) == 7
    assert instructions[3] == sass_steps.UNDECODED
    at, gaps = sass_steps.tensor_steps(instructions)
    assert at == [1, 5] and gaps == [4]  # FMUL, the undecoded slot, F2FP, then the predicated HGMMA
    at, gaps = sass_steps.tensor_steps(sass_steps.listing(found["_Z5otherPf"]))
    assert at == [0] and gaps == []


def test_a_missing_source_is_named():
    result = subprocess.run([sys.executable, str(SCRIPT), "no_such_kernel.cu"], capture_output=True, text=True)
    assert result.returncode == 2
    assert "argument 'FILE.cu'" in result.stderr


def test_get_nvdisasm_names_a_bad_argument(tmp_path):
    # get_nvdisasm.sh downloads, so the suite checks only its argument errors.
    script = SCRIPT.parent / "get_nvdisasm.sh"
    result = subprocess.run(["bash", str(script)], capture_output=True, text=True)
    assert result.returncode == 2 and "usage" in result.stderr
    result = subprocess.run(["bash", str(script), str(tmp_path / "no" / "such" / "dir")], capture_output=True,
                            text=True)
    assert result.returncode == 2 and "argument 'DIR'" in result.stderr
