#!/usr/bin/env python3
"""Compile the GPU kernels with NVRTC, as src/gpu/module.rs does, without a GPU.

Concatenates kernels/ in module.rs's SOURCES order (and, with --rate, RATE_SOURCES), compiles for
--arch (default sm_90) with module.rs's options (--gpu-architecture, --std=c++17, --device-int128), prints the
log and exits non-zero on a compilation error.

    scripts/nvrtc-check.py [--arch sm_90] [--rate] [--only m61m31.cu] [--ptxas-v] [--lib /path/libnvrtc.so.13]
"""
import argparse
import ctypes
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBS = ["/tmp/nvrtc/nvidia/cu13/lib/libnvrtc.so.13", "libnvrtc.so.13", "libnvrtc.so"]


def sources(const):
    """File names of module.rs's `const` table (SOURCES or RATE_SOURCES), in order."""
    text = open(os.path.join(ROOT, "src/gpu/module.rs")).read()
    body = re.search(r"const %s: \[\(&str, &str\); \d+\] = \[(.*?)\];" % const, text, re.S)
    if not body:
        sys.exit("nvrtc-check: %s not found in src/gpu/module.rs" % const)
    return re.findall(r'\("([^"]+)", include_str!', body.group(1))


def load(lib):
    for name in ([lib] if lib else LIBS):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    sys.exit("nvrtc-check: libnvrtc not found (tried %s)" % ", ".join([lib] if lib else LIBS))


def compile_unit(nv, files, arch, verbose=False):
    src = "".join(open(os.path.join(ROOT, "kernels", f)).read() for f in files).encode()
    prog = ctypes.c_void_p()
    rc = nv.nvrtcCreateProgram(ctypes.byref(prog), src, b"kernels.cu", 0, None, None)
    if rc != 0:
        sys.exit("nvrtc-check: nvrtcCreateProgram failed (%d)" % rc)
    opts = [("--gpu-architecture=%s" % arch).encode(), b"--std=c++17", b"--device-int128"]
    if verbose:
        opts.append(b"--ptxas-options=-v")
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = nv.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    nv.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nv.nvrtcGetProgramLog(prog, log)
    nv.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc, log.value.decode(errors="replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--rate", action="store_true", help="also the field-rate unit (RATE_SOURCES)")
    ap.add_argument("--lib", default=None)
    ap.add_argument("--ptxas-v", action="store_true", help="print ptxas's register and spill report")
    ap.add_argument("--only", nargs="+", metavar="FILE",
                    help="compile only these files of SOURCES (after goldilocks.cuh and mersenne_fields.cuh): faster")
    args = ap.parse_args()
    nv = load(args.lib)
    units = ["SOURCES"] + (["RATE_SOURCES"] if args.rate else [])
    failed = False
    for const in units:
        files = sources(const)
        if args.only and const == "SOURCES":
            files = [f for f in files if f in ["goldilocks.cuh", "mersenne_fields.cuh"] + args.only]
        rc, log = compile_unit(nv, files, args.arch, args.ptxas_v)
        print("%s (%s): %s" % (const, " ".join(files), "OK" if rc == 0 else "FAILED (%d)" % rc))
        if log.strip():
            print(log)
        failed |= rc != 0
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
