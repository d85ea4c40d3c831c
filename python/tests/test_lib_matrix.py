"""vyre.lib.matmul, transpose and softmax on lavapipe: against NumPy (``a @ b`` in float64 within
the documented bound, ``x.T`` to the bit, scipy.special.softmax's formula in float64 within its
bound), NumPy and DeviceArrays in and out, zero-sized and edge values, shapes and reports, and
errors in Python's terms."""

import numpy as np
import pytest

import vyre
import vyre.lib

EPS = float(np.finfo(np.float32).eps)  # 2**-23
U = EPS / 2


def _uniform(shape, lo, hi, seed):
    return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)


def _expect_product(c, a, b):
    """Within K * eps * sum_k |a_ik b_kj| of the float64 product; NaN and infinities as IEEE gives them."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        exact = a64 @ b64
        magnitude = np.abs(a64) @ np.abs(b64)
    k = a.shape[1]
    assert c.dtype == np.float32 and c.shape == exact.shape
    finite = np.isfinite(exact)
    assert np.all(np.abs(c[finite] - exact[finite]) <= k * EPS * magnitude[finite] + 1e-36)
    assert np.array_equal(np.isnan(c), np.isnan(exact))
    assert np.array_equal(c[np.isinf(exact)], exact[np.isinf(exact)])


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (1, 1000, 1), (31, 33, 17), (64, 64, 64), (65, 129, 257), (40, 50, 1),
                                   (3, 70, 4096)])
def test_matmul_against_numpy(m, n, k):
    a = _uniform((m, k), -1, 1, m + k)
    b = _uniform((k, n), -1, 1, n + k + 1)
    _expect_product(vyre.lib.matmul(a, b), a, b)


def test_matmul_takes_any_layout_and_gives_device_arrays_for_device_arrays():
    backend = vyre.default_backend()
    a = _uniform((40, 30), -2, 2, 1)
    b = _uniform((20, 30), -2, 2, 2).T  # not C-contiguous: copied on upload
    _expect_product(vyre.lib.matmul(a, b), a, np.ascontiguousarray(b))
    on_gpu = vyre.lib.matmul(backend.upload(a), backend.upload(np.ascontiguousarray(b)))
    assert isinstance(on_gpu, vyre.DeviceArray) and on_gpu.shape == (40, 20)
    # Chained on the GPU: (a b) as the next product's a.
    d = _uniform((20, 7), -1, 1, 3)
    chained = vyre.lib.matmul(on_gpu, backend.upload(d))
    assert chained.shape == (40, 7)
    _expect_product(chained.numpy(), on_gpu.numpy(), d)
    # A NumPy b with a DeviceArray a: the result stays on the GPU.
    assert isinstance(vyre.lib.matmul(on_gpu, d), vyre.DeviceArray)


def test_matmul_zero_sizes_nan_and_infinities():
    z = vyre.lib.matmul(np.zeros((3, 0), np.float32), np.zeros((0, 4), np.float32))
    assert z.shape == (3, 4) and np.array_equal(z, np.zeros((3, 4), np.float32))  # K = 0, as NumPy
    assert vyre.lib.matmul(np.zeros((0, 5), np.float32), np.ones((5, 4), np.float32)).shape == (0, 4)
    assert vyre.lib.matmul(np.ones((3, 5), np.float32), np.zeros((5, 0), np.float32)).shape == (3, 0)
    a = _uniform((5, 4), 0.5, 1, 4)
    b = _uniform((4, 6), 0.5, 1, 5)
    a[1, 2] = np.nan
    a[3, 0] = np.inf
    b[0, 4] = 0.0  # inf * 0
    b[2, 5] = -np.inf
    c = vyre.lib.matmul(a, b)
    _expect_product(c, a, b)
    assert np.all(np.isnan(c[1])) and c[3, 0] == np.inf and np.isnan(c[3, 4])


def test_matmul_shapes_are_given_or_chosen_and_reported():
    a = _uniform((67, 29), -1, 1, 6)
    b = _uniform((29, 45), -1, 1, 7)
    report = []
    _expect_product(vyre.lib.matmul(a, b, tile_m=32, tile_n=32, tile_k=16, thread_m=4, thread_n=4, report=report), a, b)
    _expect_product(vyre.lib.matmul(a, b, report=report), a, b)
    assert [r["source"] for r in report] == ["given", "default"]
    assert report[0]["family"] == "matmul f32" and report[0]["size_class"] == "m 2^7 n 2^6 k 2^5"
    assert report[0]["shape"] == "tile_m=32 tile_n=32 tile_k=16 thread_m=4 thread_n=4"
    # Some fields given, the others the default's (128 x 128 x 8 with 8 x 8 on every class for now).
    report.clear()
    _expect_product(vyre.lib.matmul(a, b, tile_m=64, tile_k=16, report=report), a, b)
    assert report[0]["source"] == "given" and report[0]["shape"].startswith("tile_m=64 tile_n=128 tile_k=16")


def test_matmul_errors_say_what_to_do():
    a = np.ones((3, 4), np.float32)
    with pytest.raises(vyre.InputError, match=r"a is 3 x 4 but b is 5 x 2: a's columns must be as many as b's rows"):
        vyre.lib.matmul(a, np.ones((5, 2), np.float32))
    with pytest.raises(vyre.InputError, match=r"b has the shape \(4,\); matmul takes 2-D matrices"):
        vyre.lib.matmul(a, np.ones(4, np.float32))
    with pytest.raises(vyre.DTypeError, match=r"vyre.lib.matmul: a is float64; it takes float32"):
        vyre.lib.matmul(a.astype(np.float64), a.T)
    with pytest.raises(vyre.DTypeError, match=r"b must be a NumPy array or a vyre.DeviceArray, not list"):
        vyre.lib.matmul(a, [[1.0]])
    with pytest.raises(vyre.InputError, match=r"thread_m must be a positive int or None"):
        vyre.lib.matmul(a, a.T, thread_m=0)
    with pytest.raises(vyre.InputError, match=r"thread_m and thread_n are 1, 2, 4 or 8"):
        vyre.lib.matmul(a, a.T, thread_m=3)
    with pytest.raises(vyre.InputError, match=r"WebGPU promises 256"):
        vyre.lib.matmul(a, a.T, tile_m=128, tile_n=128, thread_m=2, thread_n=2)


def _nan_bits(shape, seed):
    """float32 of every kind by bits: NaNs of both signs and several payloads, infinities, zeros, subnormals."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, size=shape, dtype=np.uint64).astype(np.uint32)
    specials = np.array([0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FBFFFFF, 0x7F800000, 0xFF800000, 0x80000000, 0, 1],
                        dtype=np.uint32)
    pick = rng.integers(0, 4, size=shape) == 0
    bits[pick] = specials[rng.integers(0, len(specials), size=int(pick.sum()))]
    return bits.view(np.float32)


