"""Launches (docs/gpu.md, "Launches"): a call with neither dim= nor grid= runs only a kernel proven
element-wise over its first output; dim= runs exactly the invocations asked for, and invocations past
it have no effect, on the GPU and on the reference alike; messages speak Python."""

from __future__ import annotations

import numpy as np
import pytest

import vyre
from conftest import EXAMPLES
from vyre import f32, u32


@vyre.kernel(workgroup=256)
def byte_histogram(data: vyre.In[u32], bins: vyre.Out[u32, 256]):
    i = vyre.gid.x
    vyre.atomic_add(bins, data[i] & 255, 1)


@vyre.kernel(workgroup=(16, 16))
def row_blur(w: u32, img: vyre.In[f32], out: vyre.Out[f32]):
    x = vyre.gid.x
    y = vyre.gid.y
    left = x - 1 if x > 0 else x
    right = x + 1 if x + 1 < w else x
    out[y * w + x] = (img[y * w + left] + img[y * w + x] + img[y * w + right]) / 3.0


@vyre.kernel(workgroup=64, dim="out")
def doubled(x: vyre.In[u32], out: vyre.Out[u32]):
    i = vyre.gid.x
    out[i] = x[i] * 2


H, W = 21, 37  # neither a multiple of the 16x16 workgroup


@vyre.kernel(workgroup=(16, 16), dim="out")
def shaped_blur(img: vyre.In[f32, (H, W)], out: vyre.Out[f32, (H, W)]):
    x = vyre.gid.x
    y = vyre.gid.y
    left = x - 1 if x > 0 else x
    right = x + 1 if x + 1 < W else x
    out[y, x] = (img[y, left] + img[y, x] + img[y, right]) / 3.0


def blurred(img: np.ndarray) -> np.ndarray:
    left = np.concatenate([img[:, :1], img[:, :-1]], axis=1)
    right = np.concatenate([img[:, 1:], img[:, -1:]], axis=1)
    return ((left + img) + right) / np.float32(3.0)


@pytest.mark.parametrize("run", ["gpu", "reference"])
def test_the_newcomers_histogram_is_refused_without_a_launch_and_counts_every_byte_with_dim(run):
    data = (np.arange(100_003, dtype=np.uint32) * np.uint32(7919)) & np.uint32(0xFFFF)
    call = byte_histogram if run == "gpu" else byte_histogram.reference
    with pytest.raises(vyre.InputError) as refused:
        call(data=data)
    message = str(refused.value)
    assert "atomics" in message and "dim=" in message and "grid=" in message
    assert "--dim" not in message and "Inputs::dim" not in message
    bins = call(data=data, dim=len(data))["bins"]
    assert bins.sum() == len(data)
    assert np.array_equal(bins, np.bincount(data & 255, minlength=256).astype(np.uint32))


@pytest.mark.parametrize("run", ["gpu", "reference"])
def test_a_2d_kernel_without_a_bounds_check_is_right_with_dim_and_refused_without(run):
    h, w = 21, 37  # neither a multiple of the 16x16 workgroup
    img = np.random.default_rng(1).random((h, w), dtype=np.float32)
    call = row_blur if run == "gpu" else row_blur.reference
    with pytest.raises(vyre.InputError, match="not one-dimensional"):
        call(w=w, img=img.ravel(), sizes={"out": h * w})
    out = call(w=w, img=img.ravel(), sizes={"out": h * w}, dim=(w, h))["out"]
    np.testing.assert_allclose(out.reshape(h, w), blurred(img), rtol=1e-6)


def test_a_declared_domain_needs_no_dim_and_no_check_in_the_body():
    x = np.arange(1000, dtype=np.uint32)
    assert np.array_equal(doubled(x=x, sizes={"out": 1000})["out"], x * 2)
    assert np.array_equal(doubled.reference(x=x, sizes={"out": 1000})["out"], x * 2)
    # Invocations 1000..1023 of the last workgroup have no effect: an output longer than the
    # domain keeps its zeroes past it (dim= overrides the declared domain).
    longer = doubled(x=x, sizes={"out": 1000}, dim=600)["out"]
    assert np.array_equal(longer[:600], x[:600] * 2) and not longer[600:].any()


