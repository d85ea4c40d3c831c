#!/usr/bin/env python3
"""Time to first result of `vyre run --tune` in fresh processes: an empty
cache (tuning runs and its record is written) against the cache that run
filled (the record is read back; nothing is timed). This is the tuning cost
the cache removes from every later process.

The driver's own shader caches are off in every run (MESA_SHADER_CACHE_DISABLE,
__GL_SHADER_DISK_CACHE=0, VYRE_DRIVER_CACHE=0), so the warm run's gain is
vyre's cache alone. Cold and warm alternate rep after rep; medians are
reported, of the first result as `vyre run --report-json` times it (process
start to outputs in memory, before printing) and of each process's wall time.
Also, in the same loop, the warm run without --tune (the program's own
configuration, its WGSL from the same cache), for what a tuned warm start
costs over an untuned one. Prints JSON lines {"name", "value", "unit"}.

    bench/tune_ttfr.py --vyre build/vyre [--reps 5] [--programs saxpy,matmul]
                       [--elements 2097152] [--matmul 256]
"""
import argparse
import json
import os
import random
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

MATMUL = {
    "vyre": 1, "name": "matmul", "workgroup_size": [8, 8, 1],
    "buffers": [
        {"name": "dims", "binding": 0, "access": "uniform", "type": "u32", "count": 3},
        {"name": "a", "binding": 1, "access": "read", "type": "f32"},
        {"name": "b", "binding": 2, "access": "read", "type": "f32"},
        {"name": "c", "binding": 3, "access": "read_write", "type": "f32", "output": True},
    ],
    "body": [
        {"let": "col", "value": {"gid": "x"}},
        {"let": "row", "value": {"gid": "y"}},
        {"if": {"land": [{"lt": [{"var": "row"}, {"load": "dims", "index": {"u32": 0}}]},
                         {"lt": [{"var": "col"}, {"load": "dims", "index": {"u32": 1}}]}]},
         "then": [
             {"let": "s", "value": {"f32": 0.0}},
             {"loop": "k", "from": {"u32": 0}, "to": {"load": "dims", "index": {"u32": 2}}, "body": [
                 {"assign": "s", "value": {"fma": [
                     {"load": "a", "index": {"add": [{"mul": [{"var": "row"}, {"load": "dims", "index": {"u32": 2}}]},
                                                     {"var": "k"}]}},
                     {"load": "b", "index": {"add": [{"mul": [{"var": "k"}, {"load": "dims", "index": {"u32": 1}}]},
                                                     {"var": "col"}]}},
                     {"var": "s"}]}}]},
             {"store": "c", "index": {"add": [{"mul": [{"var": "row"}, {"load": "dims", "index": {"u32": 1}}]},
                                              {"var": "col"}]},
              "value": {"var": "s"}}]},
    ],
}


def floats_file(path, n, seed):
    # A random block of 64 Ki values, repeated: large files without minutes of Python.
    rng = random.Random(seed)
    block = struct.pack("<%df" % min(n, 1 << 16), *[rng.uniform(-1, 1) for _ in range(min(n, 1 << 16))])
    with open(path, "wb") as f:
        left = n * 4
        while left > 0:
            f.write(block[:left])
            left -= len(block)


def emit(name, value, unit):
    print(json.dumps({"name": name, "value": value, "unit": unit}), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vyre", required=True, help="the vyre command-line program")
    ap.add_argument("--examples", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--programs", default="saxpy,matmul")
    ap.add_argument("--elements", type=int, default=1 << 21, help="saxpy's length")
    ap.add_argument("--matmul", type=int, default=256, help="the matrices' side (a multiple of 8)")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="vyre-tune-ttfr-")
    try:
        runs = {}
        n = args.elements
        floats_file(os.path.join(work, "x.bin"), n, 1)
        floats_file(os.path.join(work, "y.bin"), n, 2)
        runs["saxpy"] = [os.path.join(args.examples, "saxpy.json"), "--input", "alpha=2", "--input",
                         "x=@" + os.path.join(work, "x.bin"), "--input", "y=@" + os.path.join(work, "y.bin"),
                         "--size", "out=%d" % n]
        m = args.matmul
        with open(os.path.join(work, "matmul.json"), "w") as f:
            json.dump(MATMUL, f)
        floats_file(os.path.join(work, "a.bin"), m * m, 3)
        floats_file(os.path.join(work, "b.bin"), m * m, 4)
        runs["matmul"] = [os.path.join(work, "matmul.json"), "--input", "dims=%d,%d,%d" % (m, m, m), "--input",
                          "a=@" + os.path.join(work, "a.bin"), "--input", "b=@" + os.path.join(work, "b.bin"),
                          "--size", "c=%d" % (m * m), "--grid", "%d,%d,1" % (m // 8, m // 8)]
        env = dict(os.environ, MESA_SHADER_CACHE_DISABLE="true", __GL_SHADER_DISK_CACHE="0", VYRE_DRIVER_CACHE="0")

        def run(name, cache, tune):
            report = os.path.join(work, "report.json")
            cmd = [args.vyre, "run"] + runs[name] + ["--report-json", report] + (["--tune"] if tune else [])
            start = time.monotonic()
            done = subprocess.run(cmd, env=dict(env, VYRE_AOT_CACHE_DIR=cache), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
            wall = (time.monotonic() - start) * 1e3
            if done.returncode != 0:
                sys.exit("vyre run failed (%d): %s" % (done.returncode, done.stderr))
            with open(report) as f:
                r = json.load(f)
            return r, wall

        for name in args.programs.split(","):
            cold, warm, untuned, cold_wall, warm_wall, tuning = [], [], [], [], [], []
            cold_stages, warm_stages = [], []
            for rep in range(args.reps):
                cache = os.path.join(work, "cache-%s-%d" % (name, rep))
                r, wall = run(name, cache, True)
                if r["tuning"]["reused"]:
                    sys.exit("a cold run found a tuning record")
                cold.append(r["timings_ms"]["total"])
                cold_stages.append(r["timings_ms"])
                cold_wall.append(wall)
                tuning.append(r["tuning"]["tuning_ms"])
                r, wall = run(name, cache, True)
                chosen = r
                if not r["tuning"]["reused"]:
                    sys.exit("a warm run did not find the tuning record")
                warm.append(r["timings_ms"]["total"])
                warm_stages.append(r["timings_ms"])
                warm_wall.append(wall)
                r, _ = run(name, cache, False)
                untuned.append(r["timings_ms"]["total"])
                shutil.rmtree(cache, ignore_errors=True)
            med = statistics.median
            p = "tune_ttfr." + name
            emit(p + ".cold_ms", med(cold), "ms")
            emit(p + ".warm_ms", med(warm), "ms")
            emit(p + ".warm_over_cold", med(warm) / med(cold), "x")
            emit(p + ".wall_warm_over_cold", med(warm_wall) / med(cold_wall), "x")
            emit(p + ".tuning_ms", med(tuning), "ms")
            emit(p + ".untuned_warm_ms", med(untuned), "ms")
            # Where the time goes: each stage's median, cold and warm.
            for stage in cold_stages[0]:
                emit(p + ".cold_stage." + stage, med([t[stage] for t in cold_stages]), "ms")
                emit(p + ".warm_stage." + stage, med([t[stage] for t in warm_stages]), "ms")
            emit(p + ".chosen", "workgroup %s, %d per invocation" % (
                "x".join(str(v) for v in chosen["workgroup"]), chosen["vector_width"]), "")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
