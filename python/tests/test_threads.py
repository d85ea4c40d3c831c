"""Threads dispatching at once, the GIL released while each waits."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import vyre
from conftest import EXAMPLES

N = 4096


def test_threads_share_a_kernel_and_compile_at_once(backend, saxpy):
    xor = vyre.Program.from_json(EXAMPLES / "xor.json")
    kernels = {"saxpy": backend.compile(saxpy)}

    def work(i):
        rng = np.random.default_rng(i)
        if i % 2:
            k = backend.compile(xor)  # threads compiling the same program compile it once
            a = rng.integers(0, 2**32, N, dtype=np.uint32)
            b = rng.integers(0, 2**32, N, dtype=np.uint32)
            for _ in range(10):
                np.testing.assert_array_equal(k(a=a, b=b, sizes={"out": N})["out"], a ^ b)
        else:
            k = kernels["saxpy"]
            x = rng.standard_normal(N).astype(np.float32)
            out = np.empty(N, np.float32)
            for j in range(10):
                k.into(alpha=float(j), x=x, y=x, out={"out": out})
                np.testing.assert_array_max_ulp(out, np.float32(j) * x + x, maxulp=1)  # fused or not
        return i

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert sorted(pool.map(work, range(16))) == list(range(16))


def test_the_gil_is_released_while_the_gpu_works(backend, saxpy):
    k = backend.compile(saxpy)
    n = 1 << 20
    x = np.ones(n, np.float32)
    out = np.empty(n, np.float32)
    ticks = 0
    done = threading.Event()

    def dispatch():
        for _ in range(20):
            k.into(alpha=1.0, x=x, y=x, out={"out": out})
        done.set()

    t = threading.Thread(target=dispatch)
    t.start()
    while not done.is_set():  # runs only while the dispatching thread has let go of the GIL
        ticks += 1
    t.join()
    assert ticks > 100
    assert out[0] == 2
