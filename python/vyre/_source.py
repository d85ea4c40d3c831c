"""A Python function's source as the translator reads it: its syntax tree, where it sits in its
file, and the names it can see (globals, closure cells, builtins)."""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
from typing import Any, Dict, Tuple

from ._source_errors import SourcePosition

__all__ = ["FunctionSource", "load_source", "MISSING"]

MISSING = object()


class FunctionSource:
    """``tree`` is the ``def``, parsed with its whole file, so its nodes carry the file's lines and columns."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.filename = inspect.getsourcefile(fn) or inspect.getfile(fn)
        self.tree = _function_node(self.filename, fn)
        self.globals: Dict[str, Any] = fn.__globals__
        self.closure: Dict[str, Any] = {}
        if fn.__closure__:
            self.closure = dict(zip(fn.__code__.co_freevars, fn.__closure__))

    def position(self, node: ast.AST) -> SourcePosition:
        line = getattr(node, "lineno", self.tree.lineno)
        column = getattr(node, "col_offset", 0)
        return SourcePosition(self.filename, line, column + 1)

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


_FILES: Dict[str, Tuple[list, Dict[Tuple[str, int], ast.AST]]] = {}


def _function_node(filename: str, fn: Any) -> ast.AST:
    """The ``def`` of ``fn`` in its file, found by name and first line. A file is parsed once (again
    when linecache reads a changed file), so positions are the file's own lines and columns."""
    lines = linecache.getlines(filename, fn.__globals__)
    known = _FILES.get(filename)
    if known is None or known[0] is not lines:
        nodes: Dict[Tuple[str, int], ast.AST] = {}
        if lines:
            for node in ast.walk(ast.parse("".join(lines), filename)):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                    nodes[(node.name, first)] = node
        known = _FILES[filename] = (lines, nodes)
    node = known[1].get((fn.__name__, fn.__code__.co_firstlineno))
    if node is None:
        raise OSError(f"{fn.__name__}: vyre reads a kernel's Python source, and Python has none for this function "
                      "(typed at the interactive prompt, given to python -c or made by exec): put it in a file")
    return node


_CACHE: Dict[Any, FunctionSource] = {}


def load_source(fn: Any) -> FunctionSource:
    """Parses a function once per process."""
    source = _CACHE.get(fn)
    if source is None:
        source = _CACHE[fn] = FunctionSource(fn)
    return source
