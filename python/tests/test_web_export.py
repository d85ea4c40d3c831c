"""Program.export_web: the web target from Python (`vyre export web`, docs/web.md)."""

from __future__ import annotations

import json
import subprocess

import pytest

import vyre
from conftest import EXAMPLES, cli_path

DOUBLE_IT = {
    "vyre": 4, "name": "double_it", "workgroup_size": [64, 1, 1],
    "buffers": [{"name": "x", "binding": 0, "access": "read", "type": "f64"},
                {"name": "out", "binding": 1, "access": "read_write", "type": "f64", "output": True}],
    "body": [{"let": "i", "value": {"gid": "x"}},
             {"if": {"lt": [{"var": "i"}, {"len": "out"}]}, "then": [
                 {"store": "out", "index": {"var": "i"}, "value": {"load": "x", "index": {"var": "i"}}}]}],
}


def test_export_web_writes_the_module_types_package_and_demo(saxpy, tmp_path):
    report = saxpy.export_web(tmp_path / "saxpy", EXAMPLES / "saxpy.run.json")
    assert report["target"] == "web/webgpu-1"
    assert report["files"] == ["kernel.js", "kernel.d.ts", "package.json", "index.html"]
    assert [s["role"] for s in report["shaders"]] == ["wide", "base", "guard"]
    module = (tmp_path / "saxpy" / "kernel.js").read_text()
    assert "export async function createKernel(device)" in module and saxpy.digest in module
    for shader in report["shaders"]:
        assert shader["key"] in module
    package = json.loads((tmp_path / "saxpy" / "package.json").read_text())
    assert package["name"] == "vyre-kernel-saxpy" and package["types"] == "./kernel.d.ts"
    assert "readonly x: Float32Array | Uint32Array;" in (tmp_path / "saxpy" / "kernel.d.ts").read_text()
    assert "the run file" in (tmp_path / "saxpy" / "index.html").read_text()
    # The shader options shape the keys as they shape the WGSL.
    other = saxpy.export_web(tmp_path / "wide128", workgroup=128)
    assert [s["key"] for s in other["shaders"]] != [s["key"] for s in report["shaders"]]


@pytest.mark.skipif(cli_path() is None, reason="no vyre command line in this build")
def test_export_web_matches_the_command(saxpy, tmp_path):
    report = saxpy.export_web(tmp_path / "python")
    out = subprocess.run([str(cli_path()), "export", "web", str(EXAMPLES / "saxpy.json"), "-o", str(tmp_path / "cli"),
                          "--json"], capture_output=True, text=True, check=True).stdout
    assert json.loads(out)["kernels"][0]["shaders"] == report["shaders"]


def test_an_f64_program_is_refused_saying_what_to_do(tmp_path):
    program = vyre.Program.from_dict(DOUBLE_IT)
    with pytest.raises(vyre.InputError, match="computes in f64.*Convert the f64 data to f32"):
        program.export_web(tmp_path / "double_it")
    assert not (tmp_path / "double_it").exists()
