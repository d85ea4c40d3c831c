#!/usr/bin/env python3
"""One fresh process's time to first result for saxpy through CuPy RawKernel.

Started by bench/ttfr.py, which passes the moment it started the process
(--spawn-ns, CLOCK_MONOTONIC) and sets CUPY_CACHE_DIR (cold: empty; warm:
filled by an earlier run). Prints one JSON object with each stage's time.
"""
import json
import sys
import time

T_MAIN = time.monotonic_ns()

from ttfr_stages import StageClock, arg  # noqa: E402  (after T_MAIN: its import is timed too)

SOURCE = r'''
extern "C" __global__ void saxpy(const float alpha, const float* x, float* y, const unsigned int n) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = alpha * x[i] + y[i];
}
'''


def main():
    spawn_ns = arg("--spawn-ns", 0)
    n = arg("--elements", 1 << 20)
    clock = StageClock()
    stage, stages = clock.stage, clock.stages

    import numpy as np
    stage("import_numpy")
    import cupy as cp
    stage("import")
    x = (np.arange(n, dtype=np.uint32) % 4096).astype(np.float32)
    y = np.ones(n, dtype=np.float32)
    stage("inputs")
    cp.cuda.Device(0).use()
    cp.empty(1, dtype=cp.float32)  # the CUDA context and the memory pool
    cp.cuda.Device(0).synchronize()
    stage("context")
    kernel = cp.RawKernel(SOURCE, "saxpy")
    kernel.compile()  # NVRTC, or the kernel cache on disk
    stage("compile")
    dx = cp.asarray(x)
    dy = cp.asarray(y)
    cp.cuda.Device(0).synchronize()
    stage("upload")
    threads = 256
    kernel(((n + threads - 1) // threads,), (threads,), (np.float32(2.0), dx, dy, np.uint32(n)))
    cp.cuda.Device(0).synchronize()
    stage("dispatch")
    out = cp.asnumpy(dy)
    stage("readback")
    result_ns = time.monotonic_ns()
    ok = bool(np.array_equal(out[::997], (2.0 * x + 1.0)[::997]))
    print(json.dumps({
        "tool": "cupy", "program": "saxpy", "elements": n, "ok": ok,
        "first_result_ms": (result_ns - (spawn_ns or T_MAIN)) / 1e6,
        "stages_ms": {"process_start": (T_MAIN - spawn_ns) / 1e6 if spawn_ns else 0.0, **stages},
        "versions": {"cupy": cp.__version__},
    }), flush=True)
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
