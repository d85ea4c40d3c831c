#!/usr/bin/env python3
"""Bytes as they are (format version 4): counting the bytes of an N MiB file
(examples/byte_count) and finding every occurrence of a 4-byte pattern in it
(examples/find_pattern), from Python with the uint8 array itself and from the
CLI with the file itself (`--input data=@FILE`), against NumPy on the CPU, in
one run. Every result is checked against NumPy's (counts equal, positions
equal once sorted) before anything is timed. Prints JSON lines {"name",
"value", "unit"}: milliseconds a call (median of reps), and the ratios.

    PYTHONPATH=build/python .venv/bin/python bench/byte_scan.py [--mib 64] [--reps 5] [--vyre build/vyre]

The CLI's figure is a whole process (start, cache hit, upload, dispatch,
printing the result) and is not compared with the others.
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples")
PER_INVOCATION = 16  # bytes (start positions) each invocation of both examples takes
WORKGROUP = 256
PATTERN = b"vyre"
PLANTED = 100  # occurrences planted on top of the random ones
CAPACITY = 4096  # slots of find_pattern's `where`


def example(name):
    spec = importlib.util.spec_from_file_location("vyre_example_" + name, os.path.join(EXAMPLES, "python", name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def emit(name, value, unit):
    print(json.dumps({"name": name, "value": value, "unit": unit}), flush=True)


def median_ms(fn, reps):
    fn()  # warm: compile, cache, first upload
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def numpy_find(data, pattern):
    m = data[:-3] == pattern[0]
    for k in range(1, 4):
        m &= data[k:len(data) - 3 + k] == pattern[k]
    return np.flatnonzero(m).astype(np.uint32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--vyre", default=os.path.join(HERE, "..", "build", "vyre"), help="the CLI (skipped if absent)")
    args = ap.parse_args()
    byte_count, find_pattern = example("byte_count"), example("find_pattern")

    n = args.mib << 20
    data = np.random.default_rng(1).integers(0, 256, n, dtype=np.uint8)
    pattern = np.frombuffer(PATTERN, np.uint8)
    for p in np.linspace(0, n - 4, PLANTED, dtype=np.int64):
        data[p:p + 4] = pattern
    groups = (n + WORKGROUP * PER_INVOCATION - 1) // (WORKGROUP * PER_INVOCATION)

    def vyre_count():
        return byte_count(data=data, grid=(groups, 1, 1))["counts"]

    def vyre_find():
        return find_pattern(data=data, pattern=pattern, sizes={"where": CAPACITY}, grid=(groups, 1, 1))

    def numpy_count():
        return np.bincount(data, minlength=256)

    want_counts = numpy_count().astype(np.uint32)
    want_where = numpy_find(data, pattern)
    assert len(want_where) <= CAPACITY
    assert np.array_equal(vyre_count(), want_counts), "byte count differs from NumPy"
    found = vyre_find()
    count = int(found["count"][0])
    assert count == len(want_where), (count, len(want_where))
    assert np.array_equal(np.sort(found["where"][:count]), want_where), "positions differ from NumPy"
    emit("occurrences", count, "")

    for name, mine, theirs in (("byte_count", vyre_count, numpy_count),
                               ("find_pattern", vyre_find, lambda: numpy_find(data, pattern))):
        g, c = median_ms(mine, args.reps), median_ms(theirs, args.reps)
        emit(f"{name}.vyre_ms", round(g, 2), "ms")
        emit(f"{name}.numpy_ms", round(c, 2), "ms")
        emit(f"{name}.vyre_over_numpy", round(g / c, 3), "ratio")

    if not os.path.exists(args.vyre):
        emit("cli", "skipped: no " + args.vyre, "")
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "data.bin")
        data.tofile(path)
        grid = f"{groups},1,1"
        runs = {
            "byte_count": ["--input", f"data=@{path}"],
            "find_pattern": ["--input", f"data=@{path}", "--input", "pattern=" + ",".join(str(b) for b in PATTERN),
                             "--size", f"where={CAPACITY}"],
        }
        for name, extra in runs.items():
            cmd = [args.vyre, "run", os.path.join(EXAMPLES, name + ".json"), "--grid", grid] + extra
            start = time.perf_counter()
            out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
            emit(f"cli.{name}_ms", round((time.perf_counter() - start) * 1e3, 1), "ms")
            if name == "byte_count":
                assert out["counts"] == want_counts.tolist(), "the CLI's byte count differs from NumPy"
            else:
                assert out["count"] == [len(want_where)], "the CLI's pattern count differs from NumPy"
                assert sorted(out["where"][:len(want_where)]) == want_where.tolist(), "the CLI's positions differ"


if __name__ == "__main__":
    main()
