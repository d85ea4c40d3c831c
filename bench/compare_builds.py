#!/usr/bin/env python3
"""Two builds of bench/first_result side by side, alternating in one run: the
large program (a chain of --statements statements) cold, with vyre's cache
empty and the driver's cache off in every run (MESA_SHADER_CACHE_DISABLE,
__GL_SHADER_DISK_CACHE=0, VYRE_DRIVER_CACHE=0), so that what differs is what
the two builds hand naga and the driver. Prints JSON lines: each build's
median of every stage, and B over A for the first result, the shader module
(naga) and the pipeline (the driver).

    bench/compare_builds.py A/first_result B/first_result [--reps 4] [--statements 5000] [--lib DIR]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile


def run(binary, statements, lib):
    cache = tempfile.mkdtemp(prefix="vyre-ab-")
    env = dict(os.environ)
    env.update({"VYRE_AOT_CACHE_DIR": cache, "VYRE_LOG": "warn", "VYRE_DRIVER_CACHE": "0",
                "MESA_SHADER_CACHE_DISABLE": "true", "__GL_SHADER_DISK_CACHE": "0"})
    if lib:
        env["LD_LIBRARY_PATH"] = lib
    try:
        proc = subprocess.run([binary, "--program", "chain", "--statements", str(statements), "--elements", "4096"],
                              env=env, capture_output=True, text=True, check=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    record = json.loads([line for line in proc.stdout.splitlines() if line.startswith("{")][-1])
    if not record["ok"]:
        raise RuntimeError(f"{binary} gave a wrong result")
    return record


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--reps", type=int, default=4)
    parser.add_argument("--statements", type=int, default=5000)
    parser.add_argument("--lib", help="LD_LIBRARY_PATH for both (a packaged build)")
    args = parser.parse_args()
    records = {"a": [], "b": []}
    for rep in range(args.reps):
        for side in (("a", "b") if rep % 2 == 0 else ("b", "a")):  # the order alternates
            records[side].append(run(getattr(args, side), args.statements, args.lib))
    medians = {}
    for side, runs in records.items():
        stages = {name: statistics.median(r["stages_ms"][name] for r in runs) for name in runs[0]["stages_ms"]}
        stages["first_result"] = statistics.median(r["first_result_ms"] for r in runs)
        medians[side] = stages
        for name, ms in stages.items():
            print(json.dumps({"name": f"{side}.{name}_ms", "value": ms, "unit": "ms"}))
    for name in ("first_result", "shader", "pipeline", "dispatch"):
        print(json.dumps({"name": f"b_over_a.{name}", "value": medians["b"][name] / medians["a"][name], "unit": "ratio"}))
    print(json.dumps({"name": "statements", "value": args.statements, "unit": "count"}))


if __name__ == "__main__":
    main()
