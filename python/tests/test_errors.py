"""Wrong dtypes, shapes and names are clear exceptions, never silent conversions."""

from __future__ import annotations

import json

import numpy as np
import pytest

import vyre
from conftest import EXAMPLES

N = 8


@pytest.fixture(scope="module")
def kernel(backend, saxpy):
    return backend.compile(saxpy)


@pytest.fixture
def one_element_kernel(saxpy, monkeypatch):
    # Widening off: a widened dispatch runs a quarter of the grid, and these
    # tests need the grid they ask for to reach the device's limit.
    monkeypatch.setenv("VYRE_WIDEN", "0")
    return vyre.Backend().compile(saxpy)


def args(n=N):
    return dict(alpha=2.0, x=np.arange(n, dtype=np.float32), y=np.ones(n, dtype=np.float32))


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int32, np.uint32, np.int64, np.uint8, np.bool_])
def test_input_of_another_dtype_is_a_type_error(kernel, dtype):
    a = args()
    a["x"] = a["x"].astype(dtype)
    with pytest.raises(TypeError, match=r"input 'x' holds f32: pass float32, not") as e:
        kernel(a, sizes={"out": N})
    assert isinstance(e.value, vyre.DTypeError) and isinstance(e.value, vyre.InputError)
    assert e.value.kind == "invalid_input"


def test_output_of_another_dtype_is_a_type_error(kernel):
    with pytest.raises(vyre.DTypeError, match="output 'out' holds f32: pass float32, not float64"):
        kernel.into(args(), out={"out": np.zeros(N)})


def test_lists_and_bools_are_refused(kernel):
    with pytest.raises(TypeError, match="must be a NumPy array of float32.*not list"):
        kernel(alpha=2.0, x=[1.0, 2.0], y=np.ones(2, np.float32), sizes={"out": 2})
    with pytest.raises(TypeError, match="input 'alpha' holds f32: pass a float or an array, not a bool"):
        kernel(alpha=True, x=np.ones(2, np.float32), y=np.ones(2, np.float32), sizes={"out": 2})
    xor = vyre.Backend().compile(vyre.Program.from_json(EXAMPLES / "xor.json"))
    with pytest.raises(TypeError, match="input 'a' holds u32: pass an int, not float"):
        xor(a=1.5, b=np.ones(1, np.uint32), sizes={"out": 1})


def test_non_contiguous_arrays_are_a_value_error(kernel):
    a = args(2 * N)
    a["x"] = a["x"][::2]
    a["y"] = a["y"][:N]
    with pytest.raises(ValueError, match="input 'x' is not C-contiguous"):
        kernel(a, sizes={"out": N})
    out = np.zeros((N, 2), np.float32)[:, 0]
    with pytest.raises(ValueError, match="output 'out' is not C-contiguous"):
        kernel.into(args(), out={"out": out})


def test_read_only_output_is_a_value_error(kernel):
    out = np.zeros(N, np.float32)
    out.flags.writeable = False
    with pytest.raises(vyre.InputError, match="read-only"):
        kernel.into(args(), out={"out": out})


def test_read_only_inputs_are_fine(kernel):
    a = args()
    for v in (a["x"], a["y"]):
        v.flags.writeable = False
    np.testing.assert_array_equal(kernel(a, sizes={"out": N})["out"], 2 * a["x"] + 1)


def test_output_of_the_wrong_size_is_a_value_error(kernel):
    with pytest.raises(ValueError, match="output view for 'out'.*12 bytes.*4 elements"):
        kernel.into(args(4), out={"out": np.zeros(3, np.float32)}, sizes={"out": 4})


def test_fixed_count_of_the_wrong_size_is_a_value_error(kernel):
    a = args()
    a["alpha"] = np.ones(2, np.float32)
    with pytest.raises(vyre.InputError, match="'alpha'.*has 2 elements; the program fixes 1"):
        kernel(a, sizes={"out": N})


