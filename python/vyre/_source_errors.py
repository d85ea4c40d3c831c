"""Errors in a kernel's Python source: ``file:line:col: message``, then the line and a caret.

They are ``ProgramError``s (the program a kernel stands for is invalid), so ``except
vyre.ProgramError`` catches a kernel's errors as it catches a JSON program's.
"""

from __future__ import annotations

import linecache
from typing import Sequence, Tuple

from ._errors import ProgramError

__all__ = ["SourcePosition", "KernelError", "KernelSyntaxError", "KernelNameError", "KernelTypeError"]


class SourcePosition:
    """A place in the user's file: 1-based line and column."""

    __slots__ = ("filename", "line", "column")

    def __init__(self, filename: str, line: int, column: int) -> None:
        self.filename = filename
        self.line = line
        self.column = column

    def __repr__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}"


def _render(position: SourcePosition, message: str) -> str:
    text = f"{position.filename}:{position.line}:{position.column}: {message}"
    source = linecache.getline(position.filename, position.line).rstrip("\n")
    if source:
        caret = " " * (position.column - 1) + "^"
        text += f"\n    {source}\n    {caret}"
    return text


class KernelError(ProgramError):
    """A kernel's program is invalid; the message points at the Python line that made it.
    ``filename``, ``line``, ``column`` (1-based) and ``reason`` (the message alone)."""

    def __init__(self, position: SourcePosition, reason: str,
                 diagnostics: Sequence[Tuple[str, str]] = ()) -> None:
        super().__init__(_render(position, reason), "invalid_program", diagnostics)
        self.filename = position.filename
        self.line = position.line
        self.column = position.column
        self.reason = reason


class KernelSyntaxError(KernelError):
    """Python the kernel language does not have (a list, ``**kwargs``, a call to an unknown function)."""


class KernelNameError(KernelError, NameError):
    """A name that is neither a local, a parameter, a captured constant nor a vyre built-in."""


class KernelTypeError(KernelError, TypeError):
    """Operands of the wrong type, a local whose type would change, a store to a read-only buffer."""


for _cls in (KernelError, KernelSyntaxError, KernelNameError, KernelTypeError):
    _cls.__module__ = "vyre"
