"""`vyre run --input NAME=@FILE` and `--output` against NumPy itself: arrays np.save wrote are read
as np.load reads them, and what vyre writes reads back with np.load, np.loadtxt, np.genfromtxt,
np.fromfile and json to the same values, bit for bit."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from conftest import cli_path

pytestmark = pytest.mark.skipif(cli_path() is None, reason="no vyre command line in this build")

TYPES = {
    "u32": np.uint32, "i32": np.int32, "f32": np.float32, "f64": np.float64, "f16": np.float16,
    "u8": np.uint8, "i8": np.int8, "u16": np.uint16, "i16": np.int16, "bool": np.bool_,
}


def copy_program(tmp_path, vtype: str):
    """out[i] = x[i] for one element type."""
    program = {
        "vyre": 4, "name": "copy", "workgroup_size": [64, 1, 1],
        "buffers": [{"name": "x", "binding": 0, "access": "read", "type": vtype},
                    {"name": "out", "binding": 1, "access": "read_write", "type": vtype, "output": True}],
        "body": [{"let": "i", "value": {"gid": "x"}},
                 {"if": {"lt": [{"var": "i"}, {"len": "out"}]}, "then": [
                     {"store": "out", "index": {"var": "i"}, "value": {"load": "x", "index": {"var": "i"}}}]}]}
    path = tmp_path / f"copy_{vtype}.json"
    path.write_text(json.dumps(program))
    return path


def vyre_run(*args):
    return subprocess.run([str(cli_path()), "run", *map(str, args), "--backend", "reference"], capture_output=True,
                          text=True, timeout=300)


def sample(vtype: str) -> np.ndarray:
    """Values of every kind a type has: its extremes, and for floats every f16, or random f32 and
    f64 bit patterns (subnormals, NaN and infinities among them)."""
    dtype = np.dtype(TYPES[vtype])
    rng = np.random.default_rng(7)
    if vtype == "bool":
        return np.array([True, False, True, True, False])
    if vtype == "f16":
        return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    if vtype in ("f32", "f64"):
        bits = np.uint32 if vtype == "f32" else np.uint64
        random = rng.integers(0, np.iinfo(bits).max, size=5000, dtype=bits, endpoint=True).view(dtype)
        special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.1, 1e-45 if vtype == "f32" else 5e-324,
                            np.finfo(dtype).max, np.finfo(dtype).tiny], dtype=dtype)
        return np.concatenate([special, random])
    info = np.iinfo(dtype)
    return np.concatenate([np.array([info.min, info.max, 0, 1], dtype=dtype),
                           rng.integers(info.min, info.max, size=1000, dtype=dtype, endpoint=True)])


def same_values(got: np.ndarray, want: np.ndarray):
    """Equal to the bit, any NaN matching any NaN (text spells every NaN as nan)."""
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(got), nan)
        np.testing.assert_array_equal(got[~nan].view(f"u{want.itemsize}"), want[~nan].view(f"u{want.itemsize}"))
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("vtype", list(TYPES))
def test_every_format_reads_back_in_numpy_to_the_same_values(tmp_path, vtype):
    want = sample(vtype)
    np.save(tmp_path / "x.npy", want)
    outputs = [f"out={tmp_path / ('o.' + ext)}" for ext in ("npy", "csv", "bin", "json")]
    r = vyre_run(copy_program(tmp_path, vtype), "--input", f"x=@{tmp_path / 'x.npy'}", "--size", f"out={want.size}",
                 *[a for o in outputs for a in ("--output", o)])
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""

    loaded = np.load(tmp_path / "o.npy")
    assert loaded.dtype == want.dtype
    same_values(loaded, want)
    same_values(np.fromfile(tmp_path / "o.bin", dtype=want.dtype), want)
    same_values(np.loadtxt(tmp_path / "o.csv", delimiter=",", dtype=want.dtype), want)
    same_values(np.array(json.loads((tmp_path / "o.json").read_text()), dtype=want.dtype), want)
    if want.dtype.kind == "f":
        # Read as float64 first, as loadtxt and genfromtxt do by default.
        same_values(np.loadtxt(tmp_path / "o.csv", delimiter=",").astype(want.dtype), want)
        same_values(np.genfromtxt(tmp_path / "o.csv", delimiter=",").astype(want.dtype), want)

    # And vyre reads its own CSV and JSON back to the same bits.
    for ext in ("csv", "json"):
        r = vyre_run(copy_program(tmp_path, vtype), "--input", f"x=@{tmp_path / ('o.' + ext)}", "--size",
                     f"out={want.size}", "--output", f"out={tmp_path / 'again.npy'}")
        assert r.returncode == 0, r.stderr
        same_values(np.load(tmp_path / "again.npy"), want)


def test_arrays_of_any_shape_and_order_read_as_ravel_gives_them(tmp_path):
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4) * -3
    for name, array in [("c", a), ("fortran", np.asfortranarray(a)), ("view", a.transpose(2, 0, 1)),
                        ("scalar", np.array(-7, dtype=np.int32))]:
        np.save(tmp_path / f"{name}.npy", array)
        r = vyre_run(copy_program(tmp_path, "i32"), "--input", f"x=@{tmp_path / (name + '.npy')}", "--size",
                     f"out={array.size}", "--output", f"out={tmp_path / 'out.npy'}")
        assert r.returncode == 0, f"{name}: {r.stderr}"
        np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), array.ravel(), err_msg=name)


@pytest.mark.parametrize("array, message", [
    (np.zeros(3, dtype=np.float64), "holds '<f8' (float64), the buffer is f32 ('<f4', numpy.float32)"),
    (np.zeros(3, dtype=">f4"), "is big-endian ('>f4' (float32)); vyre reads little-endian"),
    (np.array([1, "a"], dtype=object), "holds Python objects ('|O'), not values"),
    (np.zeros(3, dtype=[("a", "<f4"), ("b", "<f4")]), "holds a structured type"),
])
def test_arrays_of_another_type_are_refused_naming_it(tmp_path, array, message):
    np.save(tmp_path / "x.npy", array, allow_pickle=True)
    r = vyre_run(copy_program(tmp_path, "f32"), "--input", f"x=@{tmp_path / 'x.npy'}", "--size", "out=3")
    assert r.returncode == 3
    assert message in r.stderr
    assert r.stdout == ""
