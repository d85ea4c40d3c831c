#!/usr/bin/env python3
"""saxpy from Python: out = alpha * x + y on 2^20 floats, checked against NumPy.

    pip install .                       # from the repository root (docs/python.md)
    python examples/python/saxpy.py     # prints the backend, whether the cache hit, and the check

The program is examples/saxpy.json, given here as a dict; its WGSL lands in
the same AOT cache as `vyre run` uses, so the second run is a cache hit.
"""

from __future__ import annotations

import time

import numpy as np

import vyre

SAXPY = {
    "vyre": 1,
    "name": "saxpy",
    "workgroup_size": [64, 1, 1],
    "buffers": [
        {"name": "alpha", "binding": 0, "access": "read", "type": "f32", "count": 1},
        {"name": "x", "binding": 1, "access": "read", "type": "f32"},
        {"name": "y", "binding": 2, "access": "read", "type": "f32"},
        {"name": "out", "binding": 3, "access": "read_write", "type": "f32", "output": True},
    ],
    "body": [
        {"let": "i", "value": {"gid": "x"}},
        {"if": {"lt": [{"var": "i"}, {"len": "out"}]}, "then": [
            {"store": "out", "index": {"var": "i"},
             "value": {"add": [{"mul": [{"load": "alpha", "index": {"u32": 0}},
                                        {"load": "x", "index": {"var": "i"}}]},
                               {"load": "y", "index": {"var": "i"}}]}},
        ]},
    ],
}


def main() -> None:
    n = 1 << 20
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)

    backend = vyre.Backend()
    kernel = backend.compile(vyre.Program.from_dict(SAXPY))
    print(f"adapter: {backend.adapter['name']}; cache {'hit' if kernel.cache_hit else 'miss'}"
          f" ({vyre.cache.directory()})")

    out = kernel(alpha=2.0, x=x, y=y, sizes={"out": n})["out"]  # a new NumPy array
    np.testing.assert_allclose(out, np.float32(2.0) * x + y, rtol=1e-6)

    result = np.empty(n, np.float32)                  # or straight into your own array
    start = time.perf_counter()
    for _ in range(10):
        kernel.into(alpha=2.0, x=x, y=y, out={"out": result})
    per_call_ms = (time.perf_counter() - start) * 100
    assert np.array_equal(result, out)
    print(f"saxpy of {n} floats: ok, {per_call_ms:.2f} ms a call")


if __name__ == "__main__":
    main()
