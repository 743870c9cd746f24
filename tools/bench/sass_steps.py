#!/usr/bin/env python3
"""Static SASS of a gpu/src kernel file on a host without a GPU: instructions per kernel and per
step between consecutive tensor-core instructions, so a candidate's cut of a loop body can be read
before any device call.

usage: python3 tools/bench/sass_steps.py FILE.cu [--nvdisasm PATH] [--kernel TEXT] [--show I] [-- NVCC_FLAG ...]

FILE.cu (in gpu/src) is compiled to a cubin with the build's own nvcc line (ninja's, as
same_ptx.sh does; BUILD is $SSD_BUILD_DIR, default build/) and the NVCC_FLAGs, then disassembled
by nvdisasm (--nvdisasm, default `nvdisasm` on PATH). The disassembler of CUDA 11.8 (Debian's
nvidia-cuda-toolkit, non-free; tools/bench/get_nvdisasm.sh DIR fetches it) reads cubins of newer
compilers once their ELF header takes its own encoding of the architecture (`old_elf_header`
below); it skips, without a line, the few sm_90 instructions it cannot decode, so every count here
comes from the addresses (16 bytes an instruction), never from the lines printed. Prints, per kernel (its template arguments as the
name): its instructions, how many were not decoded, and the instructions from each HGMMA or HMMA
to the next (a wgmma or mma.sync step's body in unrolled code). --show I prints the instructions
of kernels matching --kernel from tensor-core instruction I to I + 1.
"""
import argparse
import os
import pathlib
import re
import shlex
import struct
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
TENSOR_OPCODES = ("HGMMA", "HMMA")
UNDECODED = "<not decoded>"


class InputError(Exception):
    pass


def old_elf_header(cubin):
    """The cubin with the ELF header of CUDA 11.8's cubins: OS/ABI 0x33, ABI version 7, and e_flags
    holding the SM in bits 0-7 and 16-23 beside 0x500 (texture mode, 64-bit addresses), where newer
    compilers write OS/ABI 0x41, ABI version 8 and the SM in bits 8-15."""
    data = bytearray(cubin)
    if len(data) < 52 or data[:4] != b"\x7fELF" or data[4] != 2:
        raise InputError("not a 64-bit ELF cubin")
    flags = struct.unpack_from("<I", data, 48)[0]
    sm = (flags >> 8) & 0xFF if data[8] >= 8 else flags & 0xFF
    data[7], data[8] = 0x33, 7
    struct.pack_into("<I", data, 48, (sm << 16) | 0x500 | sm)
    return bytes(data)


def kernels(disassembly):
    """Kernel name -> {address: instruction text} from nvdisasm's output; the name is the mangled
    name's template arguments where it has them."""
    found, current = {}, None
    for line in disassembly.splitlines():
        section = re.match(r"\s*\.section\s+\.text\.(\S+?),", line)
        if section:
            name = section.group(1)
            arguments = re.search(r"I(\w+?)EEEv", name)
            current = found.setdefault(arguments.group(1) if arguments else name, {})
            continue
        instruction = re.match(r"\s*/\*([0-9a-f]+)\*/\s+([^.\s].*?)\s*;", line)
        if current is not None and instruction:
            current[int(instruction.group(1), 16)] = instruction.group(2)
    return found


def listing(by_address):
    """The kernel's instructions in address order up to its last one that is not a NOP, the
    addresses nvdisasm printed nothing for as UNDECODED."""
    real = [a for a, text in by_address.items() if not text.startswith("NOP")]
    if not real:
        return []
    return [by_address.get(a, UNDECODED) for a in range(0, max(real) + 16, 16)]


def opcode(text):
    """The instruction's opcode with its modifiers, its predicate (@P0, @!P1) dropped."""
    words = text.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def tensor_steps(instructions):
    """Indices of the tensor-core instructions, and the distances between consecutive ones."""
    at = [i for i, text in enumerate(instructions) if opcode(text).startswith(TENSOR_OPCODES)]
    return at, [b - a for a, b in zip(at, at[1:])]


def compile_cubin(source, flags, build, out):
    """FILE.cu compiled to a cubin at `out` with ninja's nvcc line for it plus `flags`."""
    if not (build / "build.ninja").is_file():
        raise InputError(f"no ninja build in {build} (set SSD_BUILD_DIR, or configure with the release preset)")
    commands = subprocess.run(["ninja", "-t", "commands", "ssd_gpu"], cwd=build, capture_output=True, text=True,
                              check=True).stdout.splitlines()
    line = next((c for c in commands for target in ("ssd_gpu_sm90a", "ssd_gpu")
                 if f"-o gpu/CMakeFiles/{target}.dir/src/{source}.o" in c), None)
    if line is None:
        raise InputError(f"argument 'FILE.cu': ninja builds no gpu/src/{source} into ssd_gpu")
    words = shlex.split(line.split(" && ", 1)[-1])
    args, skip = [], 0
    for word in words:
        if skip:
            skip -= 1
        elif word in ("-o", "-MF", "-MT"):
            skip = 1
        elif word in ("-MD", "-c") or word.endswith("wgmma_guard.sh"):
            pass
        elif word.startswith("--generate-code="):
            args.append("-arch=" + re.search(r"sm_\w+", word).group(0))  # code=[sm_90a] or [compute_90,sm_90]
        else:
            args.append(word)
    subprocess.run(args + flags + ["-cubin", "-o", str(out)], cwd=build, check=True, capture_output=True, text=True)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", metavar="FILE.cu")
    parser.add_argument("--nvdisasm", default="nvdisasm")
    parser.add_argument("--kernel", default="", help="only kernels whose name contains this text")
    parser.add_argument("--show", type=int, help="print the instructions from tensor-core instruction I to I + 1")
    flags = argv[argv.index("--") + 1:] if "--" in argv else []
    options = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    options.flags = flags
    source = pathlib.Path(options.file).name
    if not (ROOT / "gpu" / "src" / source).is_file():
        raise InputError(f"argument 'FILE.cu': no file gpu/src/{source}")
    build = pathlib.Path(os.environ.get("SSD_BUILD_DIR", ROOT / "build"))
    with tempfile.TemporaryDirectory() as work:
        cubin = pathlib.Path(work) / "kernels.cubin"
        try:
            compile_cubin(source, options.flags, build, cubin)
        except subprocess.CalledProcessError as e:
            raise InputError(f"the compile of {source} failed:\n{e.stderr}")
        cubin.write_bytes(old_elf_header(cubin.read_bytes()))
        try:
            disassembly = subprocess.run([options.nvdisasm, str(cubin)], capture_output=True, text=True,
                                         check=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            raise InputError(f"argument '--nvdisasm': {options.nvdisasm} did not disassemble the cubin ({e})")
    for name, by_address in kernels(disassembly).items():
        if options.kernel not in name:
            continue
        instructions = listing(by_address)
        at, gaps = tensor_steps(instructions)
        undecoded = sum(text == UNDECODED for text in instructions)
        print(f"{name}: {len(instructions)} instructions ({undecoded} not decoded); between tensor-core "
              f"instructions: {' '.join(map(str, gaps)) or '-'}")
        if options.show is not None and 0 <= options.show < len(at) - 1:
            print("\n".join("    " + text for text in instructions[at[options.show]:at[options.show + 1] + 1]))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except InputError as e:
        print(f"sass_steps.py: {e}", file=sys.stderr)
        sys.exit(2)
