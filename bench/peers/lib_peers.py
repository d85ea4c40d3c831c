#!/usr/bin/env python3
"""The peers of vyre's standard kernels (docs/benchmarks.md, "Standard kernels"), at the sizes of
bench/lib_figures (--quick for lavapipe's): CUDA's device-to-device copy (the bandwidth ceiling)
and CuPy's sum, cumsum, sort, histogram, boolean-mask compaction, matmul (cuBLAS SGEMM, TF32 off),
transpose and softmax, timed with CUDA events; or, with --numpy, NumPy's on the host. Prints JSON
lines {"name", "value", "unit"}. find has no CuPy or NumPy peer.

    lib_peers.py [--numpy] [--quick]
"""
import json
import os
import statistics
import sys
import time

H200 = dict(log2_reduce=28, log2_sort=26, matmul=4096, transpose=8192, softmax_rows=65536, softmax_cols=1024)
QUICK = dict(log2_reduce=22, log2_sort=20, matmul=512, transpose=2048, softmax_rows=4096, softmax_cols=1024)


def emit(name, value, unit):
    print(json.dumps({"name": name, "value": round(value, 6), "unit": unit}), flush=True)


def figures(xp, timed, sizes, prefix):
    """The same inputs as lib_figures (their values, not their bits: a different generator)."""
    n = 1 << sizes["log2_reduce"]
    rng = xp.random.default_rng(1)
    xu = rng.integers(0, 256, size=n, dtype=xp.uint32)
    xf = (xu & 0xF).astype(xp.float32)
    if prefix == "cupy":
        dst = xp.empty_like(xu)
        copy = timed(lambda: xp.cuda.runtime.memcpy(dst.data.ptr, xu.data.ptr, n * 4, 3))  # device to device
        emit("cuda_copy_ms", copy, "ms")
        emit("cuda_copy_gbs", 2 * n * 4 / copy / 1e6, "GB/s (N*4 read + N*4 written / time)")
    t = timed(lambda: xp.sum(xf))
    emit(f"{prefix}_sum_f32_ms", t, "ms")
    emit(f"{prefix}_sum_f32_gbs", n * 4 / t / 1e6, "GB/s (N*4 read / time)")
    t = timed(lambda: xp.cumsum(xu, dtype=xp.uint32))
    emit(f"{prefix}_cumsum_u32_ms", t, "ms")
    emit(f"{prefix}_cumsum_u32_gbs", 2 * n * 4 / t / 1e6, "GB/s (N*4 read + N*4 written / time)")
    keys = xu[: 1 << sizes["log2_sort"]] * xp.uint32(2654435761)
    t = timed(lambda: xp.sort(keys, kind="stable") if prefix == "numpy" else xp.sort(keys))
    emit(f"{prefix}_sort_u32_ms", t, "ms")
    emit(f"{prefix}_sort_u32_gkeys", keys.size / t / 1e6, "Gkeys/s")
    t = timed(lambda: xp.histogram(xf, bins=256, range=(0.0, 16.0)))
    emit(f"{prefix}_histogram_f32_256_ms", t, "ms")
    mask = (xu & 1).astype(xp.bool_)
    t = timed(lambda: xu[mask])
    emit(f"{prefix}_compact_u32_ms", t, "ms")
    d = sizes["matmul"]
    a = (rng.integers(0, 17, size=(d, d)) - 8).astype(xp.float32)
    b = (rng.integers(0, 17, size=(d, d)) - 8).astype(xp.float32)
    t = timed(lambda: xp.matmul(a, b))
    emit(f"{prefix}_matmul_f32_ms", t, "ms")
    emit(f"{prefix}_matmul_f32_tflops", 2 * d ** 3 / t / 1e9, "TFLOP/s (2 M N K / time)")
    s = sizes["transpose"]
    x = xp.arange(s * s, dtype=xp.float32).reshape(s, s)
    t = timed(lambda: xp.ascontiguousarray(x.T))
    emit(f"{prefix}_transpose_f32_ms", t, "ms")
    emit(f"{prefix}_transpose_f32_gbs", 8 * s * s / t / 1e6, "GB/s (N*4 read + N*4 written / time)")
    rows, cols = sizes["softmax_rows"], sizes["softmax_cols"]
    xs = (rng.integers(0, 2001, size=(rows, cols)) / 100 - 10).astype(xp.float32)

    def softmax():
        e = xp.exp(xs - xs.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    t = timed(softmax)
    emit(f"{prefix}_softmax_f32_ms", t, "ms")


def cupy_figures(sizes):
    os.environ.setdefault("CUPY_TF32", "0")  # SGEMM in full f32, as the goal says (read at import)
    import cupy as cp

    def events_ms(f, reps=20):
        f(), f()
        times = []
        for _ in range(reps):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            f()
            end.record()
            end.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, end))
        return statistics.median(times)

    figures(cp, events_ms, sizes, "cupy")


def numpy_figures(sizes):
    import numpy as np

    def wall_ms(f, reps=5):
        f()
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            f()
            times.append((time.perf_counter() - t) * 1e3)
        return statistics.median(times)

    figures(np, wall_ms, sizes, "numpy")


if __name__ == "__main__":
    sizes = QUICK if "--quick" in sys.argv else H200
    if "--numpy" in sys.argv:
        numpy_figures(sizes)
    else:
        cupy_figures(sizes)
