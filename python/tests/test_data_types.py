"""Bytes, half-words and bools (format version 4, docs/format-v4.md): NumPy uint8, int8, uint16,
int16 and bool arrays in and out without a copy; loads extend to u32/i32, stores keep the low
bits; the narrow types are storage types only, refused as values at the kernel's own line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import vyre
from vyre import bool_, i8, i16, i32, u8, u16, u32

N = 1001  # not a multiple of 4: the last word of a byte buffer is partly padding


@vyre.kernel(workgroup=256)
def byte_histogram(data: vyre.In[u8], bins: vyre.Out[u32, 256]):
    vyre.atomic_add(bins, data[vyre.gid.x], 1)


@vyre.kernel(workgroup=64, dim="out")
def affine_u8(x: vyre.In[u8], out: vyre.Out[u8]):
    i = vyre.gid.x
    out[i] = x[i] * 3 + 7  # computed in u32, stored modulo 256


@vyre.kernel(workgroup=64, dim="out")
def negate_i8(x: vyre.In[i8], out: vyre.Out[i8]):
    i = vyre.gid.x
    out[i] = -x[i]  # -(-128) is 128 in i32, stored as -128


@vyre.kernel(workgroup=64, dim="out")
def scale_u16(x: vyre.In[u16], out: vyre.Out[u16]):
    i = vyre.gid.x
    out[i] = x[i] * 5


@vyre.kernel(workgroup=64, dim="out")
def widen_i16(x: vyre.In[i16], out: vyre.Out[i32]):
    i = vyre.gid.x
    out[i] = x[i] * 2  # sign-extended on load, no 16-bit wrap in i32


@vyre.kernel(workgroup=64, dim="out")
def threshold(x: vyre.In[u8], keep: vyre.In[bool_], out: vyre.Out[bool_]):
    i = vyre.gid.x
    out[i] = keep[i] and x[i] > 100


def data(dtype, n=N, seed=7):
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max, n, endpoint=True, dtype=dtype)


@pytest.mark.parametrize("run", ["gpu", "reference"])
def test_a_byte_histogram_takes_uint8_as_it_is(run):
    x = data(np.uint8, 100_003)
    call = byte_histogram if run == "gpu" else byte_histogram.reference
    bins = call(data=x, dim=len(x))["bins"]
    np.testing.assert_array_equal(bins, np.bincount(x, minlength=256).astype(np.uint32))


@pytest.mark.parametrize("run", ["gpu", "reference"])
@pytest.mark.parametrize("kernel,dtype,expected", [
    (affine_u8, np.uint8, lambda x: (x.astype(np.uint32) * 3 + 7).astype(np.uint8)),
    (negate_i8, np.int8, lambda x: (-x.astype(np.int32)).astype(np.int8)),
    (scale_u16, np.uint16, lambda x: (x.astype(np.uint32) * 5).astype(np.uint16)),
    (widen_i16, np.int16, lambda x: x.astype(np.int32) * 2),
], ids=["u8", "i8", "u16", "i16"])
def test_loads_extend_and_stores_keep_the_low_bits(run, kernel, dtype, expected):
    for n in (1, 2, 3, 5, 7, N):  # every remainder of a word
        x = data(dtype, n)
        call = kernel if run == "gpu" else kernel.reference
        out = call(x=x, sizes={"out": n})["out"]
        want = expected(x)
        assert out.dtype == want.dtype and out.shape == (n,)
        np.testing.assert_array_equal(out, want)


def test_int8_minimum_negates_to_itself_as_in_c():
    x = np.array([-128, -1, 0, 1, 127], np.int8)
    np.testing.assert_array_equal(negate_i8(x=x, sizes={"out": 5})["out"], np.array([-128, 1, 0, -1, -127], np.int8))


@pytest.mark.parametrize("run", ["gpu", "reference"])
def test_bool_arrays_pass_in_and_come_out_as_bool(run):
    x = data(np.uint8)
    keep = np.arange(N) % 3 != 0
    call = threshold if run == "gpu" else threshold.reference
    out = call(x=x, keep=keep, sizes={"out": N})["out"]
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, keep & (x > 100))


def test_outputs_are_written_into_the_callers_uint8_array():
    compiled = vyre.Backend().compile(affine_u8.program)
    x = data(np.uint8)
    out = np.zeros(N, np.uint8)
    compiled.into(x=x, out={"out": out}, dim=N)
    np.testing.assert_array_equal(out, (x.astype(np.uint32) * 3 + 7).astype(np.uint8))


def test_a_wrong_dtype_names_the_numpy_type_to_pass():
    with pytest.raises(vyre.DTypeError, match="input 'x' holds u8: pass uint8, not uint32"):
        affine_u8(x=np.ones(4, np.uint32))
    with pytest.raises(vyre.DTypeError, match="input 'keep' holds bool: pass bool, not uint8"):
        threshold(x=np.ones(4, np.uint8), keep=np.ones(4, np.uint8))


def test_a_scalar_for_a_narrow_buffer_must_fit_it():
    one = vyre.Backend().compile(affine_u8.program)
    np.testing.assert_array_equal(one(x=255, sizes={"out": 1}, dim=1)["out"], np.array([(255 * 3 + 7) % 256], np.uint8))
    with pytest.raises(vyre.RangeError, match="input 'x'.*256"):
        one(x=256, sizes={"out": 1}, dim=1)


def test_narrow_types_are_storage_types_refused_as_values_at_the_users_line():
    def cast_to_u8(x: vyre.In[u32], out: vyre.Out[u32]):
        out[0] = u8(x[0])

    with pytest.raises(vyre.KernelTypeError, match="u8 is a storage type, not a value type: convert to u32") as e:
        vyre.kernel(workgroup=1)(cast_to_u8).program
    assert e.value.line == cast_to_u8.__code__.co_firstlineno + 1

    def narrow_scalar(k: i16, out: vyre.Out[i32]):
        out[0] = k

    with pytest.raises(vyre.KernelTypeError, match="parameter 'k': a scalar is f32, u32 or i32"):
        vyre.kernel(workgroup=1)(narrow_scalar).program


def test_a_kernel_of_narrow_buffers_is_format_version_4_and_translates_back():
    import json

    program = json.loads(affine_u8.program.to_json())
    assert program["vyre"] == 4
    assert [b["type"] for b in program["buffers"]] == ["u8", "u8"]
    assert "vyre.In[vyre.u8]" in vyre.to_python(affine_u8.program)


# ---- f16 (format version 4, where the device has shader-f16) ----

@vyre.kernel
def half_axpy(a: vyre.In[vyre.f16], x: vyre.In[vyre.f16], y: vyre.In[vyre.f16], out: vyre.Out[vyre.f16]):
    i = vyre.gid.x
    if i < len(out):
        out[i] = a[0] * x[i] + y[i] * 0.5   # 0.5 beside an f16 is an f16 literal


def test_float16_arrays_go_in_and_out_and_the_arithmetic_is_float16():
    x = np.linspace(-4, 4, 33, dtype=np.float16)
    y = np.arange(33, dtype=np.float16)
    a = np.array([1.5], np.float16)
    got = half_axpy(a=a, x=x, y=y, sizes={"out": 33}, dim=33)["out"]
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, half_axpy.reference(a=a, x=x, y=y, sizes={"out": 33}, dim=33)["out"])
    # Each step rounded to float16, as NumPy's float16 arithmetic rounds it.
    np.testing.assert_array_equal(got, a[0] * x + y * np.float16(0.5))
    assert json.loads(half_axpy.program.to_json())["vyre"] == 4


def test_an_f16_program_is_refused_with_the_reason_where_the_feature_is_masked(tmp_path):
    script = tmp_path / "masked.py"
    script.write_text(
        "import numpy as np, vyre\n"
        "@vyre.kernel\n"
        "def k(x: vyre.In[vyre.f16], out: vyre.Out[vyre.f16]):\n"
        "    out[vyre.gid.x] = x[vyre.gid.x] * 2\n"
        "try:\n"
        "    k(x=np.ones(4, np.float16), sizes={'out': 4}, dim=4)\n"
        "except vyre.LimitError as e:\n"
        "    print('refused:', e)\n")
    env = dict(os.environ, VYRE_MASK_FEATURES="shader-f16")
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert "refused:" in out.stdout and "shader-f16" in out.stdout and "VYRE_MASK_FEATURES" in out.stdout, \
        out.stdout + out.stderr


def test_f16_mistakes_are_refused_at_their_line():
    @vyre.kernel
    def mixed(x: vyre.In[vyre.f16], y: vyre.In[vyre.f32], out: vyre.Out[vyre.f16]):
        out[0] = x[0] + y[0]

    with pytest.raises(vyre.KernelTypeError, match="operands of \\+ are f16 and f32"):
        mixed.program

    @vyre.kernel
    def too_big(out: vyre.Out[vyre.f16]):
        out[0] = vyre.f16(70000.0)

    with pytest.raises(vyre.KernelTypeError, match="beyond f16's range"):
        too_big.program


# ---- f64 (format version 4, where the device has shader-f64) ----

@vyre.kernel
def double_step(x: vyre.In[vyre.f64], out: vyre.Out[vyre.f64], whole: vyre.Out[vyre.i32]):
    i = vyre.gid.x
    if i < len(out):
        v = x[i]
        out[i] = vyre.fma(v, 0.1, vyre.sqrt(abs(v))) - vyre.floor(v)  # 0.1 beside an f64 keeps all 53 bits
        whole[i] = vyre.i32(v)


def test_float64_arrays_keep_double_precision_on_the_gpu_and_in_the_reference():
    x = np.array([1.5, -2.25, 16777217.5, 1e300, -0.0, 1e-310, 3.0e9, -3.0e9, np.nan, np.inf], np.float64)
    n = len(x)
    got = double_step(x=x, sizes={"out": n, "whole": n}, dim=n)
    ref = double_step.reference(x=x, sizes={"out": n, "whole": n}, dim=n)
    assert got["out"].dtype == np.float64
    np.testing.assert_array_equal(got["out"], ref["out"])
    np.testing.assert_array_equal(got["whole"], ref["whole"])
    with np.errstate(invalid="ignore"):
        expected = np.array([np.fma(v, 0.1, np.sqrt(abs(v))) if hasattr(np, "fma") else v * 0.1 + np.sqrt(abs(v))
                             for v in x]) - np.floor(x)
    finite = np.isfinite(x)
    # f32 would lose 16777217.5 and 1e-310 altogether; f64 holds them to the last bit.
    np.testing.assert_allclose(got["out"][finite], expected[finite], rtol=1e-15, atol=0)
    # Conversions to i32 saturate and take NaN to 0, as for f32.
    assert list(got["whole"]) == [1, -2, 16777217, 2**31 - 1, 0, 0, 2**31 - 1, -2**31, 0, 2**31 - 1]
    assert json.loads(double_step.program.to_json())["vyre"] == 4
    assert "0.1" in double_step.program.to_json()


def test_an_f64_program_is_refused_with_the_reason_where_the_feature_is_masked(tmp_path):
    script = tmp_path / "masked.py"
    script.write_text(
        "import numpy as np, vyre\n"
        "@vyre.kernel\n"
        "def k(x: vyre.In[vyre.f64], out: vyre.Out[vyre.f64]):\n"
        "    out[vyre.gid.x] = x[vyre.gid.x] * 2\n"
        "try:\n"
        "    k(x=np.ones(4), sizes={'out': 4}, dim=4)\n"
        "except vyre.LimitError as e:\n"
        "    print('refused:', e)\n")
    env = dict(os.environ, VYRE_MASK_FEATURES="shader-f64")
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert "refused:" in out.stdout and "shader-f64" in out.stdout and "VYRE_MASK_FEATURES" in out.stdout, \
        out.stdout + out.stderr


def test_operators_vulkan_lacks_for_f64_are_refused_at_their_line():
    @vyre.kernel
    def exp64(x: vyre.In[vyre.f64], out: vyre.Out[vyre.f64]):
        out[0] = vyre.exp(x[0])

    with pytest.raises(vyre.KernelTypeError, match="vyre.exp is not defined for f64") as e:
        exp64.program
    assert "out[0] = vyre.exp(x[0])" in str(e.value)

    @vyre.kernel
    def power(x: vyre.In[vyre.f64], out: vyre.Out[vyre.f64]):
        out[0] = x[0] ** 2.0

    with pytest.raises(vyre.KernelTypeError, match="\\*\\* on f64"):
        power.program

    @vyre.kernel
    def scalar(a: vyre.f64, out: vyre.Out[vyre.f64]):
        out[0] = a

    with pytest.raises(vyre.KernelTypeError, match="vyre.In\\[vyre.f64, 1\\]"):
        scalar.program


def test_a_float32_array_for_an_f64_buffer_names_float64():
    with pytest.raises(vyre.DTypeError, match="pass float64, not float32"):
        double_step(x=np.ones(4, np.float32), sizes={"out": 4, "whole": 4}, dim=4)


def test_an_f64_kernel_translates_back_to_python():
    text = vyre.to_python(double_step.program)
    assert "vyre.f64(0.1)" in text and "vyre.In[vyre.f64]" in text
