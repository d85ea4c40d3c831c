"""A Python function's source as the translator reads it: its syntax tree, where it sits in its
file, and the names it can see (globals, closure cells, builtins)."""

from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
from typing import Any, Dict, Tuple

from ._source_errors import SourcePosition

__all__ = ["FunctionSource", "load_source", "MISSING"]

MISSING = object()


class FunctionSource:
    """``tree`` is the ``def``; positions of its nodes are shifted to the file's lines and columns."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.filename = inspect.getsourcefile(fn) or inspect.getfile(fn)
        try:
            lines, first_line = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            raise OSError(f"{self.name}: vyre reads a kernel's Python source, and Python has none for this "
                          "function (typed at the interactive prompt, or given to python -c): put it in a file"
                          ) from None
        text = "".join(lines)
        dedented = textwrap.dedent(text)
        first = lines[0]
        self.column_offset = len(first) - len(first.lstrip()) - (len(dedented.splitlines()[0])
                                                                  - len(dedented.splitlines()[0].lstrip()))
        self.line_offset = first_line - 1
        module = ast.parse(dedented, filename=self.filename)
        tree = module.body[0]
        if not isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)):
            raise TypeError(f"{self.name}: a kernel is a function written with def")
        self.tree = tree
        self.globals: Dict[str, Any] = fn.__globals__
        self.closure: Dict[str, Any] = {}
        if fn.__closure__:
            self.closure = dict(zip(fn.__code__.co_freevars, fn.__closure__))

    def position(self, node: ast.AST) -> SourcePosition:
        line = getattr(node, "lineno", self.tree.lineno)
        column = getattr(node, "col_offset", 0)
        return SourcePosition(self.filename, line + self.line_offset, column + self.column_offset + 1)

    def lookup(self, name: str) -> Any:
        """The object a free name of the function refers to now: closure, then globals, then builtins."""
        cell = self.closure.get(name)
        if cell is not None:
            try:
                return cell.cell_contents
            except ValueError:
                return MISSING
        if name in self.globals:
            return self.globals[name]
        return getattr(builtins, name, MISSING)

    def lookup_path(self, path: Tuple[str, ...]) -> Any:
        obj = self.lookup(path[0])
        for attr in path[1:]:
            if obj is MISSING:
                break
            obj = getattr(obj, attr, MISSING)
        return obj


_CACHE: Dict[Any, FunctionSource] = {}


def load_source(fn: Any) -> FunctionSource:
    """Parses a function once per process."""
    source = _CACHE.get(fn)
    if source is None:
        source = _CACHE[fn] = FunctionSource(fn)
    return source