def test_a_declared_domain_is_format_version_2_and_leaves_version_1_digests_alone():
    program = doubled.program
    text = program.to_json()
    assert '"vyre": 2' in text and '"domain": "out"' in text
    assert vyre.Program.from_json(text).digest == program.digest
    plain = vyre.kernel(workgroup=64)(doubled.fn).program
    assert '"vyre": 1' in plain.to_json() and "domain" not in plain.to_json()
    assert plain.digest != program.digest


@pytest.mark.parametrize("run", ["gpu", "reference"])
def test_a_declared_domain_runs_in_its_buffers_shape(run):
    img = np.random.default_rng(2).random((H, W), dtype=np.float32)
    call = shaped_blur if run == "gpu" else shaped_blur.reference
    out = call(img=img)["out"]  # no dim=, no grid=, no bounds check in the body
    assert out.shape == (H, W)
    np.testing.assert_allclose(out, blurred(img), rtol=1e-6)


def test_a_domain_in_a_shape_is_format_version_3_and_reads_back_from_json():
    text = shaped_blur.program.to_json()
    assert '"vyre": 3' in text and f'"domain": {{"buffer": "out", "shape": [{H}, {W}]}}' in text
    assert vyre.Program.from_json(text).digest == shaped_blur.program.digest
    flat = vyre.kernel(workgroup=(16, 16))(shaped_blur.fn).program
    assert '"vyre": 1' in flat.to_json() and flat.digest != shaped_blur.program.digest


def test_a_domain_naming_no_buffer_is_an_error_at_the_kernel():
    def body(x: vyre.In[u32], out: vyre.Out[u32]):
        out[vyre.gid.x] = x[vyre.gid.x]

    with pytest.raises(vyre.KernelError, match="names no buffer"):
        vyre.kernel(dim="nothing")(body).program


def test_dim_and_grid_together_are_refused_in_python_terms():
    x = np.arange(10, dtype=np.uint32)
    with pytest.raises(vyre.InputError, match="give dim= or grid=, not both"):
        doubled(x=x, sizes={"out": 10}, dim=10, grid=1)


def test_a_missing_size_is_asked_for_as_a_python_argument():
    x = np.arange(10, dtype=np.uint32)
    with pytest.raises(vyre.InputError, match=r'sizes=\{"out": n\}'):
        doubled(x=x, dim=10)


def test_outputs_keep_a_shape_given_in_sizes_or_declared_and_uploads_keep_theirs():
    xor = vyre.Backend().compile(vyre.Program.from_json(EXAMPLES / "xor.json"))
    a = np.arange(12, dtype=np.uint32).reshape(3, 4)
    out = xor(a=a, b=a, sizes={"out": (3, 4)})["out"]
    assert out.shape == (3, 4) and not out.any()
    assert xor.reference(a=a, b=a, sizes={"out": (3, 4)})["out"].shape == (3, 4)
    assert xor(a=a, b=a, sizes={"out": 12})["out"].shape == (12,)
    with pytest.raises(vyre.RangeError, match=r"sizes\['out'\] = \(65536, 65536\) does not hold a u32 length"):
        xor(a=a, b=a, sizes={"out": (65536, 65536)})

    @vyre.kernel(workgroup=(8, 8))
    def double2d(img: vyre.In[f32, (3, 4)], out: vyre.Out[f32, (3, 4)]):
        x = vyre.gid.x
        y = vyre.gid.y
        if x < 4 and y < 3:
            out[y, x] = img[y, x] * 2.0

    img = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert np.array_equal(double2d(img=img, grid=(1, 1))["out"], img * 2)
    assert np.array_equal(double2d.reference(img=img, grid=(1, 1))["out"], img * 2)

    uploaded = vyre.Backend().upload(img)
    assert uploaded.shape == (3, 4) and len(uploaded) == 3 and uploaded.size == 12
    assert np.array_equal(uploaded.numpy(), img)
