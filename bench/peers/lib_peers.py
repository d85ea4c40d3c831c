#!/usr/bin/env python3
"""The peers of vyre's standard kernels (docs/benchmarks.md, "Standard kernels"), for the same
sizes as bench/lib_figures: CUDA's device-to-device copy (the bandwidth ceiling), cupy.sum of
f32, cupy.cumsum of u32 (in u32) and cupy.sort of u32, timed with CUDA events; or, with
--numpy, NumPy's sum, cumsum and stable sort on the host. Prints JSON lines {"name", "value", "unit"}.

    lib_peers.py [--numpy] [--log2 N]     default 2^28 (sort: 2^26)
"""
import json
import statistics
import sys
import time


def arg(name, default):
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def emit(name, value, unit):
    print(json.dumps({"name": name, "value": round(value, 6), "unit": unit}), flush=True)


def cupy_figures(log2n):
    import cupy as cp
    n = 1 << log2n
    rng = cp.random.default_rng(1)
    xf = (rng.integers(0, 16, size=n, dtype=cp.uint32)).astype(cp.float32)
    xu = rng.integers(0, 256, size=n, dtype=cp.uint32)
    dst = cp.empty_like(xu)

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

    copy = events_ms(lambda: cp.cuda.runtime.memcpy(dst.data.ptr, xu.data.ptr, n * 4, 3))  # device to device
    emit("cuda_copy_ms", copy, "ms")
    emit("cuda_copy_gbs", 2 * n * 4 / copy / 1e6, "GB/s (N*4 read + N*4 written / time)")
    s = events_ms(lambda: cp.sum(xf))
    emit("cupy_sum_f32_ms", s, "ms")
    emit("cupy_sum_f32_gbs", n * 4 / s / 1e6, "GB/s (N*4 read / time)")
    c = events_ms(lambda: cp.cumsum(xu, dtype=cp.uint32))
    emit("cupy_cumsum_u32_ms", c, "ms")
    emit("cupy_cumsum_u32_gbs", 2 * n * 4 / c / 1e6, "GB/s (N*4 read + N*4 written / time)")
    keys = xu[: 1 << (log2n - 2)] * cp.uint32(2654435761)
    t = events_ms(lambda: cp.sort(keys), reps=10)
    emit("cupy_sort_u32_2^%d_ms" % (log2n - 2), t, "ms")
    emit("cupy_sort_u32_2^%d_gkeys" % (log2n - 2), keys.size / t / 1e6, "Gkeys/s")


def numpy_figures(log2n):
    import numpy as np
    n = 1 << log2n
    rng = np.random.default_rng(1)
    xf = rng.integers(0, 16, size=n, dtype=np.uint32).astype(np.float32)
    xu = rng.integers(0, 256, size=n, dtype=np.uint32)

    def wall_ms(f, reps=5):
        f()
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            f()
            times.append((time.perf_counter() - t) * 1e3)
        return statistics.median(times)

    emit("numpy_sum_f32_ms", wall_ms(lambda: np.sum(xf)), "ms")
    emit("numpy_cumsum_u32_ms", wall_ms(lambda: np.cumsum(xu, dtype=np.uint32)), "ms")
    keys = xu[: n // 4] * np.uint32(2654435761)
    emit("numpy_sort_u32_ms", wall_ms(lambda: np.sort(keys, kind="stable")), "ms")


if __name__ == "__main__":
    if "--numpy" in sys.argv:
        numpy_figures(arg("--log2", 22))
    else:
        cupy_figures(arg("--log2", 28))
