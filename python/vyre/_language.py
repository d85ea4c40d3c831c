"""The built-in names a kernel body may use: invocation ids, math, atomics, barriers, workgroup memory.

They are markers: the translator recognises them by identity and writes the format's operator;
none of them runs in Python (calling one outside a kernel raises TypeError).
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

__all__ = ["Builtin", "InvocationId", "gid", "lid", "wgid", "num_workgroups", "BUILTINS"]


class InvocationId:
    """``vyre.gid``, ``vyre.lid``, ``vyre.wgid``, ``vyre.num_workgroups``: ``.x``, ``.y``, ``.z``
    (and ``vyre.lid.flat``), each a ``u32``."""

    def __init__(self, python_name: str, key: str, axes: Tuple[str, ...]) -> None:
        self.python_name = python_name
        self.key = key
        self.axes = axes

    def __repr__(self) -> str:
        return f"vyre.{self.python_name}"


gid = InvocationId("gid", "gid", ("x", "y", "z"))
lid = InvocationId("lid", "lid", ("x", "y", "z", "flat"))
wgid = InvocationId("wgid", "wid", ("x", "y", "z"))
num_workgroups = InvocationId("num_workgroups", "nwg", ("x", "y", "z"))


class Builtin:
    """A function of the kernel language. ``form``: how its call is written in the format
    (``unary``, ``binary``, ``ternary``, ``atomic``, ``cas``, ``atomic_load``, ``barrier``,
    ``shared``, ``array``, ``bitcast``); ``op``: the format's operator name."""

    def __init__(self, name: str, form: str, op: str) -> None:
        self.name = name
        self.form = form
        self.op = op
        self.__name__ = name
        self.__qualname__ = name

    def __repr__(self) -> str:
        return f"vyre.{self.name}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"vyre.{self.name}() is only meaningful inside a @vyre.kernel or @vyre.func")


BUILTINS: Dict[str, Builtin] = {}


def _define(name: str, form: str, op: str | None = None) -> Builtin:
    b = Builtin(name, form, op or name)
    BUILTINS[name] = b
    return b


for _op in ("sqrt", "inverse_sqrt", "exp", "exp2", "log", "log2", "sin", "cos", "tan", "tanh", "floor",
            "ceil", "round", "trunc", "fract", "abs", "popcount", "clz", "ctz", "reverse_bits"):
    _define(_op, "unary")
for _op in ("min", "max", "pow", "atan2"):
    _define(_op, "binary")
_define("div_trunc", "binary", "div")
_define("rem_trunc", "binary", "rem")
_define("fma", "ternary")
_define("clamp", "ternary")
_define("select", "select")
for _op in ("add", "sub", "min", "max", "and", "or", "xor", "exchange"):
    _define(f"atomic_{_op}", "atomic", _op)
_define("atomic_compare_exchange", "cas", "compare_exchange")
_define("atomic_load", "atomic_load", "load")
_define("barrier", "barrier", "workgroup")
_define("storage_barrier", "barrier", "storage")
_define("shared", "shared")
_define("array", "array")
_define("bitcast", "bitcast")

globals().update(BUILTINS)
__all__ += list(BUILTINS)