def test_unknown_names_and_non_outputs(kernel):
    with pytest.raises(vyre.InputError, match="no bound buffer 'z' \\(it has: alpha, x, y, out\\)"):
        kernel(args(), z=np.ones(1, np.float32), sizes={"out": N})
    with pytest.raises(vyre.InputError, match="'x' is not an output buffer"):
        kernel.into(args(), out={"x": np.zeros(N, np.float32)})
    with pytest.raises(vyre.InputError, match=r'needs a length: give its contents or a size \(sizes=\{"out": n\}\)'):
        kernel(args())


def test_buffers_by_binding(kernel):
    a = args()
    out = kernel({0: 3.0, 1: a["x"], 2: a["y"]}, sizes={3: N})["out"]
    np.testing.assert_array_equal(out, 3 * a["x"] + 1)


def test_scalars_fit_the_buffer_type(kernel):
    a = args()
    a["alpha"] = 3  # an int with an exact float32 value
    np.testing.assert_array_equal(kernel(a, sizes={"out": N})["out"], 3 * a["x"] + 1)
    a["alpha"] = 2**24 + 1
    with pytest.raises(vyre.InputError, match="no exact float32 value"):
        kernel(a, sizes={"out": N})
    a["alpha"] = np.float32(0.5)  # a NumPy scalar is a 0-d buffer
    np.testing.assert_array_equal(kernel(a, sizes={"out": N})["out"], 0.5 * a["x"] + 1)


def test_limits_are_limit_errors(one_element_kernel):
    with pytest.raises(vyre.LimitError, match="maxComputeWorkgroupsPerDimension") as e:
        one_element_kernel(args(), sizes={"out": N}, grid=(70000,))
    assert e.value.kind == "limit_exceeded"


def test_workgroup_override_rule(backend, saxpy):
    with pytest.raises(vyre.InputError, match="at most 1024"):
        backend.compile(saxpy, workgroup=(64, 32))


def test_program_errors_carry_every_json_path():
    doc = json.loads((EXAMPLES / "xor.json").read_text())
    doc["body"][0] = {"let": 1}
    doc.pop("workgroup_size")
    with pytest.raises(vyre.ProgramError) as e:
        vyre.validate(doc)
    paths = [p for p, _ in e.value.diagnostics]
    assert "body[0].let" in paths, e.value.diagnostics
    assert e.value.kind == "invalid_program"
    assert isinstance(e.value, ValueError)
    assert "body[0].let: expected a name" in str(e.value)


def test_program_error_from_text_and_file(tmp_path):
    with pytest.raises(vyre.ProgramError):
        vyre.Program.from_json('{"vyre": 1}')
    with pytest.raises(vyre.FileError) as e:
        vyre.Program.from_json(tmp_path / "missing.json")
    assert isinstance(e.value, OSError) and e.value.kind == "io"
    with pytest.raises(TypeError):
        vyre.Program.from_json(42)


def test_exception_hierarchy():
    assert issubclass(vyre.DeviceLostError, vyre.GpuError)
    assert issubclass(vyre.NoAdapterError, vyre.GpuError)
    for cls in (vyre.ProgramError, vyre.InputError, vyre.GpuError, vyre.LimitError, vyre.FileError, vyre.WireError,
                vyre.LoweringError):
        assert issubclass(cls, vyre.Error)


def test_unknown_adapter_is_a_no_adapter_error():
    with pytest.raises(vyre.NoAdapterError) as e:
        vyre.Backend(adapter="no such adapter anywhere")
    assert e.value.kind == "no_adapter"


def test_the_backend_stays_usable_after_errors(one_element_kernel):
    for _ in range(3):
        with pytest.raises(vyre.Error):
            one_element_kernel(args(), sizes={"out": N}, grid=(70000,))
    np.testing.assert_array_equal(one_element_kernel(args(), sizes={"out": N})["out"], 2 * np.arange(N) + 1)
