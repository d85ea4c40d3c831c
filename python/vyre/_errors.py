"""Exceptions of vyre: each carries the C++ ``vyre::ErrorKind`` as ``.kind``."""

from __future__ import annotations

from typing import List, Sequence, Tuple

__all__ = [
    "Error", "ProgramError", "WireError", "InputError", "DTypeError", "RangeError", "LoweringError",
    "GpuError", "NoAdapterError", "DeviceLostError", "LimitError", "FileError",
]


class Error(Exception):
    """Base of every vyre error. ``kind`` is the C++ error kind, e.g. ``"invalid_input"``."""

    kind: str = "unknown"

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class ProgramError(Error, ValueError):
    """The program breaks a rule of the format. ``diagnostics``: every problem, as (JSON path, message)."""

    kind = "invalid_program"

    def __init__(self, message: str, kind: str | None = None,
                 diagnostics: Sequence[Tuple[str, str]] = ()) -> None:
        super().__init__(message, kind)
        self.diagnostics: List[Tuple[str, str]] = [(str(p), str(m)) for p, m in diagnostics]


class WireError(Error, ValueError):
    """Canonical wire bytes are malformed, truncated or too large."""

    kind = "invalid_wire"


class InputError(Error, ValueError):
    """Dispatch inputs or outputs do not fit the program (name, size, contiguity, ...)."""

    kind = "invalid_input"


class DTypeError(InputError, TypeError):
    """An array's element type is not the buffer's (never converted silently)."""


class RangeError(InputError, OverflowError):
    """A number the argument cannot hold: an int beyond a u32 length or an i32, a float beyond float32's
    range (the message names the argument, e.g. ``sizes['out']``)."""


class LoweringError(Error):
    """The program could not be lowered to WGSL."""

    kind = "lowering"


class GpuError(Error, RuntimeError):
    """The GPU API reported an error (shader, pipeline, buffer)."""

    kind = "gpu"


class NoAdapterError(GpuError):
    """No usable GPU adapter, or the requested one is absent."""

    kind = "no_adapter"


class DeviceLostError(GpuError):
    """The device was lost; the Backend opens a new one on its next call: call again."""

    kind = "device_lost"


class LimitError(Error, ValueError):
    """A request exceeds a device limit (buffer size, workgroup size, grid)."""

    kind = "limit_exceeded"


class FileError(Error, OSError):
    """A file could not be read or written (a program file, the cache directory)."""

    kind = "io"


for _cls in (Error, ProgramError, WireError, InputError, DTypeError, RangeError, LoweringError, GpuError, NoAdapterError,
             DeviceLostError, LimitError, FileError):
    _cls.__module__ = "vyre"

_BY_KIND = {
    "invalid_program": ProgramError,
    "invalid_wire": WireError,
    "invalid_input": InputError,
    "lowering": LoweringError,
    "no_adapter": NoAdapterError,
    "gpu": GpuError,
    "device_lost": DeviceLostError,
    "limit_exceeded": LimitError,
    "io": FileError,
}


def _from_cpp(kind: str, message: str, diagnostics: Sequence[Tuple[str, str]] = (), subclass: str = "") -> Error:
    """Called by the extension to build the exception for a C++ vyre::Error; ``subclass``: "dtype" or "range"
    for the extension's own DTypeError and RangeError."""
    if subclass == "dtype":
        return DTypeError(message, kind)
    if subclass == "range":
        return RangeError(message, kind)
    cls = _BY_KIND.get(kind, Error)
    if cls is ProgramError:
        return ProgramError(message, kind, diagnostics)
    return cls(message, kind)
