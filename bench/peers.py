#!/usr/bin/env python3
"""Times GPUkit's benchmark cases in the peers a user would otherwise pick:
PyTorch eager, torch.compile and CuPy (ElementwiseKernel / ReductionKernel).

Run on a GPU machine that has PyTorch and CuPy:
    python3 bench/peers.py --out peers.json
Every case is timed with CUDA events after a warm-up; the figure is the
median of the repetitions. Sizes match bench/elementwise_bench.cpp:
2^26 float32 elements (256 MiB per array, several times the L2), so the
bytes counted (each input read once, each output written once) set the
floor. The device-to-device copy measured in the same run is the ceiling.
"""
import argparse
import json
import math
import statistics
import sys

import torch

N = 1 << 26


def time_ms(fn, reps=50, warmup=10):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def black_scholes(s, x, t, r=0.02, v=0.30):
    sqrt_t = torch.sqrt(t)
    d1 = (torch.log(s / x) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    cnd = lambda d: 0.5 * (1.0 + torch.erf(d * 0.7071067811865476))
    e = torch.exp(-r * t)
    call = s * cnd(d1) - x * e * cnd(d2)
    put = x * e * cnd(-d2) - s * cnd(-d1)
    return call, put


def softmax_rows(x):
    m = x.amax(dim=1, keepdim=True)
    e = torch.exp(x - m)
    return e / e.sum(dim=1, keepdim=True)


def layernorm_rows(x, eps=1e-5):
    mean = x.mean(dim=1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=1, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--reps", type=int, default=50)
    args = ap.parse_args()

    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(1)
    rand = lambda *shape, lo=0.0, hi=1.0: torch.rand(*shape, device=dev, generator=g) * (hi - lo) + lo
    a, b = rand(N, lo=-1, hi=1), rand(N, lo=-1, hi=1)
    s, k, t = rand(N, lo=5, hi=30), rand(N, lo=1, hi=100), rand(N, lo=0.25, hi=10)
    out = torch.empty(N, device=dev)
    rows2d = rand(8192, 4096, lo=-4, hi=4)
    cols2d = rand(4096, 8192, lo=-1, hi=1)
    results = []

    def record(case, peer, ms, nbytes, ceiling=None):
        gbs = nbytes / ms / 1e6
        results.append({"case": case, "peer": peer, "ms": ms, "GBps": gbs})

    copy_ms = time_ms(lambda: out.copy_(a), args.reps)
    record("copy", "torch", copy_ms, 2 * 4 * N)
    copy_gbs = 2 * 4 * N / copy_ms / 1e6

    cases = {
        "saxpy_sin": (lambda: 2.0 * a + torch.sin(b), 3 * 4 * N),
        "gelu_tanh": (lambda: gelu_tanh(a), 2 * 4 * N),
        "black_scholes": (lambda: black_scholes(s, k, t), 5 * 4 * N),
        "sum_ab": (lambda: (a * b).sum(), 2 * 4 * N),
        "softmax_8192x4096": (lambda: softmax_rows(rows2d), 2 * 4 * rows2d.numel()),
        "layernorm_8192x4096": (lambda: layernorm_rows(rows2d), 2 * 4 * rows2d.numel()),
        "colsum_4096x8192": (lambda: cols2d.sum(dim=0), 4 * cols2d.numel()),
    }
    for name, (fn, nbytes) in cases.items():
        record(name, "torch eager", time_ms(fn, args.reps), nbytes)
        try:
            compiled = torch.compile(fn)
            record(name, "torch.compile", time_ms(compiled, args.reps), nbytes)
        except Exception as e:  # report, do not hide
            print(f"torch.compile failed on {name}: {e}", file=sys.stderr)

    try:
        import cupy as cp

        ca, cb = cp.asarray(a), cp.asarray(b)
        cs, ck, ct = cp.asarray(s), cp.asarray(k), cp.asarray(t)
        saxpy = cp.ElementwiseKernel("float32 a, float32 b", "float32 o", "o = 2.0f * a + sinf(b)", "gk_saxpy")
        gelu = cp.ElementwiseKernel(
            "float32 x", "float32 o",
            "o = 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)))", "gk_gelu")
        bs = cp.ElementwiseKernel(
            "float32 s, float32 x, float32 t", "float32 call, float32 put",
            """
            const float r = 0.02f, v = 0.30f;
            float sq = sqrtf(t);
            float d1 = (logf(s / x) + (r + 0.5f * v * v) * t) / (v * sq);
            float d2 = d1 - v * sq;
            float e = expf(-r * t);
            float c1 = 0.5f * (1.0f + erff(d1 * 0.70710678f));
            float c2 = 0.5f * (1.0f + erff(d2 * 0.70710678f));
            call = s * c1 - x * e * c2;
            put = x * e * (1.0f - c2) - s * (1.0f - c1);
            """, "gk_black_scholes")
        dot = cp.ReductionKernel("float32 x, float32 y", "float32 z", "x * y", "a + b", "z = a", "0", "gk_dot")
        co = cp.empty(N, dtype=cp.float32)
        co2 = cp.empty(N, dtype=cp.float32)
        cupy_cases = [
            ("saxpy_sin", lambda: saxpy(ca, cb, co), 3 * 4 * N),
            ("gelu_tanh", lambda: gelu(ca, co), 2 * 4 * N),
            ("black_scholes", lambda: bs(cs, ck, ct, co, co2), 5 * 4 * N),
            ("sum_ab", lambda: dot(ca, cb), 2 * 4 * N),
        ]
        for name, fn, nbytes in cupy_cases:
            try:
                record(name, "cupy", time_ms(fn, args.reps), nbytes)
            except Exception as e:  # report, do not hide
                print(f"cupy failed on {name}: {str(e)[:300]}", file=sys.stderr)
        tiny_cp = cp.ones(1, dtype=cp.float32)
        for _ in range(1000):
            tiny_cp += 1.0
        cp.cuda.Device().synchronize()
        samples = []
        import time
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(10000):
                tiny_cp += 1.0
            cp.cuda.Device().synchronize()
            samples.append((time.perf_counter() - t0) / 10000 * 1e6)
        results.append({"case": "tiny_op_dispatch", "peer": "cupy", "us": statistics.median(samples)})
    except ImportError as e:
        print(f"cupy not available: {e}", file=sys.stderr)

    # Per-op dispatch cost of a tiny elementwise operation (host-bound).
    tiny = torch.ones(1, device=dev)
    torch.cuda.synchronize()
    import time
    for peer, op in (("torch eager", lambda: tiny.add_(1.0)),):
        for _ in range(1000):
            op()
        torch.cuda.synchronize()
        samples = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(10000):
                op()
            torch.cuda.synchronize()
            samples.append((time.perf_counter() - t0) / 10000 * 1e6)
        results.append({"case": "tiny_op_dispatch", "peer": peer, "us": statistics.median(samples)})

    print(f"{'case':<22} {'peer':<14} {'ms':>9} {'GB/s':>8} {'% copy':>7}")
    for r in results:
        if "ms" in r:
            print(f"{r['case']:<22} {r['peer']:<14} {r['ms']:9.3f} {r['GBps']:8.0f} {100 * r['GBps'] / copy_gbs:6.1f}%")
        else:
            print(f"{r['case']:<22} {r['peer']:<14} {r['us']:8.2f} us/op")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "copy_GBps": copy_gbs, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
