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
