#!/usr/bin/env python3
"""Is NVRTC's first compile of a source slow only once per machine? Compiles
the same kernel under fresh entry-point names (new source text each time)
and under a repeated one, alternately, and prints each time:

    python3 bench/nvrtc_novel_probe.py kernel.cu [sm_90]
"""
import ctypes
import os
import sys
import time

lib = ctypes.CDLL("libnvrtc.so.13")
base_src = open(sys.argv[1]).read()
arch = sys.argv[2] if len(sys.argv) > 2 else "sm_90"
opts = [f"--gpu-architecture={arch}", "-std=c++17", "-default-device", "--fmad=false"]


def compile_ms(src):
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"k.cu", 0, None, None) == 0
    argv = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    t0 = time.perf_counter()
    rc = lib.nvrtcCompileProgram(prog, len(opts), argv)
    ms = (time.perf_counter() - t0) * 1e3
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc, ms


name = base_src.split("__launch_bounds__(256)\n")[1].split("(")[0].strip()
print("first ever in this process (repeated source):", compile_ms(base_src))
for k in range(4):
    novel = base_src.replace(name, f"{name}_{os.getpid()}_{k}")
    print(f"novel source {k}: {compile_ms(novel)}   repeated source: {compile_ms(base_src)}")
for d in ["~/.nv", "~/.cache", "/tmp"]:
    p = os.path.expanduser(d)
    if os.path.isdir(p):
        print(d, sorted(os.listdir(p))[:12])
