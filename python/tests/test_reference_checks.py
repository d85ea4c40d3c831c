"""The reference interpreter's checks: check_bounds=True turns the first out-of-range access, which the GPU
clamps and the reference drops silently, into an error at the user's line."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import vyre
from conftest import EXAMPLES
from vyre import u32


@vyre.kernel(workgroup=64)
def off_by_one(x: vyre.In[u32], out: vyre.Out[u32]):
    i = vyre.gid.x
    if i <= len(out):
        out[i] = x[i] + 1


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn.fn)
    return first + next(n for n, line in enumerate(lines) if text in line)


def test_an_off_by_one_guard_is_silent_unchecked_and_an_error_at_its_line_checked():
    x = np.arange(64, dtype=np.uint32)
    out = off_by_one.reference(x=x, sizes={"out": 64}, grid=2)["out"]
    assert np.array_equal(out, x + 1)  # the stray access is dropped: nothing shows
    with pytest.raises(vyre.KernelError) as e:
        off_by_one.reference(x=x, sizes={"out": 64}, grid=2, check_bounds=True)
    assert e.value.line == line_of(off_by_one, "out[i] = x[i] + 1")
    assert e.value.filename == __file__
    assert "a load of 'x' at index 64, out of its 64 elements" in e.value.reason
    assert "gid (64, 0, 0)" in e.value.reason
    # In range, the check changes nothing.
    assert np.array_equal(off_by_one.reference(x=np.arange(65, dtype=np.uint32), sizes={"out": 64}, grid=1,
                                               check_bounds=True)["out"], x + 1)


def test_invocations_outside_the_launch_domain_are_not_reported():
    x = np.arange(64, dtype=np.uint32)
    out = off_by_one.reference(x=x, sizes={"out": 64}, dim=64, check_bounds=True)["out"]
    assert np.array_equal(out, x + 1)


def test_a_json_program_names_the_json_path(backend):
    xor = backend.compile(vyre.Program.from_json(EXAMPLES / "xor.json"))
    with pytest.raises(vyre.ProgramError) as e:
        xor.reference(a=np.ones(4, np.uint32), b=np.ones(2, np.uint32), sizes={"out": 4}, check_bounds=True)
    path, message = e.value.diagnostics[0]
    assert path == "body[1].then[0].value.xor[1]"
    assert message.startswith("a load of 'b' at index 2")


@vyre.kernel(workgroup=4)
def tile_sum(data: vyre.In[u32], out: vyre.Out[u32]):
    tile = vyre.shared(u32, 4)
    tile[vyre.lid.flat] = data[vyre.gid.x]
    if vyre.lid.flat == 0:
        s = u32(0)
        for k in range(4):
            s += tile[k]
        out[vyre.wgid.x] = s


def test_a_missing_barrier_is_a_race_at_both_lines_and_a_shuffle_shows_it():
    data = np.arange(1, 9, dtype=np.uint32)
    with pytest.raises(vyre.KernelError) as e:
        tile_sum.reference(data=data, sizes={"out": 2}, grid=2, check_races=True)
    # In index order invocation 0 reads tile[1] before invocation 1 stores it: the error is at the
    # store, the later access, and names the load's line.
    assert e.value.line == line_of(tile_sum, "tile[vyre.lid.flat] = data")
    assert "a data race on 'tile' element 1" in e.value.reason
    assert f"(at line {line_of(tile_sum, 's += tile[k]')})" in e.value.reason
    assert "no workgroupBarrier" in e.value.reason
    # In index order invocation 0 sums before the others write: one wrong answer, always the same.
    fixed = {tuple(tile_sum.reference(data=data, sizes={"out": 2}, grid=2)["out"]) for _ in range(3)}
    shuffled = {tuple(tile_sum.reference(data=data, sizes={"out": 2}, grid=2, shuffle=seed)["out"])
                for seed in range(8)}
    assert len(fixed) == 1 and len(shuffled) > 1


def test_the_cli_takes_the_same_checks(tmp_path):
    import subprocess
    from conftest import cli_path
    program = tile_sum.program.to_json()
    (tmp_path / "p.json").write_text(program)
    args = [cli_path(), "run", str(tmp_path / "p.json"), "--input", "data=1,2,3,4,5,6,7,8", "--size", "out=2",
            "--grid", "2"]
    env = {"VYRE_AOT_CACHE_DIR": str(tmp_path / "c"), "PATH": "/usr/bin:/bin"}
    raced = subprocess.run(args + ["--backend", "reference", "--check-races"], capture_output=True, text=True, env=env)
    assert raced.returncode == 1 and "a data race on 'tile'" in raced.stderr
    assert subprocess.run(args + ["--check-races"], capture_output=True, text=True, env=env).returncode == 3
    outs = {subprocess.run(args + ["--backend", "reference", "--shuffle", str(seed)], capture_output=True, text=True,
                           env=env, check=True).stdout for seed in range(8)}
    assert len(outs) > 1
