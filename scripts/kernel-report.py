#!/usr/bin/env python3
"""Registers, spills and SASS instruction mix of the GPU kernels, without a GPU (issue 5: "check
the compiler's register/spill report and the SASS for the hot kernels").

Each unit of kernels/manifest.txt (the units src/gpu/module.rs compiles) is compiled for sm_90
with nvcc (-Xptxas -v, the kernels folder on the include path, as NVRTC gets the headers) and
disassembled with cuobjdump. For each kernel: its registers, spill bytes, instructions, and how many of them
go to the integer ALU pipe (IADD3, LOP3, SEL, shifts...), to the FMA-heavy pipe (IMAD*), or are
memory operations; the passes are bound by the two integer pipes (bench/notes/gpu.md, 2026-11-25).

    scripts/kernel-report.py                        # the hot kernels (ntt_col_r5..7, ntt_sq_r5..7)
    scripts/kernel-report.py ntt_col_r5 ntt_r7      # these kernels
    scripts/kernel-report.py --dir DIR --all        # kernel files from DIR (as with
                                                    # MERSENNE_CERT_KERNEL_DIR), every kernel
    scripts/kernel-report.py --sass OUT ntt_sq_r7   # also write the SASS to OUT

nvcc and cuobjdump come from $CUDA_BIN, else from PATH. Without a CUDA toolkit, pip has them
(the device's NVRTC is CUDA 13.0, so take the same version):
    python3 -m venv /tmp/cuda && /tmp/cuda/bin/pip install nvidia-cuda-nvcc==13.0.88 \\
        nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-runtime nvidia-cuda-cuobjdump \\
        nvidia-cuda-nvdisasm
    CUDA_BIN=$(echo /tmp/cuda/lib/python3*/site-packages/nvidia/cu13/bin) scripts/kernel-report.py
"""

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
HOT = ["ntt_col_r5", "ntt_col_r6", "ntt_col_r7", "ntt_sq_r5", "ntt_sq_r6", "ntt_sq_r7"]
MEMORY = {"LDG", "STG", "LDS", "STS", "LD", "ST", "LDL", "STL", "LDC", "ATOMG", "RED"}


def tool(name):
    d = os.environ.get("CUDA_BIN")
    path = os.path.join(d, name) if d else shutil.which(name)
    if not path or not os.path.exists(path):
        sys.exit(f"kernel-report: {name} not found (set CUDA_BIN; `{sys.argv[0]} --help` says how to get it)")
    return path


def units(kernels):
    """The unit files of kernels/manifest.txt (`name file` lines), in order."""
    files = []
    for line in open(os.path.join(kernels, "manifest.txt")):
        words = line.split("#", 1)[0].split()
        if words:
            files.append(words[1])
    if not files:
        sys.exit("kernel-report: no unit in %s/manifest.txt" % kernels)
    return files


def pipe(op):
    base = op.split(".")[0]
    if base in MEMORY:
        return "memory"
    if base.startswith("IMAD") or base.startswith("IDP"):
        return "fma-heavy"
    return "other"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kernels", nargs="*")
    ap.add_argument("--dir", default=os.path.join(ROOT, "kernels"))
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--sass", help="write the SASS of the kernels shown to this file")
    args = ap.parse_args()
    nvcc, cuobjdump = tool("nvcc"), tool("cuobjdump")
    env = dict(os.environ, PATH=os.path.dirname(nvcc) + os.pathsep + os.environ.get("PATH", ""))
    log, sass = "", ""
    with tempfile.TemporaryDirectory() as tmp:
        for i, unit in enumerate(units(args.dir)):
            cubin = os.path.join(tmp, "%d.cubin" % i)
            cc = subprocess.run([nvcc, "-arch=sm_90", "-std=c++17", "-cubin", "-I", args.dir, "-o", cubin,
                                 os.path.join(args.dir, unit), "-Xptxas", "-v"], capture_output=True, text=True, env=env)
            if cc.returncode != 0:
                sys.exit(cc.stderr)
            log += cc.stderr
            sass += subprocess.run([cuobjdump, "-sass", cubin], capture_output=True, text=True, env=env,
                                   check=True).stdout
    regs = {}
    for m in re.finditer(r"Compiling entry function '(\w+)'.*?(\d+) bytes spill stores.*?Used (\d+) registers", log, re.S):
        regs[m.group(1)] = (int(m.group(3)), int(m.group(2)))
    counts, text, cur = collections.defaultdict(collections.Counter), collections.defaultdict(list), None
    for line in sass.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            cur = m.group(1)
            continue
        m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
        if cur and m:
            counts[cur][pipe(m.group(2))] += 1
            text[cur].append(line.strip())
    shown = sorted(counts) if args.all else (args.kernels or HOT)
    print(f"{'kernel':<16} {'regs':>5} {'spill B':>8} {'instr':>6} {'ALU etc.':>9} {'IMAD':>6} {'memory':>7}")
    for k in shown:
        if k not in counts:
            sys.exit(f"kernel-report: no kernel {k}")
        c, (r, s) = counts[k], regs.get(k, (0, 0))
        print(f"{k:<16} {r:>5} {s:>8} {sum(c.values()):>6} {c['other']:>9} {c['fma-heavy']:>6} {c['memory']:>7}")
    if args.sass:
        with open(args.sass, "w") as f:
            for k in shown:
                f.write(f"Function : {k}\n" + "\n".join(text[k]) + "\n")


if __name__ == "__main__":
    main()
