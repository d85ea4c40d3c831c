"""The AOT cache is shared with the command line: a program run by one is a hit for the other."""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import subprocess
import sys

import numpy as np
import pytest

import vyre
from conftest import EXAMPLES, cli_path

needs_cli = pytest.mark.skipif(cli_path() is None, reason="no vyre command line in this build")


def cli_run(program, *args):
    """`vyre run --verbose`: (stdout, whether the cache hit)."""
    env = dict(os.environ, VYRE_LOG="info")
    r = subprocess.run([str(cli_path()), "run", str(program), "--verbose", *args], capture_output=True, text=True,
                       env=env, check=True)
    assert ("cache hit" in r.stderr) != ("cache miss" in r.stderr), r.stderr
    return r.stdout, "cache hit" in r.stderr


@needs_cli
def test_cli_then_python_then_cli(cache_dir, monkeypatch):
    # One entry per program: xor's five elements run its one-element shader,
    # and with widening on its widened one would be kept too.
    monkeypatch.setenv("VYRE_WIDEN", "0")
    xor = EXAMPLES / "xor.json"
    _, hit = cli_run(xor, "--inputs", str(EXAMPLES / "xor.run.json"))
    assert not hit
    k = vyre.Backend().compile(vyre.Program.from_json(xor))
    assert k.cache_hit  # the CLI's entry
    a = np.array([1, 2, 3, 4], np.uint32)
    np.testing.assert_array_equal(k(a=a, b=a[::-1].copy(), sizes={"out": 4})["out"], a ^ a[::-1])

    histogram = EXAMPLES / "histogram.json"
    k2 = vyre.Backend().compile(vyre.Program.from_json(histogram))
    assert not k2.cache_hit
    vyre.cache.flush()
    _, hit = cli_run(histogram, "--inputs", str(EXAMPLES / "histogram.run.json"), "--check")
    assert hit  # Python's entry

    stats = vyre.cache.stats()
    assert stats["directory"] == str(cache_dir)
    assert stats["entries"] == 2
    assert stats["hits"] >= 2 and stats["misses"] >= 2
    keys = {e["key"] for e in vyre.cache.entries()}
    assert keys == {k.cache_key, k2.cache_key}


@needs_cli
def test_workgroup_option_matches_the_cli(cache_dir):
    saxpy = EXAMPLES / "saxpy.json"
    cli_run(saxpy, "--inputs", str(EXAMPLES / "saxpy.run.json"), "--workgroup", "32,1,1")
    assert vyre.Backend().compile(vyre.Program.from_json(saxpy), workgroup=(32, 1, 1)).cache_hit
    assert not vyre.Backend().compile(vyre.Program.from_json(saxpy)).cache_hit


def test_explain_stats_and_clear(cache_dir, saxpy):
    backend = vyre.Backend()
    before = vyre.cache.explain(saxpy, backend=backend)
    assert not before["hit"]
    assert [c["name"] for c in before["components"]][0] == "program digest"
    assert before["components"][0]["value"] == saxpy.digest
    k = backend.compile(saxpy)
    after = vyre.cache.explain(saxpy, backend=backend)
    assert after["hit"] and after["key"] == k.cache_key == before["key"]
    assert after["found_in"] == str(cache_dir)
    other = vyre.cache.explain(saxpy, workgroup=128, fingerprint=backend.fingerprint)
    assert not other["hit"] and other["same_program"], other
    assert vyre.cache.directory() == str(cache_dir)
    s = vyre.cache.stats()
    assert (s["misses"], s["writes"], s["entries"]) == (1, 1, 1)
    vyre.cache.zero_stats()
    assert vyre.cache.stats()["misses"] == 0
    assert vyre.cache.clear() == 1
    assert vyre.cache.entries() == []


def test_a_second_backend_hits_in_the_same_process(cache_dir, saxpy):
    assert not vyre.Backend().compile(saxpy).cache_hit
    assert vyre.Backend().compile(saxpy).cache_hit


