"""The names a kernel's signature is written with: element types and buffer kinds.

``f32``, ``u32``, ``i32`` (and ``bool_``) are the format's value types, with ``f16`` and ``f64`` (format
version 4, on devices with WebGPU's shader-f16 or wgpu's shader-f64); inside a kernel they
are also casts (``f32(i)``). ``u8``, ``i8``, ``u16``, ``i16`` (and ``bool_``) are also storage
types of buffers: an element loads as ``u32``/``i32`` (``bool``) and a store keeps its low bits.
``In[T]``, ``Out[T]``, ``InOut[T]``, ``Uniform[T, N]`` declare buffers; each spelling stands for
exactly one JSON buffer declaration (``BufferSpec.declaration``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple
from typing import Any, Dict

__all__ = ["ScalarType", "f32", "f16", "f64", "u32", "i32", "bool_", "u8", "i8", "u16", "i16", "BufferSpec", "In", "Out", "InOut", "Scratch", "Uniform",
           "constexpr", "bind", "SCALAR_TYPES"]


class ScalarType:
    """An element type of the format. Used as an annotation, and as a cast inside a kernel."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"vyre.{self.name}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"vyre.{self.name}(...) is a cast inside a @vyre.kernel or @vyre.func; "
                        "it does not run in Python")


f32 = ScalarType("f32")
f16 = ScalarType("f16")
f64 = ScalarType("f64")
u32 = ScalarType("u32")
i32 = ScalarType("i32")
bool_ = ScalarType("bool")
u8 = ScalarType("u8")
i8 = ScalarType("i8")
u16 = ScalarType("u16")
i16 = ScalarType("i16")

SCALAR_TYPES = {"f32": f32, "f16": f16, "f64": f64, "u32": u32, "i32": i32}
# Storage-only element types (format version 4), and the value type each loads as and stores from.
NARROW_TYPES = {"u8": "u32", "i8": "i32", "u16": "u32", "i16": "i32"}
# Buffer element types that need format version 4.
VERSION_4_TYPES = frozenset(NARROW_TYPES) | {"bool", "f16", "f64"}


def value_type(dtype: str) -> str:
    """The type a load of a ``dtype`` element gives and a store takes."""
    return NARROW_TYPES.get(dtype, dtype)


@dataclass(frozen=True)
class BufferSpec:
    """One buffer parameter: ``access`` and ``output`` as in the JSON format, ``count`` 0 for a
    runtime-sized buffer; ``scalar`` for a bare ``alpha: f32``, read in the body as a value."""

    access: str
    dtype: str
    count: int = 0
    output: bool = False
    scalar: bool = False
    # vyre.In[f32, (H, W)]: the row-major shape that img[y, x] indexes (its count is H * W). Not in the
    # program: a shaped index is written as the flat index it stands for.
    shape: Tuple[int, ...] = ()

    @property
    def writable(self) -> bool:
        return self.access == "read_write"

    def declaration(self, name: str, binding: int) -> Dict[str, Any]:
        d: Dict[str, Any] = {"name": name, "binding": binding, "access": self.access, "type": self.dtype}
        if self.count:
            d["count"] = self.count
        if self.output:
            d["output"] = True
        return d


class _BufferKind:
    """``In``, ``Out``, ``InOut``, ``Uniform``: subscript with the element type and an optional count."""

    def __init__(self, name: str, access: str, output: bool, needs_count: bool) -> None:
        self.name = name
        self.access = access
        self.output = output
        self.needs_count = needs_count

    def __repr__(self) -> str:
        return f"vyre.{self.name}"

    def __getitem__(self, item: Any) -> BufferSpec:
        if isinstance(item, tuple):
            dtype, count = item if len(item) == 2 else (None, None)
        else:
            dtype, count = item, None
        if dtype is bool:  # vyre.In[bool], as NumPy's bool arrays
            dtype = bool_
        if not isinstance(dtype, ScalarType):
            raise TypeError(f"vyre.{self.name}[T] or vyre.{self.name}[T, N] takes T in vyre.f32, vyre.u32, "
                            f"vyre.i32, vyre.u8, vyre.i8, vyre.u16, vyre.i16, vyre.bool_; got {item!r}")
        if self.access == "uniform" and dtype.name in VERSION_4_TYPES:
            raise TypeError(f"vyre.{self.name}[{dtype.name}, N]: a uniform holds f32, u32 or i32 (narrow and bool "
                            "elements are for In, Out, InOut and Scratch)")
        if count is None:
            if self.needs_count:
                raise TypeError(f"vyre.{self.name}[T, N] needs its element count N")
            return BufferSpec(self.access, dtype.name, 0, self.output)
        shape: Tuple[int, ...] = ()
        if isinstance(count, tuple):
            shape = count
            if not 2 <= len(shape) <= 3 or any(isinstance(d, bool) or not isinstance(d, int) or d <= 0 for d in shape):
                raise TypeError(f"vyre.{self.name}[{dtype.name}, (H, W)]: a shape is 2 or 3 positive ints, "
                                f"got {count!r}")
            count = 1
            for d in shape:
                count *= d
        if isinstance(count, bool) or not isinstance(count, int) or count <= 0 or count >= 2**32:
            raise TypeError(f"vyre.{self.name}[{dtype.name}, N]: N must be a positive int (below 2**32), got {count!r}")
        return BufferSpec(self.access, dtype.name, count, self.output, shape=shape)


In = _BufferKind("In", "read", False, False)
Out = _BufferKind("Out", "read_write", True, False)
InOut = _BufferKind("InOut", "read_write", True, False)
# Read and written by the kernel, not read back: device scratch ("read_write" without "output").
Scratch = _BufferKind("Scratch", "read_write", False, False)
Uniform = _BufferKind("Uniform", "uniform", False, True)


def scalar_spec(t: ScalarType) -> BufferSpec:
    """A bare ``alpha: f32``: a one-element uniform buffer, passed as a Python number."""
    return BufferSpec("uniform", t.name, 1, False, scalar=True)


class _Constexpr:
    """``n: vyre.constexpr``: the value given at the call is written into the program as a literal;
    each value is its own program (and digest)."""

    def __repr__(self) -> str:
        return "vyre.constexpr"


constexpr = _Constexpr()


class _Bind:
    """``x: vyre.In[f32] = vyre.bind(5)``: the buffer's binding number, where a host's layout fixes it
    (parameters are bound 0, 1, 2, ... in their order otherwise). Read by the translator, never run."""

    def __repr__(self) -> str:
        return "vyre.bind"

    def __call__(self, number: int) -> "Binding":
        return Binding(number)  # Python evaluates a default at the def; the translator reads the source


@dataclass(frozen=True)
class Binding:
    """What ``vyre.bind(N)`` evaluates to: a marker, never a value a kernel is called with."""

    number: int


bind = _Bind()
