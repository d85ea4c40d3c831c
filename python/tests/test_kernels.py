"""Every example of examples/ written as a @vyre.kernel (examples/python/): the same digest as the
JSON program, and the run file's expected outputs on the GPU and on the reference interpreter."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import vyre
from conftest import EXAMPLES, example_names, load_run
from test_examples import check

NAMES = example_names()


def python_kernel(name: str) -> vyre.KernelFunction:
    path = EXAMPLES / "python" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"vyre_example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def test_every_example_has_a_python_kernel():
    assert len(NAMES) >= 9
    assert sorted(p.stem for p in (EXAMPLES / "python").glob("*.py")) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_python_kernel_has_the_json_programs_digest(name):
    kernel = python_kernel(name)
    program = vyre.Program.from_json(EXAMPLES / f"{name}.json")
    assert kernel.program.digest == program.digest
    assert kernel.program == program


@pytest.mark.parametrize("name", NAMES)
def test_python_kernel_on_the_gpu(name):
    _, inputs, sizes, grid, expect, tolerance = load_run(name)
    kernel = python_kernel(name)
    check(name, kernel(inputs, sizes=sizes, grid=grid), expect, tolerance)


@pytest.mark.parametrize("name", NAMES)
def test_python_kernel_on_the_reference_interpreter(name):
    _, inputs, sizes, grid, expect, tolerance = load_run(name)
    kernel = python_kernel(name)
    check(name, kernel.reference(inputs, sizes=sizes, grid=grid), expect, tolerance)


def test_a_backend_compiles_a_kernel_into_the_json_programs_cache_entry(backend):
    kernel = python_kernel("saxpy")
    compiled = backend.compile(kernel)
    assert compiled.cache_key == backend.compile(vyre.Program.from_json(EXAMPLES / "saxpy.json")).cache_key
    x = np.arange(8, dtype=np.float32)
    out = compiled(alpha=2.0, x=x, y=np.ones_like(x), sizes={"out": 8})["out"]
    np.testing.assert_array_equal(out, 2 * x + 1)
