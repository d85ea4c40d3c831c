"""vyre.lib on lavapipe: reduce and scan of every dtype and op against NumPy at the lengths where
passes change, NumPy and DeviceArray in and out, edge values, and errors in Python's terms."""

import numpy as np
import pytest

import vyre
import vyre.lib

LENGTHS = [0, 1, 31, 32, 33, 1000, 65537, 2**20 + 3]
DTYPES = [np.uint32, np.int32, np.float32, np.float64]


def _values(n, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
    return rng.uniform(-1000, 1000, size=n).astype(dtype)


def _numpy_op(op):
    return {"sum": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or,
            "xor": np.bitwise_xor}[op]


def _ops(dtype):
    return ["sum", "min", "max"] + (["and", "or", "xor"] if np.issubdtype(dtype, np.integer) else [])


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_every_op_and_length_against_numpy(dtype):
    for n in LENGTHS:
        x = _values(n, dtype, n)
        for op in _ops(dtype):
            if n == 0 and op in ("min", "max"):
                continue
            got = vyre.lib.reduce(x, op)
            assert got.dtype == dtype
            if op == "sum" and not np.issubdtype(dtype, np.integer):
                # Within the documented bound: passes * (items + log2 W) * eps * sum|x|, passes <= 3.
                bound = 3 * (4 + 8) * np.finfo(dtype).eps * np.abs(x.astype(np.float64)).sum()
                assert abs(float(got) - x.astype(np.float64).sum()) <= bound, (op, n)
            else:
                # The integer sum wraps at 32 bits: NumPy's reduce in the same dtype does too.
                want = _numpy_op(op).reduce(x, dtype=dtype) if n else np.array(_numpy_op(op).identity).astype(dtype)
                assert got == want, (op, n)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scan_every_op_and_length_against_numpy(dtype):
    for n in LENGTHS:
        x = _values(n, dtype, 100 + n)
        for op in _ops(dtype):
            got = vyre.lib.scan(x, op)
            assert got.dtype == dtype and got.shape == (n,)
            if op == "sum" and not np.issubdtype(dtype, np.integer):
                exact = np.cumsum(x.astype(np.float64))
                magnitude = np.cumsum(np.abs(x.astype(np.float64)))
                assert np.all(np.abs(got - exact) <= 3 * (4 + 8 + 2) * np.finfo(dtype).eps * magnitude), n
            else:
                np.testing.assert_array_equal(got, _numpy_op(op).accumulate(x, dtype=dtype) if n else x)
            exclusive = vyre.lib.scan(x, op, inclusive=False)
            if n > 1 and (np.issubdtype(dtype, np.integer) or op != "sum"):
                np.testing.assert_array_equal(exclusive[1:], got[:-1])


def test_cumsum_is_numpys_for_integers_and_wraps_at_32_bits():
    x = np.array([2**31 - 1, 1, 5], dtype=np.int32)
    np.testing.assert_array_equal(vyre.lib.cumsum(x), np.array([2**31 - 1, -2**31, -2**31 + 5], dtype=np.int32))
    assert vyre.lib.sum(np.array([2**32 - 1, 2], dtype=np.uint32)) == 1


def test_any_shape_is_its_elements_in_order():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert vyre.lib.sum(x) == 66
    np.testing.assert_array_equal(vyre.lib.cumsum(x), np.cumsum(x))
    assert vyre.lib.max(x[:, ::2]) == 10  # a strided view is copied to its elements first


def test_edge_values():
    nan, inf = np.float32(np.nan), np.float32(np.inf)
    x = np.ones(5000, dtype=np.float32)
    x[3000] = nan
    assert np.isnan(vyre.lib.min(x)) and np.isnan(vyre.lib.max(x))
    running = vyre.lib.scan(x, "max")
    assert not np.isnan(running[2999]) and np.isnan(running[3000]) and np.isnan(running[-1])
    y = np.array([3, -inf, 2, inf], dtype=np.float32)
    assert vyre.lib.min(y) == -inf and vyre.lib.max(y) == inf
    assert np.signbit(vyre.lib.sum(np.full(3000, -0.0, dtype=np.float32)))
    assert not np.signbit(vyre.lib.sum(np.zeros(0, dtype=np.float32)))
    assert vyre.lib.reduce(np.zeros(0, dtype=np.uint32), "and") == np.uint32(2**32 - 1)


def test_device_arrays_stay_on_the_device():
    backend = vyre.default_backend()
    x = np.arange(50000, dtype=np.uint32)  # its sum, 1,249,975,000, does not wrap
    d = backend.upload(x)
    prefix = vyre.lib.cumsum(d)
    assert isinstance(prefix, vyre.DeviceArray) and prefix.size == 50000
    total = vyre.lib.reduce(prefix, "max")
    assert isinstance(total, vyre.DeviceArray)
    assert total.numpy()[0] == np.cumsum(x, dtype=np.uint32)[-1]


def test_errors_name_the_python_argument():
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(vyre.DTypeError, match=r"vyre.lib.reduce: x must be a NumPy array or a vyre.DeviceArray, not list"):
        vyre.lib.sum([1, 2])
    with pytest.raises(vyre.DTypeError, match=r"vyre.lib.scan: x is int64; it takes uint32, int32, float32, float64, float16, uint8"):
        vyre.lib.cumsum(np.arange(3))
    with pytest.raises(vyre.InputError, match=r"op must be one of 'sum', 'min'.*not 'prod'"):
        vyre.lib.reduce(x, "prod")
    with pytest.raises(vyre.DTypeError, match=r"op 'xor' takes integer or bool arrays \(uint32, int32, uint8, int8, uint16, int16, bool\), not float32"):
        vyre.lib.scan(x, "xor")
    with pytest.raises(vyre.InputError, match=r"vyre.lib.reduce: min of zero elements has no value"):
        vyre.lib.min(np.zeros(0, dtype=np.float32))
    with pytest.raises(vyre.InputError, match=r"workgroup must be a power of two from 1 to 1024, not 100"):
        vyre.lib.scan(x, workgroup=100)
    with pytest.raises(vyre.InputError, match=r"items must be a positive int or None \(chosen for the device\), not 0"):
        vyre.lib.reduce(x, items=0)
    with pytest.raises(vyre.InputError, match=r"inclusive must be True or False"):
        vyre.lib.scan(x, inclusive="yes")
    # A DeviceArray of bytes sums into a DeviceArray of its accumulator, uint32.
    on_gpu = vyre.lib.sum(vyre.default_backend().upload(np.full(4, 200, dtype=np.uint8)))
    assert on_gpu.dtype == "uint32" and on_gpu.numpy()[0] == 800


@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.float32])
def test_sort_and_argsort_against_numpys_stable_sort(dtype):
    for n in LENGTHS:
        keys = _values(n, dtype, 200 + n)
        keys[::3] = keys[: (n + 2) // 3]  # equal keys, so that stability is seen
        np.testing.assert_array_equal(vyre.lib.sort(keys), np.sort(keys, kind="stable"))
        np.testing.assert_array_equal(vyre.lib.argsort(keys), np.argsort(keys, kind="stable").astype(np.uint32))
        down = vyre.lib.argsort(keys, descending=True)
        # Descending: the reverse order, equal keys still in input order.
        np.testing.assert_array_equal(down, np.argsort(-keys.astype(np.float64), kind="stable").astype(np.uint32))


def test_sort_nan_last_and_pairs():
    x = np.array([3, np.nan, -np.inf, -0.0, 0.0, -np.nan, np.inf], dtype=np.float32)
    got = vyre.lib.sort(x)
    np.testing.assert_array_equal(got[:5], [-np.inf, -0.0, 0.0, 3, np.inf])
    assert np.signbit(got[1]) and not np.signbit(got[2])
    assert np.isnan(got[5:]).all()
    assert np.isnan(vyre.lib.sort(x, descending=True)[:2]).all()
    keys, values = vyre.lib.sort(np.array([5, 1, 5, 0], dtype=np.uint32), np.arange(4, dtype=np.uint32))
    np.testing.assert_array_equal(keys, [0, 1, 5, 5])
    np.testing.assert_array_equal(values, [3, 1, 0, 2])
    backend = vyre.default_backend()
    on_gpu = vyre.lib.sort(backend.upload(np.array([2, 1], dtype=np.int32)))
    assert isinstance(on_gpu, vyre.DeviceArray)
    np.testing.assert_array_equal(on_gpu.numpy(), [1, 2])


def test_sort_errors_name_the_python_argument():
    keys = np.array([3, 1], dtype=np.uint32)
    with pytest.raises(vyre.DTypeError, match=r"vyre.lib.sort: keys are float64; it takes uint32, int32, float32, "
                                              r"float16, uint8"):
        vyre.lib.sort(np.array([1.0]))
    with pytest.raises(vyre.DTypeError, match=r"vyre.lib.sort: keys are bool"):
        vyre.lib.sort(np.array([True]))
    with pytest.raises(vyre.InputError, match=r"2 keys but 3 values"):
        vyre.lib.sort(keys, np.arange(3, dtype=np.uint32))
    with pytest.raises(vyre.InputError, match=r"workgroup must be a power of two from 16 to 128, not 256"):
        vyre.lib.sort(keys, workgroup=256)
    with pytest.raises(vyre.InputError, match=r"descending must be True or False"):
        vyre.lib.sort(keys, descending=1)
    with pytest.raises(vyre.InputError, match=r"radix_bits must be 4, 5, 6, 8 or None .*not 7"):
        vyre.lib.sort(keys, radix_bits=7)
    with pytest.raises(vyre.InputError, match=r"radix_bits must be .*not 4.0"):
        vyre.lib.sort(keys, radix_bits=4.0)
    with pytest.raises(vyre.InputError, match=r"at 6 bits the workgroup is at most 32"):
        vyre.lib.sort(keys, workgroup=64, radix_bits=6)


def test_sort_with_wider_digits():
    keys = _values(70001, np.float32, 77)
    keys[::5] = keys[:14001]
    report = []
    got = vyre.lib.sort(keys, np.arange(keys.size, dtype=np.uint32), workgroup=32, items=16, radix_bits=6,
                        report=report)
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(got[0], keys[order])
    np.testing.assert_array_equal(got[1], order.astype(np.uint32))
    assert report[0]["shape"] == "workgroup=32 items=16 radix_bits=6"
    # 8-bit digits: four passes; pairs where a workgroup's keys and values fit its memory.
    got = vyre.lib.sort(keys, np.arange(keys.size, dtype=np.uint32), workgroup=64, items=16, radix_bits=8)
    np.testing.assert_array_equal(got[0], keys[order])
    np.testing.assert_array_equal(got[1], order.astype(np.uint32))
    np.testing.assert_array_equal(vyre.lib.sort(keys, workgroup=128, items=16, radix_bits=8), keys[order])
    with pytest.raises(vyre.InputError, match=r"at most 1,024 keys a workgroup"):
        vyre.lib.sort(keys, np.arange(keys.size, dtype=np.uint32), workgroup=128, items=16, radix_bits=8)
    with pytest.raises(vyre.InputError, match=r"8-bit digits take 32-bit keys and values .*not u16"):
        vyre.lib.sort(keys.astype(np.uint16), radix_bits=8)


@pytest.mark.parametrize("dtype", [np.uint32, np.int32])
def test_bincount_against_numpy(dtype):
    rng = np.random.default_rng(7)
    for n in LENGTHS:
        for top in (1, 300, 5000):
            x = rng.integers(0, top, size=n).astype(dtype)
            got = vyre.lib.bincount(x)
            assert got.dtype == np.uint32
            np.testing.assert_array_equal(got, np.bincount(x))
            np.testing.assert_array_equal(vyre.lib.bincount(x, minlength=top + 3), np.bincount(x, minlength=top + 3))


def test_bincount_errors_and_device_arrays():
    with pytest.raises(vyre.InputError, match=r"vyre.lib.bincount: x has the negative value -2"):
        vyre.lib.bincount(np.array([1, -2], dtype=np.int32))
    with pytest.raises(vyre.DTypeError, match=r"x is float32; it takes uint32, int32, uint8, int8, uint16 or int16"):
        vyre.lib.bincount(np.array([1.0], dtype=np.float32))
    with pytest.raises(vyre.InputError, match=r"minlength must be an int of 0 or more"):
        vyre.lib.bincount(np.array([1], dtype=np.uint32), minlength=-1)
    assert vyre.lib.bincount(np.zeros(0, dtype=np.uint32)).shape == (0,)
    backend = vyre.default_backend()
    counts = vyre.lib.bincount(backend.upload(np.array([0, 2, 2], dtype=np.uint32)))
    assert isinstance(counts, vyre.DeviceArray)
    np.testing.assert_array_equal(counts.numpy(), [1, 0, 2])


def _tuned_sum_in_a_fresh_process(cache, tune):
    """vyre.lib.sum of 5,000 float32 in a new process on `cache`, with its report."""
    import json
    import os
    import subprocess
    import sys
    script = (
        "import json, numpy as np, vyre.lib\n"
        "report = []\n"
        "x = np.arange(5000, dtype=np.float32)\n"
        f"total = vyre.lib.sum(x, tune={tune!r}, report=report)\n"
        "print(json.dumps({'total': float(total), 'report': report}))\n"
    )
    env = dict(os.environ, VYRE_AOT_CACHE_DIR=str(cache), VYRE_TUNE_WARMUP="1", VYRE_TUNE_REPETITIONS="1")
    env.pop("VYRE_TUNE", None)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_tuned_shape_is_recorded_and_a_second_process_times_nothing(tmp_path):
    first = _tuned_sum_in_a_fresh_process(tmp_path, True)
    assert first["total"] == 5000 * 4999 / 2
    [choice] = first["report"]
    assert choice["source"] == "tuned" and choice["family"] == "reduce f32 sum"
    assert choice["size_class"] == "2^13 elements" and choice["record_key"]
    second = _tuned_sum_in_a_fresh_process(tmp_path, True)
    assert second["report"] == [dict(choice, source="record", ms=second["report"][0]["ms"])]
    # Without tuning: the device class's default, whatever the cache holds.
    plain = _tuned_sum_in_a_fresh_process(tmp_path, False)
    assert plain["report"][0]["source"] == "default" and plain["report"][0]["record_key"] == ""


def test_a_given_shape_is_reported_as_given_and_tuning_arguments_are_checked():
    report = []
    assert vyre.lib.sum(np.ones(100, dtype=np.uint32), report=report) == 100
    assert vyre.lib.reduce(np.ones(100, dtype=np.uint32), "sum", workgroup=64, report=report) == 100
    assert [r["source"] for r in report] == ["default", "given"]
    assert report[1]["shape"].startswith("workgroup=64 items=")
    with pytest.raises(vyre.InputError, match=r"vyre.lib.sum: tune must be True, False or None"):
        vyre.lib.sum(np.ones(3, dtype=np.uint32), tune="yes")
    with pytest.raises(vyre.InputError, match=r"vyre.lib.scan: report must be a list"):
        vyre.lib.scan(np.ones(3, dtype=np.uint32), report={})


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.bool_, np.float16])
def test_narrow_bool_and_float16_arrays_reduce_and_scan_in_their_accumulator(dtype):
    rng = np.random.default_rng(5)
    n = 70001
    if dtype == np.bool_:
        x = rng.integers(0, 2, size=n).astype(np.bool_)
    elif dtype == np.float16:
        x = (rng.integers(-1000, 1001, size=n) / 8).astype(np.float16)  # eighths: exact sums in float32
    else:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dtype)
    acc = {np.uint8: np.uint32, np.uint16: np.uint32, np.bool_: np.uint32, np.int8: np.int32, np.int16: np.int32,
           np.float16: np.float32}[dtype]
    wide = x.astype(acc)
    total = vyre.lib.sum(x)
    assert total.dtype == acc and total == wide.sum(dtype=acc)
    assert vyre.lib.max(x) == wide.max() and vyre.lib.max(x).dtype == acc
    running = vyre.lib.cumsum(x)
    assert running.dtype == acc
    np.testing.assert_array_equal(running, np.cumsum(wide, dtype=acc))


@pytest.mark.parametrize("key_dtype, value_dtype", [(np.uint8, np.float32), (np.int16, np.uint8), (np.float16, np.int32)])
def test_narrow_and_float16_keys_sort_with_values_of_any_dtype(key_dtype, value_dtype):
    rng = np.random.default_rng(6)
    if key_dtype == np.float16:
        keys = rng.normal(size=5000).astype(np.float16)
    else:
        info = np.iinfo(key_dtype)
        keys = rng.integers(info.min, info.max, size=5000, endpoint=True, dtype=key_dtype)
    values = np.arange(5000).astype(value_dtype)
    got_keys, got_values = vyre.lib.sort(keys, values)
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(got_keys, keys[order])
    np.testing.assert_array_equal(got_values, values[order])
    assert got_values.dtype == value_dtype
