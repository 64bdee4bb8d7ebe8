#!/usr/bin/env python3
"""Compile the GPU kernels with NVRTC, as src/gpu/module.rs does, without a GPU.

Compiles each unit of kernels/manifest.txt (or those named) as module.rs does: the unit's file
as the program, every header it #includes (transitively) passed by name as an include source,
module.rs's options (--gpu-architecture, --std=c++17, --device-int128); prints the log and exits
non-zero on a compilation error. --ptx DIR also writes each unit's PTX (for compute_XX of
--arch) to DIR/<unit>.ptx, to compare the kernels of two trees; --sass DIR writes each unit's
CUBIN for --arch to DIR/<unit>.cubin and, where nvdisasm is found (--nvdisasm, $NVDISASM or
PATH; `pip install nvidia-cuda-nvdisasm` has one), its SASS to DIR/<unit>.sass: what the GPU
runs (which branches became predicated instructions, where registers spill), without a GPU.

--define NAME=VALUE puts `#define NAME VALUE` in front of each unit's file, as module.rs's
unit preambles do: the FP64 unit is compiled for one shape of plan (src/gpu/four_step/pipeline.rs
preamble; e.g. --define FP_LOG_R=9 --define FP_LOG_C=13 --define FP_SEG=8 for 2^22).

    scripts/nvrtc-check.py [--arch sm_90] [--dir kernels] [--ptxas-v] [--ptx DIR] [--sass DIR]
                           [--define NAME=VALUE ...] [--nvdisasm PATH] [--lib PATH] [UNIT...]
"""
import argparse
import ctypes
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBS = ["/tmp/nvrtc/nvidia/cu13/lib/libnvrtc.so.13", "libnvrtc.so.13", "libnvrtc.so"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def manifest(kernels):
    """The units of kernels/manifest.txt: [(name, file)], in order."""
    units = []
    for line in open(os.path.join(kernels, "manifest.txt")):
        line = line.split("#", 1)[0].split()
        if line:
            units.append((line[0], line[1]))
    return units


def closure(kernels, file):
    """The unit's text and every header it includes (name -> text), as module.rs gathers them."""
    text = open(os.path.join(kernels, file)).read()
    headers, todo = {}, INCLUDE.findall(text)
    while todo:
        name = todo.pop()
        if name not in headers:
            headers[name] = open(os.path.join(kernels, name)).read()
            todo += INCLUDE.findall(headers[name])
    return text, headers


def load(lib):
    for name in ([lib] if lib else LIBS):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    sys.exit("nvrtc-check: libnvrtc not found (tried %s)" % ", ".join([lib] if lib else LIBS))


def compile_unit(nv, kernels, file, arch, verbose=False, defines=()):
    """(return code, log, PTX (compute_XX) or CUBIN (sm_XX) or None) of one unit."""
    text, headers = closure(kernels, file)
    text = "".join("#define %s %s\n" % tuple(d.split("=", 1)) for d in defines) + text
    names = sorted(headers)
    arr = lambda items: (ctypes.c_char_p * len(items))(*items)
    prog = ctypes.c_void_p()
    rc = nv.nvrtcCreateProgram(ctypes.byref(prog), text.encode(), file.encode(), len(names),
                               arr([headers[n].encode() for n in names]), arr([n.encode() for n in names]))
    if rc != 0:
        sys.exit("nvrtc-check: nvrtcCreateProgram failed (%d)" % rc)
    opts = [("--gpu-architecture=%s" % arch).encode(), b"--std=c++17", b"--device-int128"]
    if verbose:
        opts.append(b"--ptxas-options=-v")
    rc = nv.nvrtcCompileProgram(prog, len(opts), arr(opts))
    size = ctypes.c_size_t()
    nv.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nv.nvrtcGetProgramLog(prog, log)
    ptx = None
    if rc == 0 and arch.startswith("compute_"):
        nv.nvrtcGetPTXSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        nv.nvrtcGetPTX(prog, buf)
        ptx = buf.value.decode()
    elif rc == 0:
        nv.nvrtcGetCUBINSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        nv.nvrtcGetCUBIN(prog, buf)
        ptx = buf.raw
    nv.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc, log.value.decode(errors="replace"), ptx


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("units", nargs="*", help="units of kernels/manifest.txt (default: all)")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--dir", default=os.path.join(ROOT, "kernels"), help="the kernels folder")
    ap.add_argument("--lib", default=None)
    ap.add_argument("--ptxas-v", action="store_true", help="print ptxas's register and spill report")
    ap.add_argument("--ptx", metavar="DIR", help="also write each unit's PTX to DIR/<unit>.ptx")
    ap.add_argument("--sass", metavar="DIR", help="also write each unit's CUBIN (and SASS) to DIR")
    ap.add_argument("--define", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--nvdisasm", default=os.environ.get("NVDISASM") or shutil.which("nvdisasm"))
    args = ap.parse_args()
    nv = load(args.lib)
    units = manifest(args.dir)
    unknown = set(args.units) - {name for name, _ in units}
    if unknown:
        sys.exit("nvrtc-check: no unit %s in kernels/manifest.txt" % ", ".join(sorted(unknown)))
    failed = False
    for name, file in units:
        if args.units and name not in args.units:
            continue
        rc, log, cubin = compile_unit(nv, args.dir, file, args.arch, args.ptxas_v, args.define)
        print("%s (%s): %s" % (name, file, "OK" if rc == 0 else "FAILED (%d)" % rc))
        if log.strip():
            print(log)
        failed |= rc != 0
        if args.ptx and rc == 0:
            os.makedirs(args.ptx, exist_ok=True)
            _, _, ptx = compile_unit(nv, args.dir, file, "compute_" + args.arch.split("_", 1)[1], defines=args.define)
            open(os.path.join(args.ptx, name + ".ptx"), "w").write(ptx)
        if args.sass and rc == 0:
            os.makedirs(args.sass, exist_ok=True)
            out = os.path.join(args.sass, name)
            open(out + ".cubin", "wb").write(cubin)
            if args.nvdisasm:
                with open(out + ".sass", "w") as f:
                    subprocess.run([args.nvdisasm, "-c", "-g", out + ".cubin"], stdout=f, check=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
