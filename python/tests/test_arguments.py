"""Numbers given as arguments (sizes, grid, workgroup, fixed_lengths, bindings, scalar inputs) that their type
cannot hold are refused with an error naming the argument: vyre.RangeError, an InputError (ValueError) and an
OverflowError. A float beyond float32's range is refused as the CLI refuses 1e39; inf and nan given as such pass."""

from __future__ import annotations

import re

import numpy as np
import pytest

import vyre
from conftest import EXAMPLES

N = 4


@pytest.fixture(scope="module")
def kernel(backend, saxpy):
    return backend.compile(saxpy)


def args(alpha=2.0):
    return dict(alpha=alpha, x=np.arange(1, N + 1, dtype=np.float32), y=np.ones(N, dtype=np.float32))


def raises_range(match):
    return pytest.raises(vyre.RangeError, match=match)


def test_range_error_is_an_input_error_a_value_error_and_an_overflow_error():
    assert issubclass(vyre.RangeError, vyre.InputError)
    assert issubclass(vyre.RangeError, ValueError) and issubclass(vyre.RangeError, OverflowError)


def test_a_size_beyond_u32(kernel):
    with raises_range(r"^sizes\['out'\] = 18446744073709551616 does not fit a u32 length$") as e:
        kernel(args(), sizes={"out": 2**64})
    assert e.value.kind == "invalid_input"
    with raises_range(r"^sizes\[3\] = -1 does not fit a u32 length$"):
        kernel(args(), sizes={3: -1})
    with pytest.raises(TypeError, match=r"^sizes\['out'\] must be an int, not float$"):
        kernel(args(), sizes={"out": 4.0})


def test_a_grid_beyond_u32(kernel):
    with raises_range(r"^grid = 4294967296 does not fit a u32 workgroup count$"):
        kernel(args(), sizes={"out": N}, grid=2**32)
    with raises_range(r"^grid = -1 does not fit a u32 workgroup count$"):
        kernel(args(), sizes={"out": N}, grid=-1)
    with raises_range(r"^grid\[1\] = 4294967296 does not fit a u32 workgroup count$"):
        kernel(args(), sizes={"out": N}, grid=(1, 2**32))
    with pytest.raises(TypeError, match=r"^grid\[0\] must be an int, not bool$"):
        kernel(args(), sizes={"out": N}, grid=(True,))


def test_a_workgroup_beyond_u32(backend, saxpy):
    with raises_range(r"^workgroup = 1099511627776 does not fit a u32 workgroup size$"):
        backend.compile(saxpy, workgroup=2**40)
    with raises_range(r"^workgroup\[2\] = -3 does not fit a u32 workgroup size$"):
        saxpy.wgsl(workgroup=(1, 1, -3))


def test_a_fixed_length_beyond_u32(backend, saxpy):
    with raises_range(r"^fixed_lengths\['out'\] = 4294967296 does not fit a u32 length$"):
        backend.compile(saxpy, fixed_lengths={"out": 2**32})


def test_a_binding_beyond_u32(kernel):
    with raises_range(r"^inputs key = 4294967296 does not fit a u32 binding$"):
        kernel({2**32: 1.0}, sizes={"out": N})


def test_scalar_inputs_beyond_their_type(backend):
    xor = backend.compile(vyre.Program.from_json(EXAMPLES / "xor.json"))
    with raises_range(r"^input 'a' = 4294967296 does not fit a u32 value$"):
        xor(a=2**32, b=np.ones(1, np.uint32), sizes={"out": 1})
    with raises_range(r"^input 'a' = -1 does not fit a u32 value$"):
        xor(a=-1, b=np.ones(1, np.uint32), sizes={"out": 1})
    assert xor(a=2**32 - 1, b=np.ones(1, np.uint32), sizes={"out": 1})["out"][0] == 2**32 - 2


@pytest.mark.parametrize("alpha", [1e300, -1e39, 3.5e38])
def test_a_float_beyond_f32_is_refused(kernel, alpha):
    with raises_range(r"^input 'alpha' = %s is beyond the f32 range" % repr(alpha).replace("+", r"\+")):
        kernel(args(alpha), sizes={"out": N})


def test_an_int_beyond_a_double_is_refused_for_f32(kernel):
    with raises_range(r"^input 'alpha' = 10{400} is beyond the f32 range$"):
        kernel(args(10**400), sizes={"out": N})


