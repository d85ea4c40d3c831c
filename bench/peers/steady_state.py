#!/usr/bin/env python3
"""Steady-state saxpy (y = a x + y, in place, float32) through CuPy RawKernel
and Triton, and a device-to-device copy, on one GPU. Prints JSON lines
{"name", "value", "unit"}.

Two timings each: the kernel alone (CUDA events around one launch, median
of many) and the wall time of a run of launches waited for once, divided by
their number (what vyre's batched figure measures).

    python3 bench/peers/steady_state.py [--mib 256] [--reps 50]
"""
import json
import statistics
import sys
import time


def emit(name, value, unit):
    print(json.dumps({"name": name, "value": value, "unit": unit}), flush=True)


def arg(name, default):
    return type(default)(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def timed(launch, sync, event_pair, reps, batch):
    """(median kernel ms by events, batched wall ms per launch)."""
    for _ in range(5):
        launch()
    sync()
    kernel = []
    for _ in range(reps):
        start, end = event_pair()
        start.record()
        launch()
        end.record()
        end.synchronize()
        kernel.append(start_end_ms(start, end))
    walls = []
    for _ in range(5):
        sync()
        t = time.perf_counter()
        for _ in range(batch):
            launch()
        sync()
        walls.append((time.perf_counter() - t) * 1e3 / batch)
    return statistics.median(kernel), statistics.median(walls)


def start_end_ms(start, end):
    try:
        return start.elapsed_time(end)  # torch
    except AttributeError:
        import cupy as cp
        return cp.cuda.get_elapsed_time(start, end)


def main():
    mib = arg("--mib", 256)
    reps = arg("--reps", 50)
    batch = arg("--batch", 20)
    n = mib * (1 << 20) // 4
    moved = 3 * n * 4  # x read, y read, y written

    import numpy as np
    import cupy as cp
    x = cp.asarray((np.arange(n, dtype=np.uint32) % 4096).astype(np.float32))
    y = cp.ones(n, dtype=cp.float32)
    y0 = y.copy()
    source = r'''
    extern "C" __global__ void saxpy(const float alpha, const float* x, float* y, const unsigned int n) {
      unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) y[i] = alpha * x[i] + y[i];
    }'''
    kernel = cp.RawKernel(source, "saxpy")
    threads = 256
    blocks = (n + threads - 1) // threads
    count = [0]

    def cupy_launch():
        kernel((blocks,), (threads,), (np.float32(0.5), x, y, np.uint32(n)))
        count[0] += 1

    sync = cp.cuda.Device(0).synchronize
    events = lambda: (cp.cuda.Event(), cp.cuda.Event())
    k_ms, w_ms = timed(cupy_launch, sync, events, reps, batch)
    expected = y0[:: 4099] + 0.5 * count[0] * x[:: 4099]
    emit("cupy_saxpy_ok", bool(cp.allclose(y[:: 4099], expected, rtol=1e-6)), "")
    emit("cupy_saxpy_kernel_ms", k_ms, "ms")
    emit("cupy_saxpy_batched_ms", w_ms, "ms")
    emit("cupy_saxpy_kernel_gbps", moved / (k_ms / 1e3) / 1e9, "GB/s")

    dst = cp.empty_like(x)

    def copy():
        dst[...] = x  # cudaMemcpyAsync device to device

    c_ms, cw_ms = timed(copy, sync, events, reps, batch)
    emit("cuda_copy_kernel_ms", c_ms, "ms")
    emit("cuda_copy_gbps", 2 * n * 4 / (c_ms / 1e3) / 1e9, "GB/s")
    emit("cupy_saxpy_share_of_copy", (moved / k_ms) / (2 * n * 4 / c_ms), "ratio")
    del dst

    import torch
    from triton_saxpy_kernel import saxpy
    tx = torch.from_dlpack(x)
    ty = torch.from_dlpack(y)
    block = 1024
    grid = ((n + block - 1) // block,)
    tcount = [0]
    before = ty.clone()

    def triton_launch():
        saxpy[grid](tx, ty, 0.5, n, BLOCK=block)
        tcount[0] += 1

    tevents = lambda: (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
    tk_ms, tw_ms = timed(triton_launch, torch.cuda.synchronize, tevents, reps, batch)
    texpected = before[::4099] + 0.5 * tcount[0] * tx[::4099]
    emit("triton_saxpy_ok", bool(torch.allclose(ty[::4099], texpected, rtol=1e-6)), "")
    emit("triton_saxpy_kernel_ms", tk_ms, "ms")
    emit("triton_saxpy_batched_ms", tw_ms, "ms")
    emit("triton_saxpy_kernel_gbps", moved / (tk_ms / 1e3) / 1e9, "GB/s")
    emit("saxpy_vector_mib", mib, "MiB")


if __name__ == "__main__":
    main()
