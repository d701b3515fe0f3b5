#!/usr/bin/env python3
"""How long NVRTC takes to compile one kernel under different options, and
how large the CUBIN is: the data behind the cold-first-call work (issue 2).

    python3 bench/nvrtc_options_probe.py kernel.cu [sm_90]

kernel.cu is a generated kernel (`gpukit dump examples/black_scholes.gk`).
Each option set is compiled 3 times after one warm-up; the median is shown.
"""
import ctypes
import statistics
import sys
import time

lib = ctypes.CDLL("libnvrtc.so.13")
src = open(sys.argv[1]).read().encode()
arch = sys.argv[2] if len(sys.argv) > 2 else "sm_90"


def compile_once(opts):
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"k.cu", 0, None, None) == 0
    argv = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    t0 = time.perf_counter()
    result = lib.nvrtcCompileProgram(prog, len(opts), argv)
    ms = (time.perf_counter() - t0) * 1e3
    size = ctypes.c_size_t()
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return result, ms, size.value


base = [f"--gpu-architecture={arch}", "-std=c++17", "-default-device", "--fmad=false"]
compile_once(base)
for label, extra in [("default", []), ("--Ofast-compile=max", ["--Ofast-compile=max"]),
                     ("--Ofast-compile=mid", ["--Ofast-compile=mid"]),
                     ("--Ofast-compile=min", ["--Ofast-compile=min"]),
                     ("PTX only (compute_)", None)]:
    opts = base + extra if extra is not None else [f"--gpu-architecture=compute_{arch[3:]}"] + base[1:]
    runs = [compile_once(opts) for _ in range(3)]
    print(f"{label:<24} {statistics.median(r[1] for r in runs):7.1f} ms  cubin {runs[0][2]:6d} bytes  rc {runs[0][0]}")