def test_fingerprint_override_setting(cache_dir, saxpy, monkeypatch):
    monkeypatch.setenv("VYRE_BACKEND_FINGERPRINT_OVERRIDE", "fleet-1")
    b = vyre.Backend()
    assert b.fingerprint == "fleet-1"
    b.compile(saxpy)
    assert vyre.cache.explain(saxpy)["hit"]
    assert [e["fingerprint"] for e in vyre.cache.entries()] == ["fleet-1"]


def test_driver_cache_placement_says_what_it_did(cache_dir):
    # Once per process: the first call (here or by a Backend) decides; the answer says why.
    placed = vyre.cache.place_driver_cache()
    assert set(placed) == {"active", "data_folder", "fingerprint", "files_before", "reason"}
    assert placed["active"] == (placed["data_folder"] is not None)
    assert placed["active"] or placed["reason"]
    assert vyre.cache.place_driver_cache() == placed
    stats = vyre.cache.stats()
    assert stats["driver_folders"] >= 0 and stats["driver_bytes"] >= 0


WARM_WITHOUT_CEREMONY = """
import ctypes, json, sys
import numpy as np                       # starts NumPy's threads before vyre is imported
threads = int([l for l in open("/proc/self/status") if l.startswith("Threads:")][0].split()[1])
import vyre

@vyre.kernel(dim="out")
def doubled(x: vyre.In[vyre.u32], out: vyre.Out[vyre.u32]):
    out[vyre.gid.x] = x[vyre.gid.x] * 2

x = np.arange(1000, dtype=np.uint32)
assert np.array_equal(doubled(x=x, sizes={"out": 1000})["out"], x * 2)
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
placed = vyre.cache.place_driver_cache()   # answers what the first Backend did
mesa = libc.getenv(b"MESA_SHADER_CACHE_DIR")
print(json.dumps({"threads": threads, "placed": placed, "mesa": mesa.decode() if mesa else None,
                  "driver_bytes": vyre.cache.stats()["driver_bytes"]}))
"""


def test_a_script_gets_the_driver_cache_without_calling_anything(tmp_path):
    # The driver's pipelines land in vyre's cache though NumPy started threads first; a second
    # process finds them there (docs/cache.md, "Driver pipeline data").
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MESA_SHADER_CACHE", "__GL_SHADER_DISK_CACHE", "VYRE_DRIVER_CACHE"))}
    env["VYRE_AOT_CACHE_DIR"] = str(tmp_path / "aot")
    script = tmp_path / "script.py"  # a kernel's source is read from its file
    script.write_text(WARM_WITHOUT_CEREMONY)
    reports = []
    for _ in range(2):
        r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        assert r.stderr == ""
        reports.append(json.loads(r.stdout))
    first, second = reports
    assert first["threads"] > 1, "NumPy started no thread here: the test proves nothing"
    assert first["placed"]["active"], first["placed"]["reason"]
    assert first["placed"]["data_folder"].startswith(str(tmp_path / "aot"))
    assert first["mesa"] is not None and first["mesa"].startswith("/proc/")
    assert second["placed"]["active"] and second["placed"]["files_before"] > 0
    assert second["driver_bytes"] > 0


