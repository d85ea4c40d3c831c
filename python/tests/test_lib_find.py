"""vyre.lib.find on lavapipe: every occurrence of many byte patterns against a search in Python,
at the lengths where chunks change, bytes / NumPy / DeviceArray in, str and bytes patterns,
overlapping, nested and duplicate patterns, and errors in Python's terms."""

import re

import numpy as np
import pytest

import vyre
import vyre.lib

LENGTHS = [0, 1, 31, 32, 33, 1000, 65537, 2**20 + 3]


def _python_find(haystack: bytes, patterns):
    """(pattern_index, position) by position, then pattern: a lookahead finds overlapping matches."""
    pairs = []
    for p, pattern in enumerate(patterns):
        pattern = pattern.encode("utf-8") if isinstance(pattern, str) else pattern
        pairs += [(m.start(), p) for m in re.finditer(b"(?=" + re.escape(pattern) + b")", haystack)]
    pairs.sort()
    return (np.array([p for _, p in pairs], dtype=np.uint32), np.array([pos for pos, _ in pairs], dtype=np.uint32))


def _haystack(n, alphabet, seed, plant=()):
    rng = np.random.default_rng(seed)
    h = np.frombuffer(alphabet, dtype=np.uint8)[rng.integers(0, len(alphabet), size=n)].copy()
    for k, at in enumerate(range(250, n, 1777)):  # across 256-byte chunk boundaries and elsewhere
        if plant:
            p = np.frombuffer(plant[k % len(plant)], dtype=np.uint8)[: n - at]
            h[at:at + len(p)] = p
    return h


def _check(haystack, patterns, **kw):
    got_index, got_position = vyre.lib.find(haystack, patterns, **kw)
    as_bytes = haystack.tobytes() if isinstance(haystack, np.ndarray) else bytes(haystack)
    want_index, want_position = _python_find(as_bytes, patterns)
    assert got_index.dtype == np.uint32 and got_position.dtype == np.uint32
    np.testing.assert_array_equal(got_position, want_position)
    np.testing.assert_array_equal(got_index, want_index)
    return len(want_index)


def test_every_length_small_alphabet_nested_and_duplicate_patterns():
    patterns = [b"a", b"aa", "aab", b"ab", b"b", b"aa", b"bab", b"abab"]
    found = 0
    for n in LENGTHS:
        found += _check(_haystack(n, b"ab", n), patterns)
    assert found > 1_000_000


def test_every_length_all_bytes_with_planted_secrets():
    rng = np.random.default_rng(7)
    upper = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
    patterns = [b"AKIA" + bytes(rng.choice(np.frombuffer(upper, np.uint8), 16)) for _ in range(300)]
    patterns += [b"ghp_" + bytes(rng.integers(48, 123, 36, dtype=np.uint8)) for _ in range(300)]
    patterns += [b"AKIA", b"\x00\xff", b"\xff", "-----BEGIN RSA PRIVATE KEY-----"]
    for n in LENGTHS:
        found = _check(_haystack(n, bytes(range(256)), 100 + n, plant=patterns), patterns)
        if n >= 1000:
            assert found > 0


def test_overlapping_runs_and_a_pattern_longer_than_a_chunk():
    for n in (0, 1, 299, 300, 301, 1000, 4099):
        _check(np.full(n, ord("a"), dtype=np.uint8), [b"a" * 300, b"a", b"aa", b"aaa"])
    _check(b"a" * 1000, [b"a" * 40], chunk=16, workgroup=8)


def test_bytes_numpy_and_device_array_give_the_same():
    haystack = _haystack(70007, b"abc", 3)
    patterns = [b"abc", "ca", b"cc"]
    want = vyre.lib.find(haystack, patterns)
    for given in (haystack.tobytes(), bytearray(haystack.tobytes()), memoryview(haystack.tobytes()),
                  haystack.reshape(7, -1)):
        got = vyre.lib.find(given, patterns)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    backend = vyre.lib.default_backend()
    on_gpu = vyre.lib.find(backend.upload(haystack), patterns, backend=backend)
    assert all(isinstance(a, vyre.DeviceArray) for a in on_gpu)
    np.testing.assert_array_equal(on_gpu[0].numpy(), want[0])
    np.testing.assert_array_equal(on_gpu[1].numpy(), want[1])


def test_no_match_and_report():
    report = []
    index, position = vyre.lib.find(b"abcabc", [b"zz", b"cb"], report=report)
    assert index.size == 0 and position.size == 0 and index.dtype == np.uint32
    assert report[0]["family"] == "find"
    assert report[0]["source"] == "default"
    index, _ = vyre.lib.find(b"abc", [b"c"], workgroup=32, chunk=64, report=report)
    assert report[-1]["shape"] == "workgroup=32 chunk=64" and report[-1]["source"] == "given"
    assert list(index) == [0]


def test_errors_name_the_argument():
    with pytest.raises(vyre.InputError, match=r"patterns\[1\] is empty"):
        vyre.lib.find(b"abc", [b"a", b""])
    with pytest.raises(vyre.InputError, match=r"patterns\[0\] is int"):
        vyre.lib.find(b"abc", [3])
    with pytest.raises(vyre.InputError, match="patterns must be a list"):
        vyre.lib.find(b"abc", b"a")
    with pytest.raises(vyre.InputError, match="at most 65536"):
        vyre.lib.find(b"abc", [b"a"] * 65537)
    with pytest.raises(vyre.InputError, match="at most 32768"):
        vyre.lib.find(b"abc", [b"a" * 32769])
    with pytest.raises(vyre.DTypeError, match="haystack is int32; it takes uint8"):
        vyre.lib.find(np.zeros(4, dtype=np.int32), [b"a"])
    with pytest.raises(vyre.DTypeError, match="haystack must be bytes"):
        vyre.lib.find("text", [b"a"])
    backend = vyre.lib.default_backend()
    with pytest.raises(vyre.DTypeError, match="DeviceArray of uint32"):
        vyre.lib.find(backend.upload(np.zeros(4, dtype=np.uint32)), [b"a"], backend=backend)
    with pytest.raises(vyre.InputError, match="chunk must be an int from 16 to 4096"):
        vyre.lib.find(b"abc", [b"a"], chunk=8)
    with pytest.raises(vyre.InputError, match="workgroup must be a power of two from 1 to 256"):
        vyre.lib.find(b"abc", [b"a"], workgroup=512)
    with pytest.raises(vyre.InputError, match="transitions"):  # from the library: the automaton's bound
        rng = np.random.default_rng(1)
        vyre.lib.find(b"abc", [bytes(rng.integers(0, 256, 160, dtype=np.uint8)) for _ in range(1000)])
