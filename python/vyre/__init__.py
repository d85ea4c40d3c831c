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

from ._runtime_dir import quiet_headless_runtime_dir as _quiet_headless_runtime_dir

_quiet_headless_runtime_dir()  # before the extension makes a WebGPU instance

from . import cache  # noqa: E402
from ._errors import (  # noqa: E402
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
    RangeError,
    WireError,
)
from ._ext import (  # noqa: E402
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
    "Error", "ProgramError", "WireError", "InputError", "DTypeError", "RangeError", "LoweringError", "GpuError",
    "NoAdapterError", "DeviceLostError", "LimitError", "FileError",
]

# Kernels written as Python functions (docs/python.md, "Writing kernels"). vyre.Backend is the
# extension's Backend whose compile and tune also take a @vyre.kernel.
from ._backend import Backend  # noqa: E402,F811
from ._language import BUILTINS as _BUILTINS, gid, lid, num_workgroups, wgid  # noqa: E402
from ._source_errors import KernelError, KernelNameError, KernelSyntaxError, KernelTypeError  # noqa: E402
from ._printer import UnprintableProgram, to_python  # noqa: E402
from ._types import (In, InOut, Out, Scratch, Uniform, bind, bool_, constexpr, f16, f32, f64, i8, i16, i32, u8,  # noqa: E402
                     u16, u32)
from .kernel import KernelFunction, default_backend, func, kernel  # noqa: E402

globals().update(_BUILTINS)  # vyre.exp, vyre.atomic_add, vyre.barrier, vyre.shared, ...
__all__ += [
    "kernel", "func", "KernelFunction", "default_backend", "f32", "f16", "f64", "u32", "i32", "u8", "i8", "u16", "i16", "bool_", "In", "Out", "InOut", "Scratch",
    "Uniform", "bind", "to_python", "UnprintableProgram",
    "constexpr", "gid", "lid", "wgid", "num_workgroups", "KernelError", "KernelSyntaxError", "KernelNameError",
    "KernelTypeError",
]