def cli_json(*args):
    """`vyre cache ARGS --json`, parsed."""
    r = subprocess.run([str(cli_path()), "cache", *args, "--json"], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


@needs_cli
def test_reports_equal_the_cli_json(cache_dir, saxpy):
    # The library writes each report once (vyre::aot::to_json): Python's dicts are the CLI's JSON.
    backend = vyre.Backend()
    backend.compile(saxpy)
    backend.compile(vyre.Program.from_json(EXAMPLES / "xor.json"))
    vyre.cache.flush()
    cli_stats = cli_json("stats")
    stats = vyre.cache.stats()
    assert stats == cli_stats
    for key in ("rejected", "local", "incomplete", "directory", "max_bytes", "max_entries"):
        assert key in stats, key
    assert stats["directory"] == str(cache_dir) and stats["entries"] == 2

    entries = vyre.cache.entries()
    assert entries == cli_json("ls")
    assert len(entries) == 2
    for e in entries:
        assert set(e["parts"]) == {"program_digest", "shaping", "lowering_version", "vyre_version", "fingerprint"}
        assert e["spec_hash"] and e["state"] == "ok"

    # Explained for the same device: the adapter's full fingerprint, so the driver data is named too.
    fingerprint = backend.adapter["fingerprint"]
    explained = vyre.cache.explain(saxpy, fingerprint=fingerprint)
    assert explained == cli_json("explain", str(EXAMPLES / "saxpy.json"), "--fingerprint", fingerprint)
    assert explained["hit"] and explained["device_fingerprint"] == fingerprint
    assert vyre.cache.explain(saxpy, backend=backend) == explained


def _key_hashes(parts):
    """spec_hash and key of key parts, by the formula of docs/cache.md ("Key derivation")."""
    def text(s):
        b = s.encode()
        return struct.pack("<Q", len(b)) + b

    def u32(n):
        return struct.pack("<I", n)

    spec = hashlib.sha256(text("vyre-aot-spec") + u32(1) + text(parts["program_digest"]) + text(parts["shaping"])
                          + u32(parts["lowering_version"]) + text(parts["vyre_version"])).hexdigest()
    key = hashlib.sha256(text("vyre-aot-key") + u32(1) + text(spec) + text(parts["fingerprint"])).hexdigest()
    return spec, key


def test_stats_count_entries_of_older_versions(cache_dir, saxpy):
    # An entry as an older vyre wrote it: the same program and text under its own
    # version, so its own key. Never served; stats count it (docs/cache.md, "Older versions").
    k = vyre.Backend().compile(saxpy)
    assert not k.cache_hit
    vyre.cache.flush()
    assert vyre.cache.stats()["older_versions"] == 0
    (entry,) = vyre.cache.entries()
    parts = dict(entry["parts"], vyre_version="0.0.1")
    spec, key = _key_hashes(parts)
    assert _key_hashes(entry["parts"]) == (entry["spec_hash"], entry["key"])  # the formula is the cache's
    metadata = (cache_dir / (entry["key"] + ".toml")).read_text()
    metadata = re.sub(r"^vyre_version = .*$", 'vyre_version = "0.0.1"',
                      metadata.replace(entry["key"], key).replace(entry["spec_hash"], spec), flags=re.M)
    (cache_dir / (key + ".wgsl")).write_bytes((cache_dir / (entry["key"] + ".wgsl")).read_bytes())
    (cache_dir / (key + ".toml")).write_text(metadata)
    for p in cache_dir.glob(key + ".*"):
        p.chmod(0o600)

    stats = vyre.cache.stats()
    assert stats["entries"] == 2
    assert stats["older_versions"] == 1
    states = {e["key"]: e["state"] for e in vyre.cache.entries()}
    assert states == {entry["key"]: "ok", key: "ok"}  # a sound entry, of another version
    assert vyre.Backend().compile(saxpy).cache_hit  # this version's entry, still served


def test_the_sqlite_store_serves_python_and_says_so(cache_dir, saxpy, monkeypatch):
    # VYRE_AOT_CACHE_STORE=sqlite: the entries are rows of one file (docs/cache.md, "Stores").
    monkeypatch.setenv("VYRE_AOT_CACHE_STORE", "sqlite")
    assert not vyre.Backend().compile(saxpy).cache_hit
    assert vyre.Backend().compile(saxpy).cache_hit
    stats = vyre.cache.stats()
    assert stats["store"] == "sqlite"
    assert stats["store_reason"] == "VYRE_AOT_CACHE_STORE=sqlite"
    assert stats["journal_mode"] == "truncate"
    assert stats["entries"] == 1
    assert (cache_dir / "entries.sqlite3").is_file()
    assert not list(cache_dir.glob("*.wgsl"))
    (entry,) = vyre.cache.entries()
    assert entry["state"] == "ok"
    monkeypatch.setenv("VYRE_AOT_CACHE_STORE", "directory")
    assert vyre.cache.stats()["store"] == "directory"
