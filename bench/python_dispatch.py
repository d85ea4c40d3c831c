#!/usr/bin/env python3
"""Per-call overhead of the Python package over the C++ library, warm, on the
same device: xor of n u32 (examples/xor.json, the program of
bench/gpu_dispatch_bench.cpp) through

  kernel.into(a=, b=, out={"out": array})   against C++ Pipeline::dispatch_into
  kernel(a=, b=, sizes={"out": n})          against C++ Pipeline::dispatch_into and Pipeline::dispatch

for n = 2^10, 2^16, 2^20. The C++ figures come from build/bench/gpu_dispatch_bench
(BM_DispatchInto, BM_Dispatch) run in the same invocation; C++ and Python
runs alternate, the order swapping rep after rep. Ratios are given of the
medians over reps and of the best rep of each side (steadier on a shared
machine, where other work lands on one side or the other). Prints JSON lines
{"name", "value", "unit"}: microseconds a call, and the ratios.

    PYTHONPATH=build/python .venv/bin/python bench/python_dispatch.py --build build [--reps 3] [--seconds 1]
        [--vyre-lib DIR]

--vyre-lib gives gpu_dispatch_bench a library folder (LD_LIBRARY_PATH), for a
packaged build whose libraries travel beside it (scripts/h200/python).
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = (1 << 10, 1 << 16, 1 << 20)


def emit(name, value, unit):
    print(json.dumps({"name": name, "value": value, "unit": unit}), flush=True)


def cpp_figures(build, seconds, vyre_lib=None):
    """{(benchmark, n): microseconds a call} from gpu_dispatch_bench."""
    env = dict(os.environ, VYRE_LOG="warn")
    if vyre_lib:
        env["LD_LIBRARY_PATH"] = vyre_lib
    out = subprocess.run(
        [os.path.join(build, "bench", "gpu_dispatch_bench"), "--benchmark_filter=^BM_(DispatchInto|Dispatch)/",
         "--benchmark_format=json", f"--benchmark_min_time={seconds}"],
        capture_output=True, text=True, check=True, env=env).stdout
    figures = {}
    for b in json.loads(out)["benchmarks"]:
        name, n = b["name"].split("/")[:2]
        scale = {"us": 1.0, "ms": 1e3, "ns": 1e-3}[b["time_unit"]]
        figures[(name, int(n))] = b["real_time"] * scale
    return figures


def per_call_us(fn, seconds):
    fn()  # warm
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and calls >= 10:
            return elapsed / calls * 1e6


def python_figures(kernel, seconds):
    figures = {}
    for n in SIZES:
        a = np.full(n, 0x1234, np.uint32)
        b = np.full(n, 0xFF00, np.uint32)
        out = np.empty(n, np.uint32)
        figures[("into", n)] = per_call_us(lambda: kernel.into(a=a, b=b, out={"out": out}), seconds)
        figures[("call", n)] = per_call_us(lambda: kernel(a=a, b=b, sizes={"out": n}), seconds)
        assert np.all(out == (0x1234 ^ 0xFF00))
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.0, help="time per figure and rep")
    parser.add_argument("--vyre-lib", help="library folder for gpu_dispatch_bench (a packaged build: scripts/h200)")
    args = parser.parse_args()

    os.environ.setdefault("VYRE_AOT_CACHE_DIR", tempfile.mkdtemp(prefix="vyre-pydispatch-"))
    import vyre
    backend = vyre.Backend()
    kernel = backend.compile(vyre.Program.from_json(os.path.join(HERE, "..", "examples", "xor.json")))

    cpp, py = [], []
    for rep in range(args.reps):
        if rep % 2 == 0:
            cpp.append(cpp_figures(args.build, args.seconds, args.vyre_lib))
            py.append(python_figures(kernel, args.seconds))
        else:
            py.append(python_figures(kernel, args.seconds))
            cpp.append(cpp_figures(args.build, args.seconds, args.vyre_lib))
    emit("python_dispatch.adapter", backend.adapter["name"], "name")
    for how, pick in (("median", statistics.median), ("best", min)):
        fig = lambda runs, key: pick(r[key] for r in runs)  # noqa: E731
        for n in SIZES:
            into_cpp, dispatch_cpp = fig(cpp, ("BM_DispatchInto", n)), fig(cpp, ("BM_Dispatch", n))
            into_py, call_py = fig(py, ("into", n)), fig(py, ("call", n))
            p = f"python_dispatch.{how}.{n}"
            emit(f"{p}.cpp_dispatch_into_us", into_cpp, "us")
            emit(f"{p}.cpp_dispatch_us", dispatch_cpp, "us")
            emit(f"{p}.python_into_us", into_py, "us")
            emit(f"{p}.python_call_us", call_py, "us")
            emit(f"{p}.into_over_cpp_dispatch_into", into_py / into_cpp, "ratio")
            emit(f"{p}.call_over_cpp_dispatch_into", call_py / into_cpp, "ratio")
            emit(f"{p}.call_over_cpp_dispatch", call_py / dispatch_cpp, "ratio")


if __name__ == "__main__":
    main()
