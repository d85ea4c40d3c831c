#!/usr/bin/env python3
"""What a private array's size costs: a program whose invocations each fill
an N-element u32 private array and read it back at computed indices, run by
`vyre run` in a fresh process with an empty cache (so the time includes
lowering, shader creation and the pipeline), for each N. The outputs are
checked against the reference interpreter before a time counts. Prints JSON
lines {"name", "value", "unit"}: seconds of the whole run (median of reps) and
the ratio to N = 1. The figures set the format's limit on private elements
(docs/program-format.md, "Limits").

    bench/private_array_limit.py [--vyre build/vyre] [--reps 3] [--sizes 1,256,1024,4096,16384,65536]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

INVOCATIONS = 256


def program(n):
    idx = {"rem": [{"add": [{"mul": [{"var": "i"}, {"u32": 7}]}, {"var": "k"}]}, {"u32": n}]}
    return {
        "vyre": 4, "name": f"private_{n}", "workgroup_size": [64, 1, 1],
        "buffers": [{"name": "out", "binding": 0, "access": "read_write", "type": "u32", "output": True}],
        "body": [
            {"let": "i", "value": {"gid": "x"}},
            {"array": "a", "type": "u32", "count": n},
            {"loop": "k", "from": {"u32": 0}, "to": {"u32": n},
             "body": [{"store": "a", "index": idx, "value": {"add": [{"var": "k"}, {"var": "i"}]}}]},
            {"let": "s", "value": {"u32": 0}},
            {"loop": "k", "from": {"u32": 0}, "to": {"u32": n},
             "body": [{"assign": "s", "value": {"xor": [{"mul": [{"var": "s"}, {"u32": 31}]},
                                                          {"load": "a", "index": {"var": "k"}}]}}]},
            {"store": "out", "index": {"var": "i"}, "value": {"var": "s"}},
        ]}


def run(vyre, path, backend, cache):
    env = dict(os.environ, VYRE_AOT_CACHE_DIR=cache)
    start = time.perf_counter()
    out = subprocess.run([vyre, "run", path, "--size", f"out={INVOCATIONS}", "--dim", str(INVOCATIONS),
                          "--backend", backend], env=env, check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - start, json.loads(out)["out"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vyre", default=os.path.join(os.path.dirname(__file__), "..", "build", "vyre"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sizes", default="1,256,1024,4096,16384,65536")
    args = ap.parse_args()
    base = None
    with tempfile.TemporaryDirectory() as work:
        for n in (int(s) for s in args.sizes.split(",")):
            path = os.path.join(work, f"p{n}.json")
            with open(path, "w") as f:
                json.dump(program(n), f)
            _, want = run(args.vyre, path, "reference", os.path.join(work, "ref"))
            times = []
            for r in range(args.reps):
                seconds, got = run(args.vyre, path, "gpu", os.path.join(work, f"cache{n}_{r}"))
                if got != want:
                    raise SystemExit(f"N={n}: the GPU's outputs differ from the reference's")
                times.append(seconds)
            t = statistics.median(times)
            base = base or t
            print(json.dumps({"name": f"private_array_{n}_cold_run", "value": round(t, 3), "unit": "s"}), flush=True)
            print(json.dumps({"name": f"private_array_{n}_vs_1", "value": round(t / base, 2), "unit": "x"}), flush=True)


if __name__ == "__main__":
    main()