@pytest.mark.parametrize("rows,cols", [(1, 1), (1, 1000), (1000, 1), (31, 33), (1000, 3), (1024, 1024), (4097, 5)])
def test_transpose_is_x_T_to_the_bit(rows, cols):
    x = _nan_bits((rows, cols), rows + cols)
    got = vyre.lib.transpose(x)
    assert got.dtype == np.float32 and got.shape == (cols, rows) and got.flags.c_contiguous
    assert np.array_equal(got.view(np.uint32), x.T.view(np.uint32))


def test_transpose_every_dtype_shapes_and_device_arrays():
    u = np.random.default_rng(8).integers(0, 2**32, size=(70, 9), dtype=np.uint64).astype(np.uint32)
    assert np.array_equal(vyre.lib.transpose(u), u.T)
    raw = np.random.default_rng(9).integers(0, 256, size=(37, 8 * 13), dtype=np.uint8)  # random bits, NaNs too
    for dtype in (np.uint8, np.int8, np.uint16, np.int16, np.bool_, np.float16, np.float64):
        x = (raw & 1).astype(np.bool_) if dtype == np.bool_ else raw.view(dtype)
        got = vyre.lib.transpose(x)
        assert got.dtype == x.dtype and got.shape == x.T.shape, dtype
        assert np.array_equal(got.view(np.uint8), np.ascontiguousarray(x.T).view(np.uint8)), dtype
    i = u.view(np.int32)
    report = []
    assert np.array_equal(vyre.lib.transpose(i, tile=16, rows_per_invocation=2, report=report), i.T)
    assert report[0]["shape"] == "tile=16 rows_per_invocation=2" and report[0]["family"] == "transpose i32"
    backend = vyre.default_backend()
    x = _uniform((50, 40), -1, 1, 9)
    t = vyre.lib.transpose(backend.upload(x))
    assert isinstance(t, vyre.DeviceArray) and t.shape == (40, 50)
    assert np.array_equal(vyre.lib.transpose(t).numpy(), x)  # twice, without leaving the GPU
    assert vyre.lib.transpose(np.zeros((0, 5), np.float32)).shape == (5, 0)


def test_transpose_errors_say_what_to_do():
    with pytest.raises(vyre.InputError, match=r"x has the shape \(2, 3, 4\); transpose takes a 2-D array"):
        vyre.lib.transpose(np.zeros((2, 3, 4), np.float32))
    with pytest.raises(vyre.DTypeError, match=r"x is complex128; it takes uint32, int32, float32"):
        vyre.lib.transpose(np.zeros((2, 3), np.complex128))
    with pytest.raises(vyre.InputError, match=r"tile is 8, 16 or 32"):
        vyre.lib.transpose(np.zeros((2, 3), np.float32), tile=64)


