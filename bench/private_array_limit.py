#!/usr/bin/env python3
"""What a private array's size costs: a program whose invocations each
declare an N-element u32 private array, store 16 elements and load 16 at
computed indices, run by `vyre run` in a fresh process with an empty cache,
for each N. The outputs are checked against the reference interpreter before
a time counts. Prints JSON lines {"name", "value", "unit"}: the shader and
pipeline creation (compile) and the dispatch of one workgroup of 64, in ms
(vyre's own stage timings, --report-json; median of reps), and each as a
ratio to N = 16. The figures set the format's limit on private elements
(docs/program-format.md, "Limits").

    bench/private_array_limit.py [--vyre build/vyre] [--reps 3] [--sizes 16,256,1024,4096]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

INVOCATIONS = 64
ACCESSES = 16


def program(n):
    idx = {"rem": [{"add": [{"mul": [{"var": "i"}, {"u32": 7}]}, {"var": "k"}]}, {"u32": n}]}
    return {
        "vyre": 4, "name": f"private_{n}", "workgroup_size": [64, 1, 1],
        "buffers": [{"name": "out", "binding": 0, "access": "read_write", "type": "u32", "output": True}],
        "body": [
            {"let": "i", "value": {"gid": "x"}},
            {"array": "a", "type": "u32", "count": n},
            {"loop": "k", "from": {"u32": 0}, "to": {"u32": ACCESSES},
             "body": [{"store": "a", "index": idx, "value": {"add": [{"var": "k"}, {"var": "i"}]}}]},
            {"let": "s", "value": {"u32": 0}},
            {"loop": "k", "from": {"u32": 0}, "to": {"u32": ACCESSES},
             "body": [{"assign": "s", "value": {"xor": [{"mul": [{"var": "s"}, {"u32": 31}]},
                                                          {"load": "a", "index": {"rem": [{"mul": [{"var": "k"}, {"u32": 13}]}, {"u32": n}]}}]}}]},
            {"store": "out", "index": {"var": "i"}, "value": {"var": "s"}},
        ]}


def run(vyre, path, backend, cache):
    """The outputs, and the stage timings of a GPU run (ms)."""
    env = dict(os.environ, VYRE_AOT_CACHE_DIR=cache)
    report = os.path.join(cache + ".report.json")
    command = [vyre, "run", path, "--size", f"out={INVOCATIONS}", "--dim", str(INVOCATIONS), "--backend", backend]
    if backend == "gpu":
        command += ["--report-json", report]
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    timings = {}
    if backend == "gpu":
        with open(report) as f:
            timings = json.load(f)["timings_ms"]
    return timings, json.loads(out)["out"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vyre", default=os.path.join(os.path.dirname(__file__), "..", "build", "vyre"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sizes", default="16,256,1024,4096")
    args = ap.parse_args()
    base = {}
    with tempfile.TemporaryDirectory() as work:
        for n in (int(s) for s in args.sizes.split(",")):
            path = os.path.join(work, f"p{n}.json")
            with open(path, "w") as f:
                json.dump(program(n), f)
            _, want = run(args.vyre, path, "reference", os.path.join(work, "ref"))
            stages = {"compile": [], "dispatch": []}
            for r in range(args.reps):
                timings, got = run(args.vyre, path, "gpu", os.path.join(work, f"cache{n}_{r}"))
                if got != want:
                    raise SystemExit(f"N={n}: the GPU's outputs differ from the reference's")
                stages["compile"].append(timings["shader"] + timings["pipeline"])
                stages["dispatch"].append(timings["dispatch"])
            for stage, values in stages.items():
                ms = statistics.median(values)
                base.setdefault(stage, ms)
                print(json.dumps({"name": f"private_array_{n}_{stage}", "value": round(ms, 1), "unit": "ms"}), flush=True)
                print(json.dumps({"name": f"private_array_{n}_{stage}_vs_first", "value": round(ms / base[stage], 2),
                                  "unit": "x"}), flush=True)


if __name__ == "__main__":
    main()
