#!/usr/bin/env python3
"""One fresh Python process's time to first result for saxpy through the vyre
package: bench/first_result.cpp's program, inputs, grid and check, from Python.

Started by bench/ttfr.py (tool vyre-python), which passes the moment it
started the process (--spawn-ns, CLOCK_MONOTONIC), so the interpreter's own
start is in the figure, and sets VYRE_AOT_CACHE_DIR (cold: empty; warm:
filled by the cold run) and PYTHONPATH (the package under test). Prints one
JSON object with each stage's time.

With --kernel the program is the @vyre.kernel below instead of the JSON
dict: the same program (one digest, one cache entry), translated from the
function's source in this process (tool vyre-python-kernel), so the two
tools' figures differ by what the decorator costs a fresh process.
"""
import json
import os
import sys
import time

T_MAIN = time.monotonic_ns()

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
from ttfr_stages import StageClock, arg  # noqa: E402  (after T_MAIN: its import is timed too)

WORKGROUP = 256  # bench/support/bench_programs.hpp kSaxpyWorkgroup


def gid_flat():
    # i = gid.x + gid.y * nwg.x * 256, as vyre::bench::saxpy_program()
    return {"add": [{"gid": "x"}, {"mul": [{"gid": "y"}, {"mul": [{"nwg": "x"}, {"u32": WORKGROUP}]}]}]}


SAXPY = {
    "vyre": 1, "name": "saxpy", "workgroup_size": [WORKGROUP, 1, 1],
    "buffers": [
        {"name": "alpha", "binding": 0, "access": "uniform", "type": "f32", "count": 1},
        {"name": "x", "binding": 1, "access": "read", "type": "f32"},
        {"name": "y", "binding": 2, "access": "read_write", "type": "f32", "output": True},
    ],
    "body": [
        {"let": "i", "value": gid_flat()},
        {"if": {"lt": [{"var": "i"}, {"len": "y"}]}, "then": [
            {"store": "y", "index": {"var": "i"},
             "value": {"add": [{"mul": [{"load": "alpha", "index": {"u32": 0}}, {"load": "x", "index": {"var": "i"}}]},
                               {"load": "y", "index": {"var": "i"}}]}}]},
    ],
}


def saxpy_kernel():
    """SAXPY as a Python kernel. vyre becomes a global here, where the kernel's names are looked up,
    and not at the top of the file, so that main times its import."""
    global vyre
    import vyre

    @vyre.kernel(workgroup=WORKGROUP)
    def saxpy(alpha: vyre.Uniform[vyre.f32, 1], x: vyre.In[vyre.f32], y: vyre.InOut[vyre.f32]):
        i = vyre.gid.x + vyre.gid.y * (vyre.num_workgroups.x * 256)
        if i < len(y):
            y[i] = alpha[0] * x[i] + y[i]

    return saxpy


def saxpy_grid(elements):
    groups = max(1, (elements + WORKGROUP - 1) // WORKGROUP)
    x = min(groups, 32768)
    return (x, (groups + x - 1) // x, 1)


def main():
    spawn_ns = arg("--spawn-ns", 0)
    n = arg("--elements", 1 << 20)
    clock = StageClock()
    stage, stages = clock.stage, clock.stages

    import numpy as np
    stage("import_numpy")
    import vyre
    stage("import")
    kernel_mode = "--kernel" in sys.argv
    program = saxpy_kernel().program if kernel_mode else vyre.Program.from_dict(SAXPY)
    stage("program")
    x = (np.arange(n, dtype=np.uint32) % 4096).astype(np.float32)
    y = np.ones(n, dtype=np.float32)
    stage("inputs")
    backend = vyre.Backend()
    stage("backend")
    kernel = backend.compile(program)
    stage("compile")
    out = kernel(alpha=2.0, x=x, y=y, grid=saxpy_grid(n))["y"]
    stage("dispatch")
    result_ns = time.monotonic_ns()
    ok = bool(np.array_equal(out[::997], (2.0 * x + 1.0)[::997]))
    print(json.dumps({
        "tool": "vyre-python-kernel" if kernel_mode else "vyre-python", "program": "saxpy",
        "digest": program.digest, "elements": n, "ok": ok, "cache_hit": kernel.cache_hit,
        "driver_cache_placed": vyre.cache.place_driver_cache()["active"],
        "first_result_ms": (result_ns - (spawn_ns or T_MAIN)) / 1e6,
        "stages_ms": {"process_start": (T_MAIN - spawn_ns) / 1e6 if spawn_ns else 0.0, **stages},
        "versions": {"vyre": vyre.__version__, "numpy": np.__version__},
    }), flush=True)
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
