"""``@vyre.kernel`` and ``@vyre.func``: vyre programs written as Python functions.

    @vyre.kernel(workgroup=64)
    def saxpy(alpha: f32, x: vyre.In[f32], y: vyre.In[f32], out: vyre.Out[f32]):
        i = vyre.gid.x
        if i < len(out):
            out[i] = alpha * x[i] + y[i]

    saxpy(alpha=2.0, x=x, y=y, sizes={"out": n})["out"]

The body is translated once (per ``vyre.constexpr`` values and captured constants) into the
program the JSON reader would build; it never runs in Python. docs/python.md, "Writing kernels".
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Dict, Optional, Sequence, Tuple, Union

from . import _ext
from . import _translate
from ._errors import ProgramError
from ._source import MISSING, load_source
from ._source_errors import KernelError
from ._translate import Func, Translation
from ._types import _Constexpr

__all__ = ["kernel", "func", "KernelFunction"]

Workgroup = Union[int, Sequence[int]]


def _workgroup(w: Workgroup) -> Tuple[int, int, int]:
    dims = (w,) if isinstance(w, int) and not isinstance(w, bool) else tuple(w)
    if not 1 <= len(dims) <= 3 or any(isinstance(d, bool) or not isinstance(d, int) or d <= 0 for d in dims):
        raise TypeError(f"workgroup is a positive int or 1 to 3 positive ints, got {w!r}")
    return tuple(dims) + (1,) * (3 - len(dims))  # type: ignore[return-value]


def _capture_key(value: Any) -> Tuple[str, str]:
    return (type(value).__name__, repr(value))


class KernelFunction:
    """A ``@vyre.kernel`` function. ``program`` is its ``vyre.Program``; calling it runs the program on
    the default backend with the same arguments as a compiled kernel's call; ``reference(...)`` runs
    the CPU reference interpreter."""

    def __init__(self, fn: Any, workgroup: Workgroup, dim: Any = None) -> None:
        self.fn = fn
        self.workgroup = _workgroup(workgroup)
        if dim is not None and not isinstance(dim, str):
            raise TypeError(f"dim names the buffer whose elements are the launch domain (dim=\"out\"), got {dim!r}")
        self.dim = dim
        functools.update_wrapper(self, fn)
        self._lock = threading.Lock()
        self._constexpr_names: Optional[Dict[str, Any]] = None
        self._capture_paths: Optional[list] = None
        self._programs: Dict[Any, Tuple[Translation, _ext.Program]] = {}
        self._compiled: Dict[str, _ext.Kernel] = {}

    def __repr__(self) -> str:
        return f"<vyre.kernel {self.__qualname__}>"

    # ---- translation ----

    def constexpr_parameters(self) -> Dict[str, Any]:
        """The ``vyre.constexpr`` parameters and their defaults (MISSING when none)."""
        if self._constexpr_names is None:
            import inspect
            names = {}
            for p in inspect.signature(self.fn).parameters.values():
                annotation = p.annotation
                if isinstance(annotation, str):
                    annotation = eval(annotation, self.fn.__globals__)  # an annotation only, never the body
                if isinstance(annotation, _Constexpr):
                    names[p.name] = MISSING if p.default is p.empty else p.default
            self._constexpr_names = names
        return self._constexpr_names

    def _key(self, constexprs: Dict[str, Any]) -> Any:
        cx = tuple(sorted((k, _capture_key(v)) for k, v in constexprs.items()))
        if self._capture_paths is None:
            return None
        captured = tuple(_capture_key(source.lookup_path(path)) for source, path in self._capture_paths)
        return (cx, captured)

    def program_for(self, **constexprs: Any) -> _ext.Program:
        """The program for these ``vyre.constexpr`` values (each value is its own program and digest)."""
        return self._translation(self._constexprs(constexprs))[1]

    def _constexprs(self, given: Dict[str, Any]) -> Dict[str, Any]:
        values = {}
        for name, default in self.constexpr_parameters().items():
            if name in given:
                values[name] = given[name]
            elif default is not MISSING:
                values[name] = default
            else:
                raise TypeError(f"{self.__name__}: constexpr parameter {name!r} needs a value")
        unknown = set(given) - set(values)
        if unknown:
            raise TypeError(f"{self.__name__}: {sorted(unknown)} are not constexpr parameters")
        return values

    def _translation(self, constexprs: Dict[str, Any]) -> Tuple[Translation, _ext.Program]:
        key = self._key(constexprs)
        found = self._programs.get(key) if key is not None else None
        if found is not None:
            return found
        with self._lock:
            key = self._key(constexprs)
            found = self._programs.get(key) if key is not None else None
            if found is not None:
                return found
            translation = _translate.translate(self.fn, self.workgroup, constexprs)
            if self.dim is not None:  # a declared launch domain: format version 2, in a shape version 3
                shape = translation.buffer_shapes.get(self.dim)
                translation.program["vyre"] = max(translation.program["vyre"], 3 if shape else 2)
                translation.program["domain"] = {"buffer": self.dim, "shape": list(shape)} if shape else self.dim
            paths = [(source, path) for source, path, _ in translation.captures]
            program = _checked(translation)
            self._capture_paths = paths
            found = (translation, program)
            self._programs[self._key(constexprs)] = found
            return found

    @property
    def program(self) -> _ext.Program:
        """The ``vyre.Program`` (for a kernel without constexpr parameters: else ``program_for``)."""
        return self._translation(self._constexprs({}))[1]

    # ---- running ----

    def _split(self, buffers: Dict[str, Any]) -> Dict[str, Any]:
        names = self.constexpr_parameters()
        return {k: buffers.pop(k) for k in list(buffers) if k in names}

    def _compiled_kernel(self, program: _ext.Program) -> _ext.Kernel:
        k = self._compiled.get(program.digest)
        if k is None:
            k = self._compiled[program.digest] = default_backend().compile(program)
        return k

    def __call__(self, inputs: Optional[Dict[Any, Any]] = None, /, *, sizes: Optional[Dict[Any, int]] = None,
                 grid: Any = None, dim: Any = None, **buffers: Any) -> Dict[str, Any]:
        """Runs on the default backend (``vyre.default_backend()``); returns every output as a NumPy array.
        ``dim=n`` or ``dim=(x, y, z)`` is the launch domain: the invocations that run (the grid follows,
        and invocations beyond the domain have no effect); ``grid=`` gives workgroups instead."""
        translation, program = self._translation(self._constexprs(self._split(buffers)))
        out = self._compiled_kernel(program)(inputs, sizes=sizes, grid=grid, dim=dim, **buffers)
        return _shaped(out, translation.output_shapes)

    def reference(self, inputs: Optional[Dict[Any, Any]] = None, /, *, sizes: Optional[Dict[Any, int]] = None,
                  grid: Any = None, dim: Any = None, check_bounds: bool = False, check_races: bool = False,
                  shuffle: Any = False, **buffers: Any) -> Dict[str, Any]:
        """The CPU reference interpreter on the same arguments (WGSL's semantics). ``check_bounds=True``:
        the first out-of-range load or store is a ``vyre.KernelError`` at its line, not a silent clamp;
        ``check_races=True``: so is the first data race, at the second access's line, naming the first's;
        ``shuffle=True`` (or a seed): each workgroup's invocations run in a seeded random order between
        barriers, so that a missing barrier changes the results."""
        translation, program = self._translation(self._constexprs(self._split(buffers)))
        try:
            out = self._compiled_kernel(program).reference(inputs, sizes=sizes, grid=grid, dim=dim,
                                                           check_bounds=check_bounds, check_races=check_races,
                                                           shuffle=shuffle, **buffers)
            return _shaped(out, translation.output_shapes)
        except ProgramError as e:
            if not (check_bounds or check_races) or not e.diagnostics:
                raise
            path, message = e.diagnostics[0]
            if len(e.diagnostics) > 1:  # a race: the earlier access's Python line too
                first = translation.position_of(e.diagnostics[1][0])
                message = message.replace(f"(at {e.diagnostics[1][0]})", f"(at line {first.line})")
            raise KernelError(translation.position_of(path), message, e.diagnostics) from None


def _shaped(outputs: Dict[str, Any], shapes: Dict[str, Tuple[int, ...]]) -> Dict[str, Any]:
    """Outputs declared with a shape (``vyre.Out[f32, (H, W)]``) come back in it."""
    for name, shape in shapes.items():
        if name in outputs and outputs[name].ndim == 1:
            outputs[name] = outputs[name].reshape(shape)
    return outputs


def _checked(translation: Translation) -> _ext.Program:
    """The checked program; a checker diagnostic is raised at the Python node that wrote its path."""
    try:
        return _ext.Program.from_dict(translation.program)
    except KernelError:
        raise
    except ProgramError as e:
        if not e.diagnostics:
            raise
        path, message = e.diagnostics[0]
        raise KernelError(translation.position_of(path), f"{message} (at {path} of the program)",
                          e.diagnostics) from None


def kernel(fn: Any = None, *, workgroup: Workgroup = 64, dim: Optional[str] = None) -> Any:
    """``@vyre.kernel`` or ``@vyre.kernel(workgroup=(16, 16), dim="out")``: the function is a vyre program.
    ``dim`` names the buffer whose elements are its launch domain (one invocation each, and invocations
    beyond it have no effect), so that a call needs neither ``dim=`` nor ``grid=``: the program's
    ``"domain"`` (format version 2). A buffer declared with a shape gives the domain in that shape:
    ``vyre.Out[f32, (H, W)]`` runs ``gid.x`` over W and ``gid.y`` over H (format version 3)."""
    if fn is None:
        return lambda f: KernelFunction(f, workgroup, dim)
    return KernelFunction(fn, workgroup, dim)


def func(fn: Any) -> Func:
    """``@vyre.func``: a helper inlined at each call from a kernel; it returns one value at its end,
    or nothing."""
    load_source(fn)
    return Func(fn)


_DEFAULT_BACKEND: Any = None
_DEFAULT_LOCK = threading.Lock()


def default_backend() -> Any:
    """The backend a kernel's call runs on: one ``vyre.Backend()`` per process, made at first use."""
    global _DEFAULT_BACKEND
    if _DEFAULT_BACKEND is None:
        with _DEFAULT_LOCK:
            if _DEFAULT_BACKEND is None:
                from ._backend import Backend
                _DEFAULT_BACKEND = Backend()
    return _DEFAULT_BACKEND
