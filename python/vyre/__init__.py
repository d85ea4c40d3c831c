"""vyre: portable GPU compute programs from Python, on vyre-cpp.

A program (JSON, or a dict) is compiled once by a Backend into a Kernel and
dispatched with NumPy arrays; its WGSL is kept in the same ahead-of-time
cache on disk as the `vyre` command line and C++ programs use. See
docs/python.md.

    import numpy as np, vyre
    backend = vyre.Backend()
    saxpy = backend.compile(vyre.Program.from_json("examples/saxpy.json"))
    out = saxpy(alpha=2.0, x=x, y=y, sizes={"out": len(x)})["out"]
"""

from __future__ import annotations

from . import cache
from ._errors import (
    DeviceLostError,
    DTypeError,
    Error,
    FileError,
    GpuError,
    InputError,
    LimitError,
    LoweringError,
    NoAdapterError,
    ProgramError,
    WireError,
)
from ._ext import (
    Backend,
    Batch,
    DeviceArray,
    Kernel,
    Program,
    __version__,
    devices,
    validate,
    wgpu_native_version,
)

__all__ = [
    "Backend", "Batch", "DeviceArray", "Kernel", "Program", "cache", "devices", "validate",
    "wgpu_native_version", "__version__",
    "Error", "ProgramError", "WireError", "InputError", "DTypeError", "LoweringError", "GpuError",
    "NoAdapterError", "DeviceLostError", "LimitError", "FileError",
]
