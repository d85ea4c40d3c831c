"""vyre.lib.compact, nonzero and histogram on lavapipe, against NumPy exactly: every dtype, random
masks from fixed seeds, NumPy and DeviceArray in and out, the edges and comparisons of
numpy.histogram on random float32 and integer data, and errors naming the Python argument."""

import numpy as np
import pytest

import vyre
import vyre.lib

LENGTHS = [0, 1, 3, 31, 32, 33, 1000, 65537, 2**20 + 3]
VALUE_DTYPES = [np.uint32, np.int32, np.float32, np.float64, np.float16, np.uint8, np.int8, np.uint16, np.int16,
                np.bool_]
HISTOGRAM_DTYPES = [np.uint32, np.int32, np.float32, np.uint8, np.uint16, np.int8, np.int16]


def _values(n, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=n).astype(np.bool_)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
    x = rng.uniform(-1000, 1000, size=n).astype(dtype)
    x[::7] = 0
    x[1::11] = -0.0
    x[2::13] = np.nan
    x[3::17] = np.inf
    return x


def _runs(dtype):
    """Whether the device has the feature a dtype needs (shader-f64, shader-f16)."""
    try:
        vyre.lib.nonzero(np.ones(1, dtype=dtype))
        return True
    except vyre.Error as e:
        if "shader-f" in str(e):
            return False
        raise


@pytest.mark.parametrize("dtype", VALUE_DTYPES)
def test_compact_and_nonzero_are_numpys(dtype):
    if not _runs(dtype):
        pytest.skip(f"the device cannot run {np.dtype(dtype)}")
    rng = np.random.default_rng(7)
    for n in LENGTHS:
        x = _values(n, dtype, n)
        for density in (0.0, 0.001, 0.5, 1.0):
            mask = rng.random(n) < density
            got = vyre.lib.compact(x, mask)
            assert got.dtype == x.dtype
            np.testing.assert_array_equal(got.view(np.uint8), x[mask].view(np.uint8))  # the bits, NaN's too
            where = vyre.lib.nonzero(np.where(mask, x, np.zeros_like(x)))
            assert where.dtype == np.uint32
            np.testing.assert_array_equal(where, np.nonzero(np.where(mask, x, np.zeros_like(x)))[0])


@pytest.mark.parametrize("mask_dtype", [np.bool_, np.uint8, np.uint32, np.int32])
def test_compact_takes_every_mask_dtype(mask_dtype):
    rng = np.random.default_rng(8)
    x = rng.integers(0, 2**16, size=100003, dtype=np.uint16)
    mask = (rng.random(x.size) < 0.3) * rng.integers(1, 100, size=x.size)
    if mask_dtype == np.int32:
        mask = -mask
    mask = mask.astype(mask_dtype)
    np.testing.assert_array_equal(vyre.lib.compact(x, mask), x[mask != 0])


def test_nonzero_of_floats_is_numpys():
    x = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45, 1.0, 0.0], dtype=np.float32)
    np.testing.assert_array_equal(vyre.lib.nonzero(x), np.nonzero(x)[0])
    y = np.arange(12, dtype=np.int32).reshape(3, 4) % 3
    np.testing.assert_array_equal(vyre.lib.nonzero(y), np.flatnonzero(y))


def test_device_arrays_stay_on_the_gpu():
    backend = vyre.default_backend()
    x = np.arange(70000, dtype=np.float32)
    mask = (x % 3 == 0)
    dx = backend.upload(x)
    dm = backend.upload(mask)
    kept = vyre.lib.compact(dx, dm)
    assert isinstance(kept, vyre.DeviceArray) and kept.size == mask.sum() and kept.dtype == "float32"
    np.testing.assert_array_equal(kept.numpy(), x[mask])
    where = vyre.lib.nonzero(dm)
    assert isinstance(where, vyre.DeviceArray)
    np.testing.assert_array_equal(where.numpy(), np.nonzero(mask)[0])
    none = vyre.lib.compact(dx, backend.upload(np.zeros(70000, np.uint8)))
    assert isinstance(none, vyre.DeviceArray) and none.size == 0


def test_compact_and_nonzero_errors_name_the_argument():
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(vyre.DTypeError, match="mask is float32"):
        vyre.lib.compact(x, x)
    with pytest.raises(vyre.InputError, match="x has the shape \\(4,\\) but mask \\(3,\\)"):
        vyre.lib.compact(x, np.ones(3, dtype=bool))
    with pytest.raises(vyre.DTypeError, match="x is int64"):
        vyre.lib.compact(np.arange(4), np.ones(4, dtype=bool))
    with pytest.raises(vyre.DTypeError, match="x must be a NumPy array"):
        vyre.lib.nonzero([1, 2])
    with pytest.raises(vyre.InputError, match="items is 1 to 32"):
        vyre.lib.nonzero(x, items=33)
    with pytest.raises(vyre.InputError, match="workgroup must be a power of two"):
        vyre.lib.compact(x, x > 1, workgroup=48)


