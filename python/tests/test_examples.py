"""Every example program from Python against the expected outputs of its run file."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import example_names, load_run

NAMES = example_names()


def test_every_example_has_a_run_file():
    assert len(NAMES) >= 9, NAMES


def check(name, outputs, expect, tolerance):
    for buffer, want in expect.items():
        got = outputs[buffer]
        assert got.dtype == want.dtype, (name, buffer)
        assert got.shape == want.shape, (name, buffer)
        if buffer in tolerance:
            t = tolerance[buffer]
            diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
            bound = t.get("abs", 0) + t.get("rel", 0) * np.abs(want.astype(np.float64))
            assert np.all(diff <= bound), f"{name}.{buffer}: max error {diff.max()}"
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{name}.{buffer}")


@pytest.mark.parametrize("name", NAMES)
def test_example_on_the_gpu(backend, name):
    program, inputs, sizes, grid, expect, tolerance = load_run(name)
    kernel = backend.compile(program)
    check(name, kernel(inputs, sizes=sizes, grid=grid), expect, tolerance)


@pytest.mark.parametrize("name", NAMES)
def test_example_on_the_reference_interpreter(backend, name):
    program, inputs, sizes, grid, expect, tolerance = load_run(name)
    kernel = backend.compile(program)
    check(name, kernel.reference(inputs, sizes=sizes, grid=grid), expect, tolerance)


@pytest.mark.parametrize("name", NAMES)
def test_example_into_caller_arrays(backend, name):
    program, inputs, sizes, grid, expect, tolerance = load_run(name)
    kernel = backend.compile(program)
    out = {k: np.full_like(v, 7) for k, v in expect.items()}
    kernel.into(inputs, out=out, sizes=sizes, grid=grid)
    check(name, out, expect, tolerance)
