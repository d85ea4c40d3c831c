"""``vyre.Backend``: the extension's Backend, whose ``compile`` and ``tune`` also take a ``@vyre.kernel``
(they compile its ``program``)."""

from __future__ import annotations

from typing import Any

from . import _ext

__all__ = ["Backend"]


def _program(source: Any) -> Any:
    from .kernel import KernelFunction
    return source.program if isinstance(source, KernelFunction) else source


class Backend(_ext.Backend):
    __doc__ = _ext.Backend.__doc__

    def compile(self, program: Any, *args: Any, **kwargs: Any) -> _ext.Kernel:
        return super().compile(_program(program), *args, **kwargs)

    def tune(self, program: Any, *args: Any, **kwargs: Any) -> _ext.Kernel:
        return super().tune(_program(program), *args, **kwargs)

    compile.__doc__ = _ext.Backend.compile.__doc__
    tune.__doc__ = _ext.Backend.tune.__doc__


Backend.__module__ = "vyre"
Backend.__qualname__ = "Backend"
