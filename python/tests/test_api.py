"""Programs, kernels, device-resident values and batches."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import vyre
from conftest import EXAMPLES, cli_path

N = 1000


def test_program_from_path_text_dict_and_validate(saxpy):
    text = (EXAMPLES / "saxpy.json").read_text()
    assert vyre.Program.from_json(text) == saxpy
    assert vyre.Program.from_json(str(EXAMPLES / "saxpy.json")) == saxpy
    assert vyre.Program.from_dict(json.loads(text)) == saxpy
    assert vyre.validate(json.loads(text)) == saxpy
    assert vyre.Program.from_json(saxpy.to_json()) == saxpy
    assert saxpy.name == "saxpy" and saxpy.workgroup_size == (64, 1, 1)
    assert [b["name"] for b in saxpy.buffers] == ["alpha", "x", "y", "out"]
    assert saxpy.buffers[0] == {"name": "alpha", "binding": 0, "access": "read", "dtype": "float32",
                                "count": 1, "output": False}
    assert len(saxpy.digest) == 64 and hash(saxpy) == hash(vyre.Program.from_json(text))
    with pytest.raises(TypeError):
        vyre.Program.from_dict(text)


@pytest.mark.skipif(cli_path() is None, reason="no vyre command line in this build")
def test_digest_and_wgsl_agree_with_the_cli(saxpy):
    cli = str(cli_path())
    path = str(EXAMPLES / "saxpy.json")
    assert subprocess.run([cli, "hash", path], capture_output=True, text=True, check=True).stdout.strip() == saxpy.digest
    wgsl = subprocess.run([cli, "lower", path, "--workgroup", "128,1,1"], capture_output=True, text=True,
                          check=True).stdout
    assert wgsl.strip() == saxpy.wgsl(workgroup=128).strip()
    assert saxpy.wgsl() != saxpy.wgsl(workgroup=(128, 1, 1))


def test_passes_and_fixed_lengths_shape_the_shader_not_the_results(backend, saxpy):
    assert "< 64u" in saxpy.wgsl(fixed_lengths={"out": 64}) and "vyre_lengths[0]" in saxpy.wgsl()
    assert saxpy.wgsl(passes=False) == saxpy.wgsl()  # nothing in saxpy to fold
    x = np.arange(64, dtype=np.float32)
    args = dict(alpha=2.0, x=x, y=np.ones(64, np.float32), sizes={"out": 64})
    fixed = backend.compile(saxpy, fixed_lengths={"out": 64})
    np.testing.assert_array_equal(fixed(**args)["out"], backend.compile(saxpy, passes=False)(**args)["out"])
    with pytest.raises(vyre.InputError, match="specialized for 64"):
        fixed(alpha=2.0, x=x, y=np.ones(64, np.float32), sizes={"out": 32})
    with pytest.raises(vyre.InputError, match="no buffer of that name"):
        backend.compile(saxpy, fixed_lengths={"nope": 3})
    with pytest.raises(TypeError):
        saxpy.wgsl(fixed_lengths=[("out", 64)])


def test_kernel_call_returns_owned_numpy_arrays(backend, saxpy):
    k = backend.compile(saxpy)
    x = np.random.default_rng(1).standard_normal(N).astype(np.float32)
    y = np.ones(N, np.float32)
    out = k(alpha=2.5, x=x, y=y, sizes={"out": N})
    assert set(out) == {"out"}
    r = out["out"]
    assert isinstance(r, np.ndarray) and r.dtype == np.float32 and r.shape == (N,) and r.flags.writeable
    # One rounding (a fused multiply-add, as the H200 does) or two (the product's, then the sum's):
    # within half an ULP of the product and half an ULP of the result from the exact value. Not
    # ULPs of the result alone: where 2.5 * x + y nearly cancels, the two differ by many of those.
    exact = 2.5 * x.astype(np.float64) + 1.0
    result_ulp = np.spacing(np.maximum(np.abs(exact.astype(np.float32)), np.abs(r)))
    bound = (np.spacing(np.abs(np.float32(2.5) * x)) + result_ulp) / 2
    assert np.all(np.abs(r.astype(np.float64) - exact) <= bound)
    del out
    r += 1  # the array owns its memory
    assert k.wgsl.startswith("") and "fn main" in k.wgsl
    assert k.workgroup_size == (64, 1, 1)
    assert k.program == saxpy
    assert set(k.compile_report) >= {"cache_key", "cache_hit", "lower_ms"}


def test_into_writes_caller_memory_without_copies(backend, saxpy):
    k = backend.compile(saxpy)
    x = np.arange(N, dtype=np.float32)
    y = np.ones(N, np.float32)
    out = np.zeros(N, np.float32)
    address = out.__array_interface__["data"][0]
    assert k.into(alpha=2.0, x=x, y=y, out={"out": out}) is None  # the length comes from the array
    assert out.__array_interface__["data"][0] == address
    np.testing.assert_array_equal(out, 2 * x + 1)
    # A 2-D array is its elements in C order.
    out2 = np.zeros((10, N // 10), np.float32)
    k.into(alpha=1.0, x=x, y=y, out={"out": out2})
    np.testing.assert_array_equal(out2.ravel(), x + 1)


def test_warm_into_creates_nothing_on_the_device(saxpy):
    backend = vyre.Backend()
    k = backend.compile(saxpy)
    x, y, out = np.arange(N, dtype=np.float32), np.ones(N, np.float32), np.zeros(N, np.float32)
    k.into(alpha=2.0, x=x, y=y, out={"out": out})
    before = backend.counters
    for i in range(5):
        x[0] = i
        k.into(alpha=2.0, x=x, y=y, out={"out": out})
        assert out[0] == 2 * i + 1
    after = backend.counters
    assert after["buffers_created"] == before["buffers_created"]
    assert after["bind_groups_created"] == before["bind_groups_created"]
    assert after["submits"] == before["submits"] + 5


def test_workgroup_and_ulp_options(backend, saxpy):
    x, y = np.arange(N, dtype=np.float32), np.ones(N, np.float32)
    k = backend.compile(saxpy, workgroup=128)
    assert k.workgroup_size == (128, 1, 1)
    np.testing.assert_array_equal(k(alpha=2.0, x=x, y=y, sizes={"out": N})["out"], 2 * x + 1)
    with pytest.raises(ValueError):
        backend.compile(saxpy, ulp=300)


def test_device_resident_values_chain_without_round_trips(backend, saxpy):
    k = backend.compile(saxpy)
    x = np.arange(N, dtype=np.float32)
    dx = backend.upload(x)
    assert (dx.dtype, dx.size, dx.shape, dx.nbytes, len(dx)) == ("float32", N, (N,), 4 * N, N)
    dy = backend.upload(np.zeros(N, np.float32))
    for _ in range(4):  # y <- 1 * x + y, kept on the GPU
        dy = k.resident(alpha=1.0, x=dx, y=dy, sizes={"out": N})["out"]
    assert isinstance(dy, vyre.DeviceArray)
    np.testing.assert_array_equal(dy.numpy(), 4 * x)
    np.testing.assert_array_equal(np.asarray(dy), 4 * x)
    host = np.empty(N, np.float32)
    dy.read_into(host)
    np.testing.assert_array_equal(host, 4 * x)
    with pytest.raises(vyre.InputError):
        dy.read_into(np.empty(N - 1, np.float32))
    with pytest.raises(TypeError):
        backend.upload(np.zeros(3, np.int64))
    with pytest.raises(vyre.InputError, match="DeviceBuffer of i32 elements; the buffer holds f32"):
        k(alpha=1.0, x=backend.upload(np.zeros(N, np.int32)), y=dx, sizes={"out": N})
    # The reference interpreter reads device values too.
    np.testing.assert_array_equal(k.reference(alpha=1.0, x=dx, y=dx, sizes={"out": N})["out"], 2 * x)


def test_batch_submits_once(saxpy):
    backend = vyre.Backend()
    k = backend.compile(saxpy)
    x = np.arange(N, dtype=np.float32)
    outs = [np.zeros(N, np.float32) for _ in range(3)]
    k.into(alpha=1.0, x=x, y=x, out={"out": outs[0]})  # warm
    submits = backend.counters["submits"]
    with backend.batch() as b:
        value = b.resident(k, alpha=1.0, x=x, y=x, sizes={"out": N})["out"]  # 2x
        for i, out in enumerate(outs):
            b.into(k, alpha=float(i), x=x, y=value, out={"out": out})  # i*x + 2x
        assert len(b) == 4
    assert backend.counters["submits"] == submits + 1
    for i, out in enumerate(outs):
        np.testing.assert_array_equal(out, (i + 2) * x)
    np.testing.assert_array_equal(value.numpy(), 2 * x)


def test_batch_is_cleared_when_the_block_raises(saxpy):
    backend = vyre.Backend()
    k = backend.compile(saxpy)
    x = np.arange(N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    with pytest.raises(RuntimeError, match="stop"):
        with backend.batch() as b:
            b.into(k, alpha=1.0, x=x, y=x, out={"out": out})
            raise RuntimeError("stop")
    assert len(b) == 0 and not out.any()
    b.into(k, alpha=1.0, x=x, y=x, out={"out": out})
    b.run()
    np.testing.assert_array_equal(out, 2 * x)


def test_devices_and_backend_info(backend):
    adapters = vyre.devices()
    assert adapters and {"name", "backend", "type", "fingerprint"} <= set(adapters[0])
    assert backend.adapter["name"] in [a["name"] for a in adapters]
    assert backend.fingerprint
    assert set(backend.report) == {"instance_ms", "adapter_ms", "device_ms", "cache_ms"}
    assert vyre.wgpu_native_version().count(".") == 3
    assert vyre.__version__


def test_tune_picks_a_configuration_that_gives_the_same_results_and_reuses_it(backend, saxpy):
    n = 4096
    x = np.random.default_rng(3).standard_normal(n).astype(np.float32)
    y = np.random.default_rng(4).standard_normal(n).astype(np.float32)
    args = dict(alpha=1.5, x=x, y=y, sizes={"out": n})
    tuned = backend.tune(saxpy, **args)
    t = tuned.tuning
    assert t is not None and t["applied"] and len(t["record_key"]) == 64
    assert len(t["candidates"]) >= 10 and t["candidates"][0]["workgroup"] == (64, 1, 1)
    assert tuned.workgroup_size == t["workgroup"]
    own = backend.compile(saxpy)(**args)["out"]
    np.testing.assert_array_equal(tuned(**args, grid=tuned.tuned_grid)["out"], own)
    # The record is in the cache: a second tune times nothing.
    again = backend.tune(saxpy, **args)
    assert again.tuning["reused"] and again.tuning["record_key"] == t["record_key"]
    assert again.tuning["workgroup"] == t["workgroup"] and again.tuning["vector_width"] == t["vector_width"]
    assert backend.compile(saxpy).tuning is None
    with pytest.raises(vyre.InputError):
        backend.tune(saxpy, alpha=1.5, x=x, sizes={"out": n})  # y missing


def test_a_python_run_prints_nothing_on_stderr_without_xdg_runtime_dir(tmp_path):
    import os
    import sys
    script = (
        "import numpy as np, vyre\n"
        "x = np.arange(100, dtype=np.uint32)\n"
        "out = vyre.Backend().compile(vyre.Program.from_json(%r))(a=x, b=x, sizes={'out': 100})['out']\n"
        "assert not out.any()\n"
        "import os; assert os.environ['XDG_RUNTIME_DIR'].split('/')[-1].startswith('vyre-runtime-')\n"
    ) % str(EXAMPLES / "xor.json")
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "VYRE_LOG")}
    env["VYRE_AOT_CACHE_DIR"] = str(tmp_path / "cache")
    env["TMPDIR"] = str(tmp_path)  # where the private runtime directory is made, and must be gone from
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert not list(tmp_path.glob("vyre-runtime-*")), "the runtime directory is removed at exit"
