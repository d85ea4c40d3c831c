"""A kernel's errors name the user's file, line and column and show the line with a caret."""

from __future__ import annotations

from pathlib import Path

import pytest

import vyre
from vyre import f32, i32, u32

HERE = Path(__file__).resolve()
LINES = HERE.read_text().splitlines()


def where(marker: str, token: str):
    """(line, column) of `token` on the line that ends with `# marker`, both 1-based."""
    for n, text in enumerate(LINES, 1):
        if text.rstrip().endswith(f"# {marker}"):
            return n, text.index(token) + 1
    raise AssertionError(marker)


def expect(kernel, cls, marker, token, reason):
    with pytest.raises(cls) as info:
        kernel.program
    e = info.value
    line, column = where(marker, token)
    assert (e.filename, e.line, e.column) == (str(HERE), line, column), str(e)
    assert reason in e.reason, e.reason
    text = str(e).splitlines()
    assert text[0] == f"{HERE}:{line}:{column}: {e.reason}"
    assert text[1] == "    " + LINES[line - 1].rstrip()
    assert text[2] == "    " + " " * (column - 1) + "^"
    assert isinstance(e, vyre.ProgramError) and isinstance(e, vyre.KernelError)
    return e


def test_a_list():
    @vyre.kernel
    def k(out: vyre.Out[u32]):
        v = [1, 2]  # list
        out[0] = 1

    expect(k, vyre.KernelSyntaxError, "list", "[1, 2]", "a list is not part of the kernel language")


def test_a_call_to_a_function_that_is_no_builtin():
    @vyre.kernel
    def k(out: vyre.Out[u32]):
        print(out)  # print

    expect(k, vyre.KernelSyntaxError, "print", "print", "call to print, which is neither a vyre built-in nor a "
                                                        "@vyre.func")


def test_kwargs():
    @vyre.kernel
    def k(out: vyre.Out[u32], **rest):  # kwargs
        out[0] = 1

    expect(k, vyre.KernelSyntaxError, "kwargs", "rest", "**kwargs is not part of the kernel language")


def test_an_unknown_name():
    @vyre.kernel
    def k(out: vyre.Out[u32]):
        out[0] = undefined_thing + 1  # noqa: F821  # unknown

    e = expect(k, vyre.KernelNameError, "unknown", "undefined_thing", "unknown name 'undefined_thing'")
    assert isinstance(e, NameError)


def test_a_type_that_changes():
    @vyre.kernel
    def k(out: vyre.Out[u32]):
        v = 0
        v = 1.5  # changes
        out[0] = 1

    e = expect(k, vyre.KernelTypeError, "changes", "1.5", "v is u32; this assigns a f32")
    assert isinstance(e, TypeError)


def test_a_store_to_an_in_buffer():
    @vyre.kernel
    def k(x: vyre.In[f32], out: vyre.Out[f32]):
        x[0] = 1.0  # store
        out[0] = x[0]

    expect(k, vyre.KernelTypeError, "store", "x[0]", "x is vyre.In[f32], which a kernel only reads")


def test_integer_division_with_slash_is_refused():
    @vyre.kernel
    def k(a: vyre.In[u32], out: vyre.Out[u32]):
        out[0] = a[0] / 2  # slash

    expect(k, vyre.KernelTypeError, "slash", "a[0] / 2", "/ on u32: Python's / makes a float")


def test_signed_floor_division_and_modulo_name_the_truncating_functions():
    @vyre.kernel
    def k(a: vyre.In[i32], out: vyre.Out[i32]):
        out[0] = a[0] // 2  # floordiv

    expect(k, vyre.KernelTypeError, "floordiv", "a[0] // 2", "vyre.div_trunc(a, b)")

    @vyre.kernel
    def m(a: vyre.In[i32], out: vyre.Out[i32]):
        out[0] = a[0] % 2  # modulo

    expect(m, vyre.KernelTypeError, "modulo", "a[0] % 2", "vyre.rem_trunc(a, b)")


def test_mixed_operand_types():
    @vyre.kernel
    def k(a: vyre.In[i32], out: vyre.Out[u32]):
        out[0] = vyre.gid.x + a[0]  # mixed

    expect(k, vyre.KernelTypeError, "mixed", "vyre.gid.x + a[0]", "operands of + are u32 and i32")


def test_a_barrier_in_non_uniform_control_flow_is_the_checkers_finding_at_the_python_line():
    @vyre.kernel
    def k(out: vyre.Out[u32]):
        i = vyre.gid.x
        if i < len(out):
            vyre.barrier()  # barrier
            out[i] = 1

    e = expect(k, vyre.KernelError, "barrier", "vyre.barrier()", "uniform control flow")
    assert e.diagnostics and e.diagnostics[0][0].startswith("body[1].then[0]")


def test_a_checker_finding_about_the_program_points_at_the_def():
    @vyre.kernel(workgroup=(64, 64))
    def too_wide(out: vyre.Out[u32]):  # wide
        out[0] = 1

    expect(too_wide, vyre.KernelError, "wide", "def", "workgroup")


def test_private_array_mistakes_are_refused_at_their_line():
    @vyre.kernel
    def k(out: vyre.Out[u32]):
        acc = vyre.array(vyre.bool_, 4)  # booltype
        out[0] = 1

    expect(k, vyre.KernelTypeError, "booltype", "vyre.bool_", "T is vyre.f32, vyre.u32, vyre.i32, vyre.f16 or vyre.f64")

    @vyre.kernel
    def n(out: vyre.Out[u32]):
        acc = vyre.array(u32, 0)  # zero
        out[0] = 1

    expect(n, vyre.KernelTypeError, "zero", "0", "N is a positive int")

    @vyre.kernel
    def again(out: vyre.Out[u32]):
        acc = vyre.array(u32, 2)
        acc = vyre.array(u32, 2)  # again
        out[0] = 1

    expect(again, vyre.KernelTypeError, "again", "acc", "already declared")

    @vyre.kernel
    def value(out: vyre.Out[u32]):
        out[0] = vyre.array(u32, 2)  # value

    expect(value, vyre.KernelError, "value", "vyre.array(u32, 2)", "declares a private array")

    @vyre.kernel
    def typed(out: vyre.Out[u32]):
        acc = vyre.array(f32, 2)
        acc[0] = u32(1)  # typed
        out[0] = 1

    e = expect(typed, vyre.KernelTypeError, "typed", "u32(1)", "f32")
    assert "u32" in e.reason
