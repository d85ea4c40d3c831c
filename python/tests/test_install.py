"""`pip install .` from a fresh copy of the tree into a fresh virtual environment.

A whole Release build of libvyre and the extension (a few minutes on two
cores), fetching the build requirements (pinned in pyproject.toml) from PyPI
or pip's cache. Marked `install`: CTest runs it as its own test
(python.pytest_install) with a long timeout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from conftest import SOURCE_DIR

pytestmark = pytest.mark.install


def tracked_files(root: Path):
    out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                         capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0") if p]


@pytest.mark.skipif(shutil.which("git") is None or not (SOURCE_DIR / ".git").exists(), reason="not a git checkout")
@pytest.mark.skipif(os.environ.get("VYRE_PACKAGING_TESTS") == "1",
                    reason="packaging.wheel_installs_in_a_minimal_root builds the wheel from the source archive "
                           "and installs it where nothing of the build is (tests/packaging/)")
def test_pip_install_into_a_fresh_venv(tmp_path):
    clone = tmp_path / "clone"
    for rel in tracked_files(SOURCE_DIR):  # what a fresh clone holds: no .deps, no build/
        src = SOURCE_DIR / rel
        if src.is_file():
            (clone / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, clone / rel)
    assert not (clone / ".deps").exists() and not (clone / "build").exists()

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", "2")
    env["VYRE_AOT_CACHE_DIR"] = str(tmp_path / "aot")
    r = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", str(clone)],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-8000:]

    # Imported from the environment, self-contained: libvyre and wgpu-native beside the extension.
    where = subprocess.run([str(python), "-c", "import vyre, os; print(os.path.dirname(vyre.__file__))"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, check=True).stdout.strip()
    package = Path(where)
    assert package.is_relative_to(env_dir), package
    names = {p.name for p in package.iterdir()}
    assert {"libvyre.so", "libwgpu_native.so", "py.typed", "_ext.pyi", "__init__.py", "cache.py"} <= names, names
    ext = next(package.glob("_ext.*.so"))
    ldd = subprocess.run(["ldd", str(ext)], capture_output=True, text=True, check=True).stdout
    assert f"libvyre.so => {package}/libvyre.so" in ldd, ldd
    assert "not found" not in ldd, ldd
    assert "libwgpu_native.so => " + str(package) in subprocess.run(
        ["ldd", str(package / "libvyre.so")], capture_output=True, text=True, check=True).stdout

    # The example script, twice: a cache miss, then a hit.
    script = clone / "examples" / "python" / "saxpy.py"
    for expected in ("cache miss", "cache hit"):
        r = subprocess.run([str(python), str(script)], capture_output=True, text=True, env=env, cwd=tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
        assert expected in r.stdout and "ok" in r.stdout, r.stdout