def _histogram_data(dtype, n, seed):
    rng = np.random.default_rng(seed)
    if dtype == np.float32:
        x = rng.normal(0, 300, size=n).astype(np.float32)
        x[::101] = np.nan
        x[1::103] = np.inf
        x[2::107] = -0.0
        return x
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)


def _ranges(dtype):
    if dtype == np.float32:
        return [(-500.0, 700.25), (0.1, 0.7), (-1, 1), (3.0, 3.0)]
    info = np.iinfo(dtype)
    return [(info.min, info.max), (float(info.min) / 3, float(info.max) / 2 + 0.5), (-0.5, 10.5), (7, 7)]


@pytest.mark.parametrize("dtype", HISTOGRAM_DTYPES)
def test_histogram_is_numpys_exactly(dtype):
    for n in (0, 1, 33, 1000, 65537, 2**20 + 3):
        x = _histogram_data(dtype, n, n)
        for bins in (1, 7, 256, 4096, 100000):
            for lo, hi in _ranges(dtype):
                try:
                    want, want_edges = np.histogram(x, bins=bins, range=(lo, hi))
                except ValueError:  # too many bins for the range in its dtype
                    with pytest.raises(vyre.InputError):
                        vyre.lib.histogram(x, bins=bins, range=(lo, hi))
                    continue
                got, edges, outside = vyre.lib.histogram(x, bins=bins, range=(lo, hi), with_outside=True)
                assert got.dtype == np.uint32
                np.testing.assert_array_equal(got, want, err_msg=f"{np.dtype(dtype)} n={n} bins={bins} {lo, hi}")
                np.testing.assert_array_equal(edges, want_edges)
                assert edges.dtype == want_edges.dtype
                assert outside == n - want.sum()


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.int16])
def test_histogram_with_numpys_other_forms(dtype):
    x = _histogram_data(dtype, 50001, 5)
    finite = x[np.isfinite(x)] if dtype == np.float32 else x
    # range=None: x's extremes (NumPy scalars of x's dtype, so float32 arithmetic for float32).
    want, want_edges = np.histogram(finite, bins=33)
    got, edges = vyre.lib.histogram(finite, bins=33)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(edges, want_edges)
    # NumPy scalars in the range set the edges' dtype.
    for lo, hi in ((np.float64(-0.3), np.float64(100.1)), (np.float32(-0.3), np.float32(100.1))):
        want, want_edges = np.histogram(x, bins=17, range=(lo, hi))
        got, edges = vyre.lib.histogram(x, bins=17, range=(lo, hi))
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(edges, want_edges)
    # Given edges, float64 and float32, some repeated.
    rng = np.random.default_rng(6)
    for edge_dtype in (np.float64, np.float32):
        given = np.sort(rng.uniform(-400, 400, size=300)).astype(edge_dtype)
        given[10] = given[9]
        want, _ = np.histogram(x, bins=given)
        got, edges = vyre.lib.histogram(x, bins=given)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(edges, given)


def test_histogram_of_a_device_array():
    x = _histogram_data(np.float32, 70000, 9)
    backend = vyre.default_backend()
    got, edges, outside = vyre.lib.histogram(backend.upload(x), bins=50, range=(-200, 200), with_outside=True)
    want, want_edges = np.histogram(x, bins=50, range=(-200, 200))
    assert isinstance(got, vyre.DeviceArray)
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(edges, want_edges)
    assert outside == x.size - want.sum()
    # range=None from the GPU's min and max.
    ints = _histogram_data(np.int32, 5000, 10)
    got, edges = vyre.lib.histogram(backend.upload(ints), bins=9)
    np.testing.assert_array_equal(got.numpy(), np.histogram(ints, bins=9)[0])


def test_histogram_errors_name_the_argument():
    x = np.arange(10, dtype=np.float32)
    with pytest.raises(vyre.InputError, match="bins must be at least 1"):
        vyre.lib.histogram(x, bins=0, range=(0, 1))
    with pytest.raises(vyre.InputError, match="range=\\(2, 1\\) has its low end above its high end"):
        vyre.lib.histogram(x, bins=3, range=(2, 1))
    with pytest.raises(vyre.InputError, match="is not finite"):
        vyre.lib.histogram(x, bins=3, range=(0, np.inf))
    with pytest.raises(vyre.InputError, match="range must be"):
        vyre.lib.histogram(x, bins=3, range=5)
    with pytest.raises(vyre.InputError, match="must increase monotonically"):
        vyre.lib.histogram(x, bins=[0, 2, 1])
    with pytest.raises(vyre.InputError, match="bins must be a number of bins"):
        vyre.lib.histogram(x, bins="auto")
    with pytest.raises(vyre.InputError, match="too many bins"):
        vyre.lib.histogram(x, bins=1000, range=(1, 1.00001))
    with pytest.raises(vyre.DTypeError, match="x is float64"):
        vyre.lib.histogram(np.zeros(3), bins=3, range=(0, 1))
    with pytest.raises(vyre.InputError, match="not finite"):
        vyre.lib.histogram(np.array([1, np.nan], dtype=np.float32), bins=3)
