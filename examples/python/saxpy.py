#!/usr/bin/env python3
"""saxpy as a Python kernel: out = alpha * x + y on 2^20 floats, checked against NumPy.

    pip install .                       # from the repository root (docs/python.md)
    python examples/python/saxpy.py     # prints the backend, whether the cache hit, and the check

The kernel is examples/saxpy.json written in Python (the same program: one digest, one cache
entry with `vyre run`), so the second run is a cache hit. ``alpha`` is ``vyre.In[f32, 1]``, the
one-element storage buffer of the JSON program; a bare ``alpha: f32`` would be a uniform.
"""

from __future__ import annotations

import time

import numpy as np

import vyre
from vyre import f32


@vyre.kernel(workgroup=64)
def saxpy(alpha: vyre.In[f32, 1], x: vyre.In[f32], y: vyre.In[f32], out: vyre.Out[f32]):
    i = vyre.gid.x
    if i < len(out):
        out[i] = alpha[0] * x[i] + y[i]


def main() -> None:
    n = 1 << 20
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)

    backend = vyre.Backend()
    kernel = backend.compile(saxpy)
    print(f"adapter: {backend.adapter['name']}; cache {'hit' if kernel.cache_hit else 'miss'}"
          f" ({vyre.cache.directory()}); digest {saxpy.program.digest[:16]}")

    out = saxpy(alpha=2.0, x=x, y=y, sizes={"out": n})["out"]  # a new NumPy array, default backend
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
