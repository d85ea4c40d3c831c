"""The kernel language: what each Python construct computes (on the GPU and on the reference,
against NumPy), the declarations each parameter spelling stands for, constexpr and captured
values, @vyre.func inlining, and that a kernel is translated once."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import vyre
from vyre import f32, i32, u32
from vyre import _translate

SCALE = 3


def run_both(kernel, **kwargs):
    gpu = kernel(**kwargs)
    ref = kernel.reference(**kwargs)
    for name in gpu:
        np.testing.assert_array_equal(gpu[name], ref[name], err_msg=name)
    return gpu


def declarations(kernel):
    return {b["name"]: b for b in json.loads(kernel.program.to_json())["buffers"]}


def test_each_parameter_spelling_is_its_json_declaration():
    @vyre.kernel(workgroup=(16, 16))
    def spellings(alpha: f32, n: vyre.In[u32, 4], u: vyre.Uniform[i32, 2], x: vyre.In[f32],
                  io: vyre.InOut[u32], out: vyre.Out[f32, 8]):
        tile = vyre.shared(f32, 32)
        i = vyre.gid.x
        tile[0] = alpha
        io[i] = n[0] + u32(u[1])
        out[i] = x[i] + tile[0]

    got = declarations(spellings)
    assert got["alpha"] == {"name": "alpha", "binding": 0, "access": "uniform", "type": "f32", "count": 1}
    assert got["n"] == {"name": "n", "binding": 1, "access": "read", "type": "u32", "count": 4}
    assert got["u"] == {"name": "u", "binding": 2, "access": "uniform", "type": "i32", "count": 2}
    assert got["x"] == {"name": "x", "binding": 3, "access": "read", "type": "f32"}
    assert got["io"] == {"name": "io", "binding": 4, "access": "read_write", "type": "u32", "output": True}
    assert got["out"] == {"name": "out", "binding": 5, "access": "read_write", "type": "f32", "count": 8,
                          "output": True}
    assert got["tile"] == {"name": "tile", "access": "workgroup", "type": "f32", "count": 32}
    assert spellings.program.workgroup_size == (16, 16, 1)


def test_a_bare_scalar_is_read_as_a_value_and_passed_as_a_number():
    @vyre.kernel(workgroup=64)
    def saxpy(alpha: f32, x: vyre.In[f32], y: vyre.In[f32], out: vyre.Out[f32]):
        i = vyre.gid.x
        if i < len(out):
            out[i] = alpha * x[i] + y[i]

    x = np.arange(100, dtype=np.float32)
    y = np.ones_like(x)
    out = run_both(saxpy, alpha=2.0, x=x, y=y, sizes={"out": 100})["out"]
    np.testing.assert_array_equal(out, np.float32(2) * x + y)
    assert saxpy.program == vyre.Backend().compile(saxpy).program


def test_unsigned_arithmetic_bitwise_and_control_flow_match_numpy():
    @vyre.kernel(workgroup=64)
    def ops(a: vyre.In[u32], b: vyre.In[u32], out: vyre.Out[u32]):
        i = vyre.gid.x
        if i >= len(a):
            return
        x = a[i]
        y = b[i]
        r = 0
        r += x // y + x % y
        r ^= (x << 3) | (y >> 1) & ~x
        r += max(x, y) - min(x, y) + vyre.clamp(x, 10, 20)
        r += 1 if x > y and not x == 7 or y == 0 else 2
        total = 0
        for k in range(10, 0, -3):
            total += k
        for k in range(1, 20, 4):
            if k == 9:
                continue
            total += k
        n = 0
        while True:
            n += 1
            if n >= 5:
                break
        out[i] = r + total + n

    rng = np.random.default_rng(1)
    a = rng.integers(0, 1000, 256, dtype=np.uint32)
    b = rng.integers(1, 50, 256, dtype=np.uint32)
    got = run_both(ops, a=a, b=b, sizes={"out": 256})["out"]
    x, y = a.astype(np.int64), b.astype(np.int64)
    r = x // y + x % y
    r ^= ((x << 3) | ((y >> 1) & (~x & 0xFFFFFFFF))) & 0xFFFFFFFF
    r += np.maximum(x, y) - np.minimum(x, y) + np.clip(x, 10, 20)
    r += np.where(((x > y) & (x != 7)) | (y == 0), 1, 2)
    total = sum(range(10, 0, -3)) + sum(k for k in range(1, 20, 4) if k != 9)
    np.testing.assert_array_equal(got, ((r + total + 5) & 0xFFFFFFFF).astype(np.uint32))



def test_range_with_a_step_counts_as_python_does_and_never_wraps():
    # Each loop's trips written as Python counts them, near the ends of u32 and i32 too.
    @vyre.kernel(workgroup=8)
    def steps(start: vyre.In[i32], out: vyre.Out[u32]):
        i = vyre.gid.x
        if i >= len(start):
            return
        s = start[i]
        down = u32(0)
        for k in range(s, i32(-7), -3):        # i32 down: the format's step
            down = down * 7 + u32(k + 7)
        up = u32(0)
        for k in range(u32(4294967290) + i % 4, u32(4294967295), 3):  # u32 up, next step past the end
            up += 1
        ud = u32(0)
        for k in range(u32(4294967295) - i, u32(2), -2147483647):     # u32 down: the trip form
            ud = ud * 10 + 1
        lo = u32(0)
        for k in range(i32(-2147483647) - 1 + vyre.i32(i % 5), i32(-2147483648) + 1, 2):
            lo += 1
        out[i * 4] = down
        out[i * 4 + 1] = up
        out[i * 4 + 2] = ud
        out[i * 4 + 3] = lo

    start = np.arange(-12, 20, dtype=np.int32)
    got = run_both(steps, start=start, sizes={"out": 4 * len(start)}, dim=len(start))["out"].reshape(-1, 4)
    assert json.loads(steps.program.to_json())["vyre"] == 4
    for i, s in enumerate(start.tolist()):
        down = 0
        for k in range(s, -7, -3):
            down = (down * 7 + k + 7) & 0xFFFFFFFF
        ud = 0
        for _ in range(4294967295 - i, 2, -2147483647):
            ud = ud * 10 + 1
        want = [down, len(range(4294967290 + i % 4, 4294967295, 3)), ud,
                len(range(-2147483648 + i % 5, -2147483647, 2))]
        assert got[i].tolist() == want, i


def test_a_range_reads_its_bound_once_as_python_does():
    # The body changes what the bound reads; Python evaluated range's arguments before the first trip.
    @vyre.kernel(workgroup=1)
    def shrinking(out: vyre.Out[u32, 3]):
        n = u32(5)
        trips = u32(0)
        for k in range(n):
            n -= 1
            trips += 1
        out[0] = trips
        m = i32(9)
        down = u32(0)
        for k in range(i32(0), m, 2):
            m = i32(0)
            down += 1
        out[1] = down
        out[2] = n

    got = run_both(shrinking, grid=(1, 1, 1))["out"]
    assert got.tolist() == [5, 5, 0]

def test_signed_float_casts_and_truncating_division():
    @vyre.kernel(workgroup=64)
    def mixed(a: vyre.In[i32], f: vyre.In[f32], q: vyre.Out[i32], g: vyre.Out[f32]):
        i = vyre.gid.x
        if i < len(q):
            v = a[i]
            q[i] = vyre.div_trunc(v, 7) * 100 + vyre.rem_trunc(v, 7) + abs(-v) - i32(f[i])
            g[i] = vyre.sqrt(abs(f[i])) + f[i] // 2.0 + f32(v) ** 2.0 + vyre.floor(-f[i])

    a = np.array([-20, -7, -1, 0, 1, 13, 100, -100], dtype=np.int32)
    f = np.array([-2.5, 0.25, 3.75, -0.5, 9.0, 1.5, -7.25, 4.0], dtype=np.float32)
    out = mixed(a=a, f=f, sizes={"q": 8, "g": 8})
    ref = mixed.reference(a=a, f=f, sizes={"q": 8, "g": 8})
    trunc_q = np.trunc(a / 7).astype(np.int64)
    want_q = trunc_q * 100 + (a - trunc_q * 7) + np.abs(a) - np.trunc(f).astype(np.int64)
    np.testing.assert_array_equal(out["q"], want_q.astype(np.int32))
    np.testing.assert_array_equal(ref["q"], want_q.astype(np.int32))
    want_g = np.sqrt(np.abs(f)) + np.floor(f / 2) + a.astype(np.float32) ** 2 + np.floor(-f)
    np.testing.assert_allclose(out["g"], want_g, rtol=1e-5)
    np.testing.assert_allclose(ref["g"], want_g, rtol=1e-5)


def test_atomics_return_the_old_value():
    @vyre.kernel(workgroup=64)
    def tickets(counter: vyre.InOut[u32, 1], got: vyre.Out[u32]):
        i = vyre.gid.x
        if i < len(got):
            got[i] = vyre.atomic_add(counter, 0, 1)

    out = tickets(counter=np.zeros(1, np.uint32), sizes={"got": 128}, grid=2)  # counter is the first output
    assert sorted(out["got"].tolist()) == list(range(128))
    assert out["counter"][0] == 128


def test_helpers_are_inlined():
    @vyre.func
    def lerp(a, b, t):
        d = b - a
        return a + d * t

    @vyre.func
    def square(v):
        return v * v

    @vyre.kernel(workgroup=64)
    def blend(x: vyre.In[f32], y: vyre.In[f32], out: vyre.Out[f32]):
        i = vyre.gid.x
        if i < len(out):
            out[i] = lerp(x[i], y[i], 0.25) + square(x[i] + 1.0)

    x = np.arange(64, dtype=np.float32)
    y = x * 3
    got = run_both(blend, x=x, y=y, sizes={"out": 64})["out"]
    np.testing.assert_allclose(got, x + (y - x) * 0.25 + (x + 1) ** 2, rtol=1e-6)
    with pytest.raises(TypeError, match="inlined"):
        square(2.0)


def test_constexpr_specializes_each_value():
    @vyre.kernel(workgroup=64)
    def add_n(n: vyre.constexpr, x: vyre.In[u32], out: vyre.Out[u32]):
        i = vyre.gid.x
        if i < len(out):
            out[i] = x[i] + n

    x = np.arange(10, dtype=np.uint32)
    np.testing.assert_array_equal(add_n(n=3, x=x, sizes={"out": 10})["out"], x + 3)
    np.testing.assert_array_equal(add_n(n=5, x=x, sizes={"out": 10})["out"], x + 5)
    assert add_n.program_for(n=3).digest != add_n.program_for(n=5).digest
    assert add_n.program_for(n=3).digest == add_n.program_for(n=3).digest
    with pytest.raises(TypeError, match="constexpr parameter 'n' needs a value"):
        add_n.program


def test_a_changed_global_translates_again(monkeypatch):
    @vyre.kernel(workgroup=64)
    def scaled(x: vyre.In[u32], out: vyre.Out[u32]):
        i = vyre.gid.x
        if i < len(out):
            out[i] = x[i] * SCALE

    x = np.arange(10, dtype=np.uint32)
    np.testing.assert_array_equal(scaled(x=x, sizes={"out": 10})["out"], x * 3)
    first = scaled.program.digest
    monkeypatch.setitem(globals(), "SCALE", 7)
    np.testing.assert_array_equal(scaled(x=x, sizes={"out": 10})["out"], x * 7)
    assert scaled.program.digest != first


def test_a_changed_closure_value_translates_again():
    factor = 2

    @vyre.kernel(workgroup=64)
    def times(x: vyre.In[f32], out: vyre.Out[f32]):
        i = vyre.gid.x
        if i < len(out):
            out[i] = x[i] * factor

    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(times.reference(x=x, sizes={"out": 4})["out"], x * 2)
    factor = 0.5  # noqa: F841  (read by the kernel's next call)
    np.testing.assert_array_equal(times.reference(x=x, sizes={"out": 4})["out"], x * 0.5)


def test_a_kernel_is_translated_once(monkeypatch):
    calls = []
    real = _translate.translate

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(_translate, "translate", counting)

    @vyre.kernel(workgroup=64)
    def copy(x: vyre.In[u32], out: vyre.Out[u32]):
        i = vyre.gid.x
        if i < len(out):
            out[i] = x[i]

    assert calls == []  # nothing happens at decoration
    x = np.arange(8, dtype=np.uint32)
    for _ in range(3):
        np.testing.assert_array_equal(copy(x=x, sizes={"out": 8})["out"], x)
        copy.program
    assert len(calls) == 1


def test_the_body_never_runs_in_python():
    @vyre.kernel(workgroup=64)
    def k(x: vyre.In[u32], out: vyre.Out[u32]):
        i = vyre.gid.x
        if i < len(out):
            out[i] = x[i]

    calls = []

    def profiler(frame, event, arg):
        if event == "call" and frame.f_code is k.fn.__code__:
            calls.append(frame)

    sys.setprofile(profiler)
    try:
        assert k.program.digest
    finally:
        sys.setprofile(None)
    assert calls == []


SH, SW = 5, 7


@vyre.kernel(workgroup=(8, 8))
def shaped_transpose(img: vyre.In[f32, (SH, SW)], out: vyre.Out[f32, (SW, SH)]):
    x = vyre.gid.x
    y = vyre.gid.y
    if x < SW and y < SH:
        out[x, y] = img[y, x]


@vyre.kernel(workgroup=(8, 8))
def flat_transpose(img: vyre.In[f32, 35], out: vyre.Out[f32, 35]):
    x = vyre.gid.x
    y = vyre.gid.y
    if x < SW and y < SH:
        out[x * 5 + y] = img[y * 7 + x]


def test_a_shaped_buffer_is_indexed_row_major_as_the_flat_index_it_stands_for():
    assert shaped_transpose.program.digest == flat_transpose.program.digest
    img = np.arange(SH * SW, dtype=np.float32).reshape(SH, SW)
    out = shaped_transpose(img=img, grid=(1, 1))["out"]
    np.testing.assert_array_equal(out.reshape(SW, SH), img.T)

    @vyre.kernel(workgroup=4)
    def volume(v: vyre.InOut[u32, (2, 3, 4)]):
        i = vyre.gid.x
        if i < 4:
            v[1, 2, i] = i + 100

    got = volume(v=np.zeros((2, 3, 4), np.uint32), grid=1)["v"].reshape(2, 3, 4)
    want = np.zeros((2, 3, 4), np.uint32)
    want[1, 2, :] = np.arange(4) + 100
    np.testing.assert_array_equal(got, want)


def test_a_shaped_buffer_takes_every_index_of_one_type():
    def partial(img: vyre.In[f32, (SH, SW)], out: vyre.Out[f32]):
        out[0] = img[1]

    with pytest.raises(vyre.KernelError, match=r"img takes 2 indices: img\[y, x\] \(shape \(5, 7\)"):
        vyre.kernel(partial).program

    def mixed(img: vyre.In[f32, (SH, SW)], out: vyre.Out[f32]):
        out[0] = img[vyre.gid.y, i32(vyre.gid.x)]

    with pytest.raises(vyre.KernelError, match="share one type"):
        vyre.kernel(mixed).program
    with pytest.raises(TypeError, match=r"a shape is 2 or 3 positive ints"):
        vyre.In[f32, (4, 0)]


def test_bindings_scratch_select_and_the_phony_assignment():
    @vyre.kernel(workgroup=64, dim="out")
    def spelled(x: vyre.In[u32] = vyre.bind(4), tmp: vyre.Scratch[u32] = vyre.bind(1),
                out: vyre.Out[u32] = vyre.bind(2), hits: vyre.Out[u32, 1] = vyre.bind(7)):
        i = vyre.gid.x
        tmp[i] = x[i] * 3
        _ = tmp[i] + 1  # evaluated and dropped: an eval
        # select evaluates both sides, atomics included: every invocation counts one hit
        out[i] = vyre.select(x[i] > 2, tmp[i], vyre.atomic_add(hits, 0, 1) * 0 + x[i])

    decls = declarations(spelled)
    assert {n: d["binding"] for n, d in decls.items()} == {"x": 4, "tmp": 1, "out": 2, "hits": 7}
    assert decls["tmp"]["access"] == "read_write" and "output" not in decls["tmp"]
    body = json.loads(spelled.program.to_json())["body"]
    assert {"eval": {"add": [{"load": "tmp", "index": {"var": "i"}}, {"u32": 1}]}} in body
    x = np.arange(100, dtype=np.uint32)
    out = run_both(spelled, x=x, sizes={"tmp": 100, "out": 100})
    assert set(out) == {"out", "hits"}  # scratch is not read back
    np.testing.assert_array_equal(out["out"], np.where(x > 2, x * 3, x))
    assert out["hits"][0] == 100


def test_a_parameter_default_other_than_its_binding_is_refused():
    def body(x: vyre.In[u32], out: vyre.Out[u32] = 3):
        out[vyre.gid.x] = x[vyre.gid.x]

    with pytest.raises(vyre.KernelTypeError, match=r"default value is its binding, vyre.bind\(N\)"):
        vyre.kernel(body).program

    def negative(x: vyre.In[u32], out: vyre.Out[u32] = vyre.bind(-1)):
        out[vyre.gid.x] = x[vyre.gid.x]

    with pytest.raises(vyre.KernelTypeError, match="a binding number"):
        vyre.kernel(negative).program


def test_private_arrays_hold_a_register_tile_and_a_sort_network():
    # acc = vyre.array(T, N): the invocation's own zeroed array, indexed as a buffer is; len() is N.
    @vyre.kernel(workgroup=16)
    def rows(a: vyre.In[f32], b: vyre.In[f32], x: vyre.In[i32], tile: vyre.Out[f32], srt: vyre.Out[i32]):
        i = vyre.gid.x
        if i * 4 >= len(x):
            return
        acc = vyre.array(f32, 4)
        for k in range(8):
            ak = a[i * 8 + k]
            for c in range(len(acc)):
                acc[c] += ak * b[k * 4 + c]
        for c in range(4):
            tile[i * 4 + c] = acc[c]
        v = vyre.array(i32, 4)
        for k in range(4):
            v[k] = x[i * 4 + k]
        for _ in range(3):
            for k in range(3):
                if v[k] > v[k + 1]:
                    t = v[k]
                    v[k] = v[k + 1]
                    v[k + 1] = t
        for k in range(4):
            srt[i * 4 + k] = v[k]

    n = 32
    rng = np.random.default_rng(7)
    a = rng.integers(-5, 6, n * 8).astype(np.float32)
    b = rng.integers(-4, 5, 8 * 4).astype(np.float32)
    x = rng.integers(-1000, 1000, n * 4).astype(np.int32)
    got = run_both(rows, a=a, b=b, x=x, sizes={"tile": n * 4, "srt": n * 4}, dim=n)
    assert json.loads(rows.program.to_json())["vyre"] == 4
    np.testing.assert_array_equal(got["tile"].reshape(n, 4), a.reshape(n, 8) @ b.reshape(8, 4))
    np.testing.assert_array_equal(got["srt"].reshape(n, 4), np.sort(x.reshape(n, 4), axis=1))


def test_a_private_array_declared_in_a_loop_is_new_and_zeroed_each_trip():
    @vyre.kernel
    def trips(out: vyre.Out[u32]):
        total = u32(0)
        for r in range(3):
            z = vyre.array(u32, 3)
            z[r] += r + 1
            total += z[0] + z[1] + z[2]
        out[0] = total

    assert run_both(trips, sizes={"out": 1}, dim=1)["out"][0] == 1 + 2 + 3


def test_a_private_array_index_out_of_range_is_the_last_element_or_an_error_at_its_line_checked():
    @vyre.kernel
    def past(k: vyre.In[u32], out: vyre.Out[u32]):
        w = vyre.array(u32, 4)
        w[k[0]] = 9
        out[0] = w[3]

    got = run_both(past, k=np.array([6], np.uint32), sizes={"out": 1}, dim=1)
    assert got["out"][0] == 9
    with pytest.raises(vyre.KernelError) as e:
        past.reference(k=np.array([6], np.uint32), sizes={"out": 1}, dim=1, check_bounds=True)
    assert "private array 'w' at index 6, out of its 4 elements" in e.value.reason
    assert e.value.line == past.fn.__code__.co_firstlineno + 3