def _scipy_softmax(x):
    """scipy.special.softmax(x, axis=-1)'s computation, in float64: exp(x - max) / sum."""
    x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        shifted = np.exp(x64 - np.max(x64, axis=-1, keepdims=True))
        return shifted / np.sum(shifted, axis=-1, keepdims=True)


def _lanes(report):
    """The lanes a row of the softmax the report tells of ran with."""
    return int(dict(part.split("=") for part in report[-1]["shape"].split())["lanes"])


def _expect_softmax(got, x, lanes):
    """Within docs/lib.md's relative bound: 2 (u d + (3 + 2 d) eps) + depth u + 2.5 eps, d the row's
    largest |x - max| (at most 88), depth the additions of the sum, ceil(cols / lanes) + log2(lanes);
    plus 2**-126 for flushed results."""
    want = _scipy_softmax(x)
    assert got.dtype == np.float32 and got.shape == x.shape
    with np.errstate(invalid="ignore"):
        spread = np.minimum(np.max(np.abs(x.astype(np.float64) - np.max(x, axis=-1, keepdims=True)), axis=-1,
                                   keepdims=True), 88.0)
    depth = -(-x.shape[-1] // lanes) + lanes.bit_length() - 1
    bound = 2 * (U * spread + (3 + 2 * spread) * EPS) + depth * U + 2.5 * EPS
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    err = np.abs(got.astype(np.float64) - want)
    assert np.all(err[~nan] <= (bound * want + 2.0**-126)[~nan])


@pytest.mark.parametrize("cols", [1, 2, 31, 32, 33, 1000, 65537])
def test_softmax_against_scipys_formula(cols):
    for rows in (1, 3, 70):
        if rows * cols > 5_000_000:
            continue
        x = _uniform((rows, cols), -10, 10, rows * 7 + cols)
        report = []
        _expect_softmax(vyre.lib.softmax(x, report=report), x, _lanes(report))


def test_softmax_along_the_last_axis_of_any_rank_and_on_device_arrays():
    report = []
    x = _uniform((4, 5, 33), -5, 5, 10)
    _expect_softmax(vyre.lib.softmax(x, axis=2, report=report), x, _lanes(report))
    assert report[-1]["size_class"] == "rows 2^5 cols 2^6"  # 20 rows of 33
    v = _uniform(17, -5, 5, 11)
    _expect_softmax(vyre.lib.softmax(v, report=report), v, _lanes(report))
    backend = vyre.default_backend()
    m = _uniform((20, 30), -4, 4, 12)
    on_gpu = vyre.lib.softmax(backend.upload(m), workgroup=64, lanes=16, report=report)
    assert isinstance(on_gpu, vyre.DeviceArray) and on_gpu.shape == (20, 30)
    assert report[-1]["source"] == "given" and report[-1]["shape"] == "workgroup=64 lanes=16"
    _expect_softmax(on_gpu.numpy(), m, 16)
    # axis 0 as the docstring says: transpose, softmax, transpose.
    by_column = vyre.lib.transpose(vyre.lib.softmax(vyre.lib.transpose(m), report=report))
    _expect_softmax(np.ascontiguousarray(by_column.T), np.ascontiguousarray(m.T), _lanes(report))
    assert vyre.lib.softmax(np.zeros((0, 4), np.float32)).shape == (0, 4)


def test_softmax_large_magnitudes_nan_and_infinities_as_scipy():
    inf, nan = np.inf, np.nan
    x = np.array([[1000, 999, -1000, 1000], [1, nan, 2, 0], [-inf, -inf, -inf, -inf], [0, -inf, 1, -inf],
                  [3, inf, -inf, 0], [inf, inf, 1, 2]], dtype=np.float32)
    report = []
    got = vyre.lib.softmax(x, report=report)
    _expect_softmax(got, x, _lanes(report))
    assert np.all(np.isfinite(got[0])) and np.all(np.isnan(got[[1, 2, 4, 5]]))
    assert got[3, 1] == 0 and got[3, 3] == 0


def test_softmax_errors_say_what_to_do():
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(vyre.InputError, match=r"axis=0: only the last axis is built.*vyre.lib.transpose"):
        vyre.lib.softmax(x, axis=0)
    with pytest.raises(vyre.InputError, match=r"axis must be an int naming one of x's 2 axes, not 2"):
        vyre.lib.softmax(x, axis=2)
    with pytest.raises(vyre.InputError, match=r"x is 0-D"):
        vyre.lib.softmax(np.ones((), np.float32))
    with pytest.raises(vyre.DTypeError, match=r"x is float64; it takes float32"):
        vyre.lib.softmax(x.astype(np.float64))
    with pytest.raises(vyre.InputError, match=r"lanes is a power of two from 1 to the workgroup"):
        vyre.lib.softmax(x, workgroup=64, lanes=128)
    with pytest.raises(vyre.InputError, match=r"tune must be True, False or None"):
        vyre.lib.softmax(x, tune="yes")
