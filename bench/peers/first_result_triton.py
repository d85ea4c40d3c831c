#!/usr/bin/env python3
"""One fresh process's time to first result for saxpy through Triton.

Started by bench/ttfr.py, which passes the moment it started the process
(--spawn-ns, CLOCK_MONOTONIC) and sets TRITON_CACHE_DIR (cold: empty; warm:
filled by an earlier run). Triton launches on PyTorch tensors, the way it
is used. Prints one JSON object with each stage's time.
"""
import json
import sys
import time

T_MAIN = time.monotonic_ns()

from ttfr_stages import StageClock, arg  # noqa: E402  (after T_MAIN: its import is timed too)


def main():
    spawn_ns = arg("--spawn-ns", 0)
    n = arg("--elements", 1 << 20)
    clock = StageClock()
    stage, stages = clock.stage, clock.stages

    import numpy as np
    stage("import_numpy")
    import torch
    import triton
    from triton_saxpy_kernel import saxpy
    stage("import")

    x = (np.arange(n, dtype=np.uint32) % 4096).astype(np.float32)
    y = np.ones(n, dtype=np.float32)
    stage("inputs")
    torch.empty(1, device="cuda")  # the CUDA context
    torch.cuda.synchronize()
    stage("context")
    dx = torch.from_numpy(x).cuda()
    dy = torch.from_numpy(y).cuda()
    torch.cuda.synchronize()
    stage("upload")
    block = 1024
    grid = (triton.cdiv(n, block),)
    compiled_apart = True
    try:
        saxpy.warmup(dx, dy, 2.0, n, BLOCK=block, grid=grid)  # compile (or the cache on disk), no launch
    except Exception:  # older Triton: the first launch compiles
        compiled_apart = False
    stage("compile")
    saxpy[grid](dx, dy, 2.0, n, BLOCK=block)
    torch.cuda.synchronize()
    stage("dispatch")
    out = dy.cpu().numpy()
    stage("readback")
    result_ns = time.monotonic_ns()
    ok = bool(np.array_equal(out[::997], (2.0 * x + 1.0)[::997]))
    print(json.dumps({
        "tool": "triton", "program": "saxpy", "elements": n, "ok": ok, "compiled_apart": compiled_apart,
        "first_result_ms": (result_ns - (spawn_ns or T_MAIN)) / 1e6,
        "stages_ms": {"process_start": (T_MAIN - spawn_ns) / 1e6 if spawn_ns else 0.0, **stages},
        "versions": {"triton": triton.__version__, "torch": torch.__version__},
    }), flush=True)
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
