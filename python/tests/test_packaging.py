"""Pins agree across the files that name them; the stub names what the module has."""

from __future__ import annotations

import ast
import re

import vyre
from vyre import _ext
from conftest import SOURCE_DIR


def pins(text):
    return dict(re.findall(r"^\s*([A-Za-z0-9_.-]+)==([^\s#\"]+)", text, re.M))


def test_build_requirements_match_the_development_pins():
    pyproject = (SOURCE_DIR / "pyproject.toml").read_text()
    requires = re.search(r"^requires = \[(.*)\]", pyproject, re.M).group(1)
    build = dict(re.findall(r'"([A-Za-z0-9_.-]+)==([^"]+)"', requires))
    dev = pins((SOURCE_DIR / "python" / "requirements-dev.txt").read_text())
    for name in ("nanobind", "scikit-build-core"):
        assert build[name] == dev[name], name
    setup = (SOURCE_DIR / "scripts" / "setup").read_text()
    assert build["wgpu"] == re.search(r"^WGPU_WHEEL_VERSION=(\S+)", setup, re.M).group(1)


def test_the_stub_and_the_module_agree():
    stub = ast.parse((SOURCE_DIR / "python" / "vyre" / "_ext.pyi").read_text())
    declared = {n.name for n in stub.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    declared -= {"BufferInfo"}
    actual = {n for n in dir(_ext) if not n.startswith("__")}
    assert declared == actual
    for cls in ("Program", "Kernel", "Backend", "Batch", "DeviceArray"):
        node = next(n for n in stub.body if isinstance(n, ast.ClassDef) and n.name == cls)
        methods = {f.name for f in node.body if isinstance(f, ast.FunctionDef)} - {"__init__"}
        for m in methods:
            assert hasattr(getattr(_ext, cls), m), f"{cls}.{m}"


def test_public_names():
    for name in vyre.__all__:
        assert hasattr(vyre, name), name
    assert (SOURCE_DIR / "python" / "vyre" / "py.typed").exists()


def test_requires_python_is_what_the_build_requirements_allow():
    # The pinned wgpu wheel (wgpu-native's source for the build) declares
    # Requires-Python >=3.11; a lower floor would promise a source build that
    # pip cannot start (docs/packages.md, "Python versions").
    pyproject = (SOURCE_DIR / "pyproject.toml").read_text()
    assert re.search(r'^requires-python = ">=3\.11"$', pyproject, re.M)
    cmake = (SOURCE_DIR / "python" / "CMakeLists.txt").read_text()
    assert "find_package(Python 3.11 COMPONENTS" in cmake
