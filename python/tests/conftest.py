"""Shared fixtures of the Python suite.

The package under test is the one on sys.path: build/python when CTest runs
the suite (PYTHONPATH), an installed one otherwise. Every test runs with its
own AOT cache directory, so that no test reads or writes the user's cache.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

SOURCE_DIR = Path(os.environ.get("VYRE_SOURCE_DIR") or Path(__file__).resolve().parents[2])
EXAMPLES = SOURCE_DIR / "examples"

os.environ.setdefault("VYRE_LOG", "warn")

import vyre  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def session_cache(tmp_path_factory):
    """The session's own AOT cache directory, set before any test opens a cache (pytest keeps
    the last few base temporary directories and removes older ones)."""
    d = tmp_path_factory.mktemp("aot")
    os.environ["VYRE_AOT_CACHE_DIR"] = str(d)
    return d


def cli_path() -> Path | None:
    """The `vyre` command line of the same build, when there is one."""
    given = os.environ.get("VYRE_CLI")
    if given:
        return Path(given)
    for candidate in (SOURCE_DIR / "build" / "vyre", Path(shutil.which("vyre") or "/nonexistent")):
        if candidate.exists():
            return candidate
    return None


@pytest.fixture(scope="session")
def backend() -> vyre.Backend:
    return vyre.Backend()


@pytest.fixture()
def cache_dir(tmp_path, monkeypatch) -> Path:
    """A fresh, empty AOT cache directory, set in VYRE_AOT_CACHE_DIR for this test."""
    d = tmp_path / "aot"
    monkeypatch.setenv("VYRE_AOT_CACHE_DIR", str(d))
    return d


@pytest.fixture(scope="session")
def saxpy() -> vyre.Program:
    return vyre.Program.from_json(EXAMPLES / "saxpy.json")


DTYPES = {"u32": np.uint32, "i32": np.int32, "f32": np.float32}


def values(dtype, items) -> np.ndarray:
    """A run file's values (numbers, or strings: nan, inf, -inf, 0x bits) as an array of dtype."""
    dtype = np.dtype(dtype)
    if all(not isinstance(v, str) for v in items):
        return np.array(items, dtype=np.float64 if dtype == np.float32 else np.int64).astype(dtype)
    out = np.empty(len(items), dtype=dtype)
    for i, v in enumerate(items):
        if isinstance(v, str) and v.strip().lower().startswith("0x"):
            out.view(np.uint32)[i] = int(v, 16)
        else:
            out[i] = float(v) if dtype == np.float32 else int(v)
    return out


def load_run(name: str):
    """examples/NAME.json and examples/NAME.run.json: (program, inputs, sizes, grid, expect, tolerance)."""
    program = vyre.Program.from_json(EXAMPLES / f"{name}.json")
    run = json.loads((EXAMPLES / f"{name}.run.json").read_text())
    types = {b["name"]: b["dtype"] for b in program.buffers}
    inputs = {k: values(types[k], v) for k, v in run.get("inputs", {}).items()}
    expect = {k: values(types[k], v) for k, v in run.get("expect", {}).items()}
    grid = tuple(run["grid"]) if "grid" in run else None
    return program, inputs, run.get("sizes", {}), grid, expect, run.get("tolerance", {})


def example_names():
    return sorted(p.name[: -len(".run.json")] for p in EXAMPLES.glob("*.run.json"))