def test_inf_nan_and_the_f32_edges_pass(kernel):
    out = kernel(args(float("inf")), sizes={"out": N})["out"]
    assert np.all(np.isposinf(out))
    assert np.all(np.isnan(kernel(args(float("nan")), sizes={"out": N})["out"]))
    biggest = float(np.finfo(np.float32).max)
    assert kernel(args(biggest), sizes={"out": N})["out"][0] == np.float32(biggest)
    # Too small for f32: zero, as the CLI reads 1e-50.
    np.testing.assert_array_equal(kernel(args(1e-300), sizes={"out": N})["out"], np.ones(N, np.float32))


def test_numpy_scalars_are_taken_where_a_python_number_is(backend, kernel):
    xor = backend.compile(vyre.Program.from_json(EXAMPLES / "xor.json"))
    b = np.ones(1, np.uint32)
    for a in (np.int64(8), np.uint32(8), np.int8(8), np.uint64(8)):
        assert xor(a=a, b=b, sizes={"out": np.int64(1)})["out"][0] == 9, type(a)
    assert xor(a=1, b=b, sizes={"out": 1}, grid=np.uint32(1), )["out"][0] == 0
    assert xor(a=1, b=b, sizes={"out": 1}, dim=(np.int64(1),))["out"][0] == 0
    with raises_range(r"^input 'a' = %s does not fit a u32 value$" % re.escape(repr(np.int64(-1)))):
        xor(a=np.int64(-1), b=b, sizes={"out": 1})
    for alpha in (np.float32(0.5), np.float64(0.5), np.int32(3)):
        assert kernel(args(alpha), sizes={"out": N})["out"][0] == np.float32(alpha) + 1, type(alpha)
    # A truth value, a float for an integer buffer and an array are no scalar numbers.
    with pytest.raises(vyre.DTypeError, match="pass an int, not float32"):
        xor(a=np.float32(8), b=b, sizes={"out": 1})
    with pytest.raises(TypeError, match=r"sizes\['out'\] must be an int"):
        xor(a=1, b=b, sizes={"out": np.bool_(True)})
    with pytest.raises(TypeError, match=r"sizes\['out'\] must be an int"):
        xor(a=1, b=b, sizes={"out": np.array([1])})


class _ArrayInterfaceOnly:
    """Memory offered through NumPy's array interface alone, as a foreign library's array may."""

    def __init__(self, array):
        self._array = array
        self.__array_interface__ = array.__array_interface__


class _DLPackOnly:
    """Memory offered as a DLPack capsule alone (as PyTorch's and JAX's tensors), on `device`."""

    def __init__(self, array, device=(1, 0)):
        self._array, self._device = array, device

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._device


def test_array_interface_and_dlpack_inputs(backend):
    xor = backend.compile(vyre.Program.from_json(EXAMPLES / "xor.json"))
    a = np.arange(10, dtype=np.uint32)
    b = np.full(10, 3, dtype=np.uint32)
    want = a ^ b
    assert np.array_equal(xor(a=_ArrayInterfaceOnly(a), b=_DLPackOnly(b), sizes={"out": 10})["out"], want)
    # The dtype rule is the buffer protocol's: no silent conversion.
    with pytest.raises(vyre.DTypeError, match="holds u32"):
        xor(a=_DLPackOnly(a.astype(np.int64)), b=b, sizes={"out": 10})
    # Memory on a GPU (DLPack device type 2, CUDA) is refused, never copied behind the caller's back.
    with pytest.raises(vyre.InputError, match="lives in device memory \\(DLPack device type 2\\)"):
        xor(a=_DLPackOnly(a, device=(2, 0)), b=b, sizes={"out": 10})


def test_torch_cpu_tensors_where_torch_is_installed(kernel):
    torch = pytest.importorskip("torch")
    x = torch.arange(N, dtype=torch.float32)
    out = kernel(alpha=2.0, x=x, y=torch.ones(N, dtype=torch.float32), sizes={"out": N})["out"]
    np.testing.assert_array_equal(out, 2 * np.arange(N, dtype=np.float32) + 1)
    with pytest.raises(vyre.DTypeError):  # float64 for an f32 buffer: refused, as a NumPy float64 array is
        kernel(alpha=2.0, x=x.double(), y=torch.ones(N, dtype=torch.float32), sizes={"out": N})
