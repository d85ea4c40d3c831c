"""A kernel's Python syntax tree to the program's JSON object (format version 1; kernel.py adds a declared domain).

Nothing of the body runs in Python: the translator reads the tree, resolves the free names it
meets (vyre's built-ins, ``@vyre.func`` helpers, int/float/bool constants, which become
literals), infers each expression's type and writes the format's statements and expressions.
Every object it writes remembers the Python node it came from, so that a problem the checker
finds at a JSON path is reported at the user's line (``Translation.position_of``).
"""

from __future__ import annotations

import ast
import builtins
import math
import re
from typing import Any, Dict, List, Optional, Tuple

from . import _language as lang
from ._source import MISSING, FunctionSource, load_source
from ._source_errors import KernelError, KernelNameError, KernelSyntaxError, KernelTypeError, SourcePosition
from ._types import NARROW_TYPES, VERSION_4_TYPES, BufferSpec, ScalarType, _Bind, _Constexpr, bool_, scalar_spec, value_type

__all__ = ["translate", "Translation", "Func"]

INTEGER_TYPES = ("u32", "i32")
NUMERIC_TYPES = ("u32", "i32", "f32", "f16", "f64")
FLOAT_TYPES = ("f32", "f16", "f64")
# What Vulkan defines for 16- and 32-bit floats only: refused on f64 (docs/format-v4.md).
NOT_FOR_F64 = {"exp", "exp2", "log", "log2", "sin", "cos", "tan", "tanh", "pow", "atan2"}
RANGES = {"u32": (0, 2**32 - 1), "i32": (-2**31, 2**31 - 1)}
F32_MAX = 3.4028234663852886e38
F32_OVERFLOW = 3.4028235677973366e38  # FLT_MAX + half an ulp: from here a value rounds to infinity
F16_OVERFLOW = 65520.0  # 65504 + half an ulp: from here a value rounds to infinity
NOT_CONST = object()

UNSUPPORTED_EXPRESSIONS = {
    ast.List: "a list", ast.Tuple: "a tuple", ast.Dict: "a dict", ast.Set: "a set",
    ast.ListComp: "a list comprehension", ast.SetComp: "a set comprehension",
    ast.DictComp: "a dict comprehension", ast.GeneratorExp: "a generator expression",
    ast.Lambda: "a lambda", ast.JoinedStr: "an f-string", ast.Starred: "a starred expression",
    ast.NamedExpr: "an assignment expression (:=)", ast.Await: "await", ast.Yield: "yield",
    ast.YieldFrom: "yield from", ast.Slice: "a slice",
}

ARITHMETIC = {ast.Add: ("+", "add"), ast.Sub: ("-", "sub"), ast.Mult: ("*", "mul"), ast.Div: ("/", "div"),
              ast.FloorDiv: ("//", "div"), ast.Mod: ("%", "rem"), ast.Pow: ("**", "pow"),
              ast.LShift: ("<<", "shl"), ast.RShift: (">>", "shr"), ast.BitAnd: ("&", "and"),
              ast.BitOr: ("|", "or"), ast.BitXor: ("^", "xor"), ast.MatMult: ("@", None)}
COMPARISONS = {ast.Eq: ("==", "eq"), ast.NotEq: ("!=", "ne"), ast.Lt: ("<", "lt"), ast.LtE: ("<=", "le"),
               ast.Gt: (">", "gt"), ast.GtE: (">=", "ge")}
F32_ONLY = {"sqrt", "inverse_sqrt", "exp", "exp2", "log", "log2", "sin", "cos", "tan", "tanh", "floor", "ceil",
            "round", "trunc", "fract", "pow", "atan2", "fma"}
INTEGER_ONLY = {"popcount", "clz", "ctz", "reverse_bits"}
PYTHON_BUILTINS = {builtins.len: "len", builtins.abs: "abs", builtins.min: "min", builtins.max: "max",
                   builtins.range: "range", builtins.int: "int", builtins.float: "float", builtins.bool: "bool"}


class Func:
    """A ``@vyre.func`` helper: inlined at each call from a kernel (calling it from Python raises)."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __repr__(self) -> str:
        return f"<vyre.func {self.__qualname__}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{self.__name__} is a @vyre.func: it is inlined into the kernels that call it "
                        "and does not run in Python")


class Value:
    """A translated expression. ``type`` is None for an int literal whose type its use decides."""

    __slots__ = ("json", "type", "const", "effect", "node", "explicit")

    def __init__(self, json: Any, type_: Optional[str], node: ast.AST, const: Any = NOT_CONST,
                 effect: bool = False, explicit: bool = False) -> None:
        self.json = json
        self.type = type_
        self.const = const
        self.effect = effect
        self.node = node
        # A literal typed by a cast (vyre.u32(7)): it stands as written, and no further cast or
        # negation folds it, so vyre.f32(vyre.u32(3)) is the cast of a u32 literal.
        self.explicit = explicit


class Local:
    __slots__ = ("ir_name", "type", "readonly", "what")

    def __init__(self, ir_name: str, type_: str, readonly: bool = False, what: str = "local") -> None:
        self.ir_name = ir_name
        self.type = type_
        self.readonly = readonly
        self.what = what


class Buffer:
    __slots__ = ("name", "spec", "python_spelling")

    def __init__(self, name: str, spec: BufferSpec, python_spelling: str) -> None:
        self.name = name
        self.spec = spec
        self.python_spelling = python_spelling


class Alias:
    """A helper's parameter bound to the caller's expression (a local, an id or a literal)."""

    __slots__ = ("value",)

    def __init__(self, value: Value) -> None:
        self.value = value


class Frame:
    """One function being translated: the kernel, or a helper inlined into it."""

    def __init__(self, source: FunctionSource, helper: bool) -> None:
        self.source = source
        self.helper = helper
        self.scopes: List[Dict[str, Any]] = [{}]
        self.loop_depth = 0

    def find(self, name: str) -> Any:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None


class Translation:
    """The result: the program's JSON object, the constants it captured, and the source positions."""

    def __init__(self, program: Dict[str, Any], captures: List[Tuple[FunctionSource, Tuple[str, ...], Any]],
                 origins: Dict[int, SourcePosition], root: SourcePosition) -> None:
        self.program = program
        self.output_shapes: Dict[str, Tuple[int, ...]] = {}  # outputs declared with a shape: returned in it
        self.buffer_shapes: Dict[str, Tuple[int, ...]] = {}  # every buffer declared with a shape
        self.captures = captures
        self._origins = origins
        self._root = root
        self._paths: Optional[Dict[str, SourcePosition]] = None

    def position_of(self, path: str) -> SourcePosition:
        """The Python position of the JSON path a checker diagnostic names (its longest known prefix)."""
        if self._paths is None:
            self._paths = {}
            self._walk(self.program, "")
        while path:
            if path in self._paths:
                return self._paths[path]
            shorter = re.sub(r"(\.[^.\[]*|\[\d+\])$", "", path)
            if shorter == path:
                break
            path = shorter
        return self._root

    def _walk(self, obj: Any, path: str) -> None:
        position = self._origins.get(id(obj))
        if position is not None:
            self._paths[path] = position
        if isinstance(obj, dict):
            for key, value in obj.items():
                self._walk(value, f"{path}.{key}" if path else key)
        elif isinstance(obj, list):
            for i, value in enumerate(obj):
                self._walk(value, f"{path}[{i}]")


def translate(fn: Any, workgroup: Tuple[int, int, int], constexprs: Dict[str, Any]) -> Translation:
    """The program of kernel function ``fn`` for these ``vyre.constexpr`` values."""
    return _Translator(load_source(fn), workgroup, constexprs).run()


class _Translator:
    def __init__(self, source: FunctionSource, workgroup: Tuple[int, int, int], constexprs: Dict[str, Any]) -> None:
        self.output_shapes: Dict[str, Tuple[int, ...]] = {}
        self.buffer_shapes: Dict[str, Tuple[int, ...]] = {}
        self.source = source
        self.workgroup = workgroup
        self.constexprs = constexprs
        self.origins: Dict[int, SourcePosition] = {}
        self.captures: List[Tuple[FunctionSource, Tuple[str, ...], Any]] = []
        self.buffers: List[Dict[str, Any]] = []
        self.used_names: set = set()
        self.frames: List[Frame] = []
        self.block: List[Dict[str, Any]] = []
        self.statements_allowed = True
        self.stepped_loop = False  # a range with a step other than 1 makes a version-4 program
        self.private_array = False  # so does a vyre.array
        self.version_4_float = False  # and an f16 or f64 literal or conversion
        self.inlining: List[Any] = []

    # ---- helpers ----

    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    def position(self, node: ast.AST) -> SourcePosition:
        return self.frame.source.position(node)

    def fail(self, node: ast.AST, message: str, cls: type = KernelSyntaxError) -> KernelError:
        return cls(self.position(node), message)

    def mark(self, node: ast.AST, obj: Any) -> Any:
        self.origins[id(obj)] = self.position(node)
        return obj

    def emit(self, node: ast.AST, statement: Dict[str, Any]) -> None:
        self.block.append(self.mark(node, statement))

    def fresh(self, base: str) -> str:
        name, n = base, 2
        while name in self.used_names:
            name, n = f"{base}_{n}", n + 1
        self.used_names.add(name)
        return name

    # ---- the program ----

    def run(self) -> Translation:
        tree = self.source.tree
        self.frames.append(Frame(self.source, helper=False))
        self.parameters(tree)
        body = self.statements(tree.body, new_scope=False)
        version = 4 if self.stepped_loop or self.private_array or self.version_4_float or any(b["type"] in VERSION_4_TYPES for b in self.buffers) else 1
        program = {"vyre": version, "name": self.source.name, "workgroup_size": list(self.workgroup),
                   "buffers": self.buffers, "body": body}
        translation = Translation(program, self.captures, self.origins, self.position(tree))
        translation.output_shapes = self.output_shapes
        translation.buffer_shapes = self.buffer_shapes
        return translation

    def parameters(self, tree: ast.FunctionDef) -> None:
        args = tree.args
        if args.vararg is not None:
            raise self.fail(args.vararg, "*args is not part of the kernel language: give each buffer its own parameter")
        if args.kwarg is not None:
            raise self.fail(args.kwarg, "**kwargs is not part of the kernel language: give each buffer its own parameter")
        params = list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs)
        positional = list(args.posonlyargs) + list(args.args)
        defaults = dict(zip([p.arg for p in positional[len(positional) - len(args.defaults):]], args.defaults))
        defaults.update({p.arg: d for p, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
        binding = 0
        scope = self.frame.scopes[0]
        for param in params:
            name = param.arg
            if param.annotation is None:
                raise self.fail(param, f"parameter {name!r} needs an annotation: vyre.In[f32], vyre.Out[u32], "
                                       "a scalar type (f32) or vyre.constexpr", KernelTypeError)
            kind = self.static_value(param.annotation)
            if isinstance(kind, _Constexpr):
                if name not in self.constexprs:
                    raise self.fail(param, f"constexpr parameter {name!r} was given no value", KernelTypeError)
                scope[name] = Alias(self.constant(self.constexprs[name], param, name))
                continue
            if name in defaults:  # a constexpr's default is its value; a buffer's, its binding
                binding = self.explicit_binding(name, defaults[name])
            if isinstance(kind, ScalarType) and kind.name in NARROW_TYPES:
                raise self.fail(param.annotation, f"parameter {name!r}: a scalar is f32, u32 or i32; {kind.name} is a "
                                f"storage type of buffers (vyre.In[vyre.{kind.name}])", KernelTypeError)
            if isinstance(kind, ScalarType) and kind.name in ("f16", "f64"):
                # A scalar parameter is a uniform value, and uniform memory has no f16 or f64 layout.
                raise self.fail(param.annotation, f"parameter {name!r}: a scalar is f32, u32 or i32; pass an "
                                f"{kind.name} value as vyre.In[vyre.{kind.name}, 1], or an f32 and convert it",
                                KernelTypeError)
            if isinstance(kind, ScalarType) and kind is not bool_:
                spec = scalar_spec(kind)
            elif isinstance(kind, BufferSpec):
                spec = kind
            else:
                raise self.fail(param.annotation, f"parameter {name!r}: {ast.unparse(param.annotation)} is not a "
                                "kernel parameter type (vyre.In[T], vyre.Out[T], vyre.InOut[T], vyre.In[T, N], "
                                "vyre.Uniform[T, N], a scalar type, vyre.constexpr)", KernelTypeError)
            decl = self.mark(param, spec.declaration(name, binding))
            if spec.shape:
                self.buffer_shapes[name] = spec.shape
                if spec.output:
                    self.output_shapes[name] = spec.shape
            binding += 1
            self.buffers.append(decl)
            self.used_names.add(name)
            scope[name] = Buffer(name, spec, ast.unparse(param.annotation))

    def explicit_binding(self, name: str, default: ast.AST) -> int:
        """``= vyre.bind(N)``: the only default value a kernel parameter takes."""
        if isinstance(default, ast.Call) and isinstance(self.resolve(default.func), _Bind):
            self.check_call(default, 1)
            v = self.expr(default.args[0])  # an int constant: a literal, a captured name, an expression of them
            n = v.const if v.type is None else None
            if isinstance(n, int) and 0 <= n < 2**32:
                return n
            raise self.fail(default.args[0], f"vyre.bind(N): N is a binding number, an int from 0, got {n!r}",
                            KernelTypeError)
        raise self.fail(default, f"parameter {name!r}: a kernel parameter's default value is its binding, "
                                 "vyre.bind(N); values are given at the call", KernelTypeError)

    # ---- static names (annotations, built-ins, constants) ----

    def dotted(self, node: ast.AST) -> Optional[Tuple[str, ...]]:
        if isinstance(node, ast.Name):
            return (node.id,)
        if isinstance(node, ast.Attribute):
            inner = self.dotted(node.value)
            return None if inner is None else inner + (node.attr,)
        return None

    def resolve(self, node: ast.AST) -> Any:
        """The Python object a free name or dotted name refers to (MISSING when none); a local,
        parameter or buffer of the kernel shadows it and gives MISSING."""
        path = self.dotted(node)
        if path is None or self.frame.find(path[0]) is not None:
            return MISSING
        obj = self.frame.source.lookup_path(path)
        if isinstance(obj, (bool, int, float)):
            self.captures.append((self.frame.source, path, obj))
        return obj

    def static_value(self, node: ast.AST) -> Any:
        """An annotation's value: names, attributes, subscripts, tuples and constants only."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Tuple):
            return tuple(self.static_value(e) for e in node.elts)
        if isinstance(node, ast.Subscript):
            base = self.static_value(node.value)
            try:
                return base[self.static_value(node.slice)]
            except (TypeError, KeyError, IndexError) as e:
                raise self.fail(node, str(e), KernelTypeError) from None
        if isinstance(node, (ast.Name, ast.Attribute)):
            obj = self.resolve(node)
            if obj is MISSING:
                raise self.fail(node, f"unknown name {ast.unparse(node)!r}", KernelNameError)
            return obj
        raise self.fail(node, f"{ast.unparse(node)} is not a kernel parameter type")

    # ---- literals and types ----

    def literal(self, type_: str, value: Any, node: ast.AST) -> Dict[str, Any]:
        if type_ in RANGES:
            lo, hi = RANGES[type_]
            if not lo <= value <= hi:
                raise self.fail(node, f"{value} does not fit {type_} ({lo}..{hi})", KernelTypeError)
            return self.mark(node, {type_: int(value)})
        if type_ == "f32":
            v = float(value)
            if math.isnan(v):
                return self.mark(node, {"f32": "nan"})
            if math.isinf(v):
                return self.mark(node, {"f32": "inf" if v > 0 else "-inf"})
            if abs(v) >= F32_OVERFLOW:
                raise self.fail(node, f"{value} is beyond f32's range", KernelTypeError)
            return self.mark(node, {"f32": v})
        if type_ in ("f16", "f64"):
            self.version_4_float = True
            v = float(value)
            if math.isnan(v):
                return self.mark(node, {type_: "nan"})
            if math.isinf(v):
                return self.mark(node, {type_: "inf" if v > 0 else "-inf"})
            if type_ == "f16" and abs(v) >= F16_OVERFLOW:
                raise self.fail(node, f"{value} is beyond f16's range (65504)", KernelTypeError)
            return self.mark(node, {type_: v})
        return self.mark(node, {"bool": bool(value)})

    def constant(self, value: Any, node: ast.AST, what: str) -> Value:
        if isinstance(value, bool):  # typed as written: bool(True) is a cast of a bool literal
            return Value(self.literal("bool", value, node), "bool", node, value, explicit=True)
        if isinstance(value, int):
            return Value(None, None, node, value)
        if isinstance(value, float):
            return Value(self.literal("f32", value, node), "f32", node, value)
        raise self.fail(node, f"{what} is a {type(value).__name__}: a kernel captures only int, float and bool "
                              "values", KernelTypeError)

    @staticmethod
    def soft_float(v: Value) -> bool:
        """A Python float constant not typed by a cast: f32 alone, f16 beside an f16, f64 beside an f64
        (where it keeps all of Python's double)."""
        return v.type == "f32" and isinstance(v.const, float) and not v.explicit and not v.effect

    def coerce(self, v: Value, type_: str, context: str) -> Value:
        """``v`` as a ``type_`` value: an untyped int literal takes the type (and a float constant the type
        f16 or f64); anything else must have it."""
        if type_ in ("f16", "f64") and self.soft_float(v):
            return Value(self.literal(type_, v.const, v.node), type_, v.node, v.const)
        if v.type is None:
            if type_ == "bool":
                raise self.fail(v.node, f"{context}: {v.const} is an int where a bool is needed", KernelTypeError)
            return Value(self.literal(type_, v.const, v.node), type_, v.node, v.const)
        if v.type != type_:
            raise self.fail(v.node, f"{context}: expected {type_}, got {v.type}{self.hint(v.type, type_)}",
                            KernelTypeError)
        return v

    @staticmethod
    def hint(got: str, want: str) -> str:
        if want in NUMERIC_TYPES and got in NUMERIC_TYPES:
            return f" (convert with vyre.{want}(...))"
        if want == "bool" and got in NUMERIC_TYPES:
            return " (compare it, e.g. x != 0)"
        return ""

    def concrete(self, v: Value) -> Value:
        """An untyped int literal standing alone: u32, or i32 when negative."""
        if v.type is not None:
            return v
        return self.coerce(v, "u32" if v.const >= 0 else "i32", "literal")

    def unify(self, a: Value, b: Value, what: str, node: ast.AST) -> Tuple[Value, Value, str]:
        if a.type is None and b.type is None:
            a, b = self.concrete(a), self.concrete(b)
        elif a.type is None:
            a = self.coerce(a, b.type, what)
        elif b.type is None:
            b = self.coerce(b, a.type, what)
        elif a.type in ("f16", "f64") and self.soft_float(b):
            b = self.coerce(b, a.type, what)
        elif b.type in ("f16", "f64") and self.soft_float(a):
            a = self.coerce(a, b.type, what)
        if a.type != b.type:
            raise self.fail(node, f"operands of {what} are {a.type} and {b.type}: convert one "
                                  f"(vyre.{a.type}(...) or vyre.{b.type}(...))", KernelTypeError)
        return a, b, a.type

    def op(self, node: ast.AST, key: str, args: List[Value], type_: str, effect: bool = False) -> Value:
        json = args[0].json if len(args) == 1 else [x.json for x in args]
        return Value(self.mark(node, {key: json}), type_, node,
                     effect=effect or any(x.effect for x in args))

    # ---- statements ----

    def statements(self, body: List[ast.stmt], new_scope: bool = True) -> List[Dict[str, Any]]:
        outer = self.block
        self.block = []
        if new_scope:
            self.frame.scopes.append({})
        try:
            for i, stmt in enumerate(body):
                if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                        and isinstance(stmt.value.value, str):
                    continue  # docstring
                self.statement(stmt)
            return self.block
        finally:
            if new_scope:
                self.frame.scopes.pop()
            self.block = outer

    def statement(self, s: ast.stmt) -> None:
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            raise self.fail(s, f"{statement_name(s)} is not part of the kernel language")
        method(s)

    def stmt_Pass(self, s: ast.Pass) -> None:
        pass

    def stmt_Expr(self, s: ast.Expr) -> None:
        e = s.value
        if isinstance(e, ast.Call):
            fn = self.resolve(e.func)
            if isinstance(fn, lang.Builtin) and fn.form == "barrier":
                self.check_call(e, 0)
                self.emit(s, {"barrier": fn.op})
                return
            if isinstance(fn, Func):
                v = self.inline(fn, e, as_statement=True)
                if v is not None and v.effect:
                    self.emit(s, {"eval": v.json})
                return
        v = self.expr(e)
        if not v.effect:
            raise self.fail(s, "this expression has no effect (only atomics and @vyre.func calls "
                               "stand as statements)")
        self.emit(s, {"eval": v.json})

    def stmt_Assign(self, s: ast.Assign) -> None:
        if len(s.targets) != 1:
            raise self.fail(s, "chained assignment (a = b = v) is not part of the kernel language")
        target = s.targets[0]
        if isinstance(target, ast.Name) and isinstance(s.value, ast.Call):
            fn = self.resolve(s.value.func)
            if isinstance(fn, lang.Builtin) and fn.form == "shared":
                self.declare_shared(target, s.value)
                return
            if isinstance(fn, lang.Builtin) and fn.form == "array":
                self.declare_array(s, target, s.value)
                return
        self.assign(s, target, s.value, None)

    def stmt_AnnAssign(self, s: ast.AnnAssign) -> None:
        if s.value is None or not isinstance(s.target, ast.Name):
            raise self.fail(s, "an annotated assignment declares a local: x: vyre.i32 = value")
        t = self.static_value(s.annotation)
        if not isinstance(t, ScalarType) or t.name in NARROW_TYPES:
            raise self.fail(s.annotation, f"a local's annotation is f32, f16, f64, u32, i32 or bool, not "
                            f"{ast.unparse(s.annotation)}", KernelTypeError)
        self.assign(s, s.target, s.value, t.name)

    def assign(self, s: ast.stmt, target: ast.AST, value_node: ast.AST, declared: Optional[str]) -> None:
        if isinstance(target, ast.Subscript):
            buf, index = self.subscript(target, store=True)
            value = self.coerce(self.expr(value_node), value_type(buf.spec.dtype), f"store to {buf.name}")
            self.emit(s, {"store": buf.name, "index": index.json, "value": value.json})
            return
        if not isinstance(target, ast.Name):
            raise self.fail(target, f"assignment to {ast.unparse(target)}: a kernel assigns to a name or to buf[i]")
        name = target.id
        binding = self.frame.find(name)
        value = self.expr(value_node)
        if name == "_" and binding is None and declared is None:  # WGSL's phony assignment: evaluate, drop
            self.emit(s, {"eval": self.concrete(value).json})
            return
        if binding is None:
            if declared is not None:
                value = self.coerce(value, declared, f"{name}: {declared}")
            value = self.concrete(value)
            ir_name = self.fresh(f"{self.frame.source.name}_{name}") if self.frame.helper else name
            self.used_names.add(ir_name)
            self.frame.scopes[-1][name] = Local(ir_name, value.type)
            self.emit(s, {"let": ir_name, "value": value.json})
            return
        if isinstance(binding, Local):
            if binding.readonly:
                raise self.fail(target, f"{name} is a {binding.what} and read-only", KernelTypeError)
            if declared is not None:
                raise self.fail(target, f"{name} is already declared", KernelTypeError)
            if value.type is not None and value.type != binding.type:
                raise self.fail(value_node, f"{name} is {binding.type}; this assigns a {value.type} (a local's "
                                            f"type may not change{self.hint(value.type, binding.type)})",
                                KernelTypeError)
            value = self.coerce(value, binding.type, name)
            self.emit(s, {"assign": binding.ir_name, "value": value.json})
            return
        raise self.fail(target, f"{name} is a parameter: assign to a local, or store into a buffer "
                                f"({name}[i] = ...)", KernelTypeError)

    def stmt_AugAssign(self, s: ast.AugAssign) -> None:
        target = s.target
        if isinstance(target, ast.Subscript):
            buf, index = self.subscript(target, store=True)
            if index.effect:
                raise self.fail(target.slice, "an augmented store evaluates its index twice: no atomics in it")
            current = self.load(target, buf, index)
            value = self.binary(s, s.op, current, self.expr(s.value))
            value = self.coerce(value, value_type(buf.spec.dtype), f"store to {buf.name}")
            self.emit(s, {"store": buf.name, "index": index.json, "value": value.json})
            return
        if not isinstance(target, ast.Name):
            raise self.fail(target, "augmented assignment to a name or to buf[i] only")
        binding = self.frame.find(target.id)
        if not isinstance(binding, Local):
            if binding is None:
                raise self.fail(target, f"unknown name {target.id!r}", KernelNameError)
            raise self.fail(target, f"{target.id} is a parameter: assign to a local", KernelTypeError)
        if binding.readonly:
            raise self.fail(target, f"{target.id} is a {binding.what} and read-only", KernelTypeError)
        current = Value(self.mark(target, {"var": binding.ir_name}), binding.type, target)
        value = self.binary(s, s.op, current, self.expr(s.value))
        if value.type is not None and value.type != binding.type:
            raise self.fail(s, f"{target.id} is {binding.type}; this makes it {value.type} (a local's type may "
                               "not change)", KernelTypeError)
        self.emit(s, {"assign": binding.ir_name, "value": value.json})

    def declare_shared(self, target: ast.Name, call: ast.Call) -> None:
        self.check_call(call, 2)
        t, count = (self.static_value(a) for a in call.args)
        if not isinstance(t, ScalarType) or t is bool_:
            raise self.fail(call.args[0], "vyre.shared(T, N): T is vyre.f32, vyre.u32 or vyre.i32", KernelTypeError)
        if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
            raise self.fail(call.args[1], "vyre.shared(T, N): N is a positive int", KernelTypeError)
        name = target.id
        if self.frame.helper or self.frame.find(name) is not None or name in self.used_names:
            raise self.fail(target, f"workgroup memory {name!r} must be declared once, in the kernel, under a new name",
                            KernelTypeError)
        self.used_names.add(name)
        self.buffers.append(self.mark(call, {"name": name, "access": "workgroup", "type": t.name, "count": count}))
        self.frame.scopes[-1][name] = Buffer(name, BufferSpec("workgroup", t.name, count), "vyre.shared")

    def declare_array(self, s: ast.stmt, target: ast.Name, call: ast.Call) -> None:
        """acc = vyre.array(vyre.f32, 16): the invocation's own zeroed array, in scope like a local
        (declared in a loop's body, it is a new zeroed array each trip, as in Python)."""
        self.check_call(call, 2)
        t, count = (self.static_value(a) for a in call.args)
        if not isinstance(t, ScalarType) or t.name not in ("f32", "u32", "i32", "f16", "f64"):
            raise self.fail(call.args[0], "vyre.array(T, N): T is vyre.f32, vyre.u32, vyre.i32, vyre.f16 or vyre.f64",
                            KernelTypeError)
        if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
            raise self.fail(call.args[1], "vyre.array(T, N): N is a positive int", KernelTypeError)
        name = target.id
        if self.frame.find(name) is not None:
            raise self.fail(target, f"{name} is already declared: a private array takes a new name", KernelTypeError)
        ir_name = self.fresh(f"{self.frame.source.name}_{name}") if self.frame.helper or name in self.used_names \
            else name
        self.used_names.add(ir_name)
        self.private_array = True
        self.frame.scopes[-1][name] = Buffer(ir_name, BufferSpec("private", t.name, count), "vyre.array")
        self.emit(s, {"array": ir_name, "type": t.name, "count": count})

    def condition(self, node: ast.AST, what: str) -> Value:
        return self.coerce(self.expr(node), "bool", what)

    def stmt_If(self, s: ast.If) -> None:
        test = self.condition(s.test, "if")
        statement: Dict[str, Any] = {"if": test.json, "then": self.statements(s.body)}
        if s.orelse:
            statement["else"] = self.statements(s.orelse)
        self.emit(s, statement)

    def loop_body(self, body: List[ast.stmt], prefix: List[Dict[str, Any]], names: Dict[str, Any]) -> List[Any]:
        self.frame.loop_depth += 1
        self.frame.scopes.append(dict(names))
        try:
            return prefix + self.statements(body, new_scope=False)
        finally:
            self.frame.scopes.pop()
            self.frame.loop_depth -= 1

    def stmt_While(self, s: ast.While) -> None:
        if s.orelse:
            raise self.fail(s, "while ... else is not part of the kernel language")
        allowed, self.statements_allowed = self.statements_allowed, False
        try:
            test = self.condition(s.test, "while")
        finally:
            self.statements_allowed = allowed
        self.emit(s, {"while": test.json, "body": self.loop_body(s.body, [], {})})

    def stmt_For(self, s: ast.For) -> None:
        if s.orelse:
            raise self.fail(s, "for ... else is not part of the kernel language")
        if not isinstance(s.target, ast.Name):
            raise self.fail(s.target, "a for loop's variable is one name")
        it = s.iter
        if not (isinstance(it, ast.Call) and self.resolve(it.func) is builtins.range):
            raise self.fail(it, "a kernel loops over range(...) only")
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.fail(it, "range takes 1 to 3 positional arguments")
        allowed, self.statements_allowed = self.statements_allowed, False
        try:
            args = [self.expr(a) for a in it.args]
        finally:
            self.statements_allowed = allowed
        if len(args) == 1:
            args.insert(0, Value(None, None, it, 0))
        start, stop = args[0], args[1]
        step = 1
        if len(args) == 3:
            if args[2].type not in (None,) or args[2].const is NOT_CONST:
                raise self.fail(it.args[2], "range's step is an int constant (a literal, a captured value or a "
                                            "vyre.constexpr)", KernelTypeError)
            step = args[2].const
            if step == 0:
                raise self.fail(it.args[2], "range's step must not be zero", KernelTypeError)
        start, stop, t = self.unify(start, stop, "range", it)
        if t not in INTEGER_TYPES:
            raise self.fail(it, f"range over {t}: a loop counts in u32 or i32", KernelTypeError)
        if any(a.effect for a in args):
            raise self.fail(it, "range's bounds must not contain atomics")
        name = s.target.id
        if self.frame.find(name) is not None:
            raise self.fail(s.target, f"{name} is already declared: a loop variable needs a new name", KernelTypeError)
        ir_name = self.fresh(f"{self.frame.source.name}_{name}") if self.frame.helper else name
        self.used_names.add(ir_name)
        var = Local(ir_name, t, readonly=True, what="loop variable")
        # Python evaluates range's arguments once; a program's loop reads its
        # bound before every trip. A bound the body can change is kept first.
        stop_json = stop.json
        if self.body_changes(s.body, it.args[1] if len(it.args) > 1 else it.args[0]):
            kept = self.fresh(f"{ir_name}_stop")
            self.emit(it, {"let": kept, "value": stop_json})
            stop_json = self.mark(it, {"var": kept})
        if step == 1:
            body = self.loop_body(s.body, [], {name: var})
            self.emit(s, {"loop": ir_name, "from": start.json, "to": stop_json, "body": body})
            return
        if step > 0 or t == "i32":
            # The format's own step (version 4): up while k < b, down while k > b, never wrapping.
            self.stepped_loop = True
            body = self.loop_body(s.body, [], {name: var})
            self.emit(s, {"loop": ir_name, "from": start.json, "to": stop_json,
                          "step": self.literal(t, step, it.args[2]), "body": body})
            return
        # A u32 loop counting down: the trips ceil((a - b) / -step) when a > b,
        # computed as (a - b - 1) / -step + 1 so that nothing wraps, and k = a - trip * -step.
        trip = self.fresh(f"{ir_name}_trip")
        magnitude = self.literal(t, -step, it.args[2])
        one = {t: 1}
        span = {"sub": [{"sub": [start.json, stop_json]}, one]}
        count = self.mark(it, {"select": [{"gt": [start.json, stop_json]},
                                          {"add": [{"div": [span, magnitude]}, one]}, {t: 0}]})
        value = {"sub": [start.json, {"mul": [{"var": trip}, magnitude]}]}
        prefix = [self.mark(s.target, {"let": ir_name, "value": value})]
        body = self.loop_body(s.body, prefix, {name: var})
        self.emit(s, {"loop": trip, "from": {t: 0}, "to": count, "body": body})

    def body_changes(self, body: List[ast.stmt], bound: ast.expr) -> bool:
        """Whether a statement of ``body`` may change ``bound``: it assigns a local the bound reads, or
        writes a buffer whose elements the bound reads (a buffer's length never changes)."""
        locals_read: set = set()
        buffers_read: set = set()

        def visit(n: ast.AST) -> None:
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len":
                return
            if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name):
                buffers_read.add(n.value.id)
                visit(n.slice)
                return
            if isinstance(n, ast.Name):
                locals_read.add(n.id)
            for child in ast.iter_child_nodes(n):
                visit(child)

        visit(bound)
        for stmt in body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call) and buffers_read:
                    called = self.resolve(node.func)
                    if isinstance(called, Func) or (isinstance(called, lang.Builtin) and called.form in ("atomic", "cas")):
                        return True  # an atomic or a helper may write what the bound reads
                targets: List[ast.expr] = []
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                    targets = [node.target]
                for target in targets:
                    if isinstance(target, ast.Name) and target.id in locals_read:
                        return True
                    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                            and target.value.id in buffers_read:
                        return True
        return False

    def stmt_Break(self, s: ast.Break) -> None:
        if self.frame.loop_depth == 0:
            raise self.fail(s, "break outside a loop")
        self.emit(s, {"break": True})

    def stmt_Continue(self, s: ast.Continue) -> None:
        if self.frame.loop_depth == 0:
            raise self.fail(s, "continue outside a loop")
        self.emit(s, {"continue": True})

    def stmt_Return(self, s: ast.Return) -> None:
        if self.frame.helper:
            raise self.fail(s, "a @vyre.func returns once, as its last statement")
        if s.value is not None:
            raise self.fail(s.value, "a kernel returns no value: it stores its results into Out buffers")
        self.emit(s, {"return": True})

    # ---- expressions ----

    def expr(self, node: ast.AST) -> Value:
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            what = UNSUPPORTED_EXPRESSIONS.get(type(node), type(node).__name__)
            raise self.fail(node, f"{what} is not part of the kernel language")
        return method(node)

    def expr_Constant(self, node: ast.Constant) -> Value:
        v = node.value
        if isinstance(v, (bool, int, float)):
            return self.constant(v, node, "this constant")
        raise self.fail(node, f"a {type(v).__name__} constant is not part of the kernel language")

    def expr_Name(self, node: ast.Name) -> Value:
        binding = self.frame.find(node.id)
        if binding is None:
            obj = self.resolve(node)
            if obj is MISSING:
                raise self.fail(node, f"unknown name {node.id!r}", KernelNameError)
            return self.object_value(node, obj)
        return self.binding_value(node, node.id, binding)

    def binding_value(self, node: ast.AST, name: str, binding: Any) -> Value:
        if isinstance(binding, Local):
            return Value(self.mark(node, {"var": binding.ir_name}), binding.type, node)
        if isinstance(binding, Alias):
            v = binding.value
            json = v.json if v.json is None else self.mark(node, dict(v.json))
            return Value(json, v.type, node, v.const, v.effect, v.explicit)
        if binding.spec.scalar:
            return self.load(node, binding, Value(self.mark(node, {"u32": 0}), "u32", node))
        raise self.fail(node, f"{name} is a buffer ({binding.python_spelling}): index it ({name}[i]) or take "
                              f"len({name})", KernelTypeError)

    def object_value(self, node: ast.AST, obj: Any) -> Value:
        if isinstance(obj, (bool, int, float)):
            return self.constant(obj, node, ast.unparse(node))
        if isinstance(obj, (ScalarType, lang.Builtin, Func)) or obj in PYTHON_BUILTINS:
            raise self.fail(node, f"{ast.unparse(node)} is a function: call it", KernelTypeError)
        if isinstance(obj, lang.InvocationId):
            raise self.fail(node, f"{ast.unparse(node)} has an axis: {ast.unparse(node)}.x", KernelTypeError)
        raise self.fail(node, f"{ast.unparse(node)} is a {type(obj).__name__}: a kernel captures only int, float "
                              "and bool values", KernelTypeError)

    def expr_Attribute(self, node: ast.Attribute) -> Value:
        base = self.resolve(node.value)
        if isinstance(base, lang.InvocationId):
            if node.attr not in base.axes:
                raise self.fail(node, f"{base!r} has {', '.join('.' + a for a in base.axes)}, not .{node.attr}",
                                KernelTypeError)
            return Value(self.mark(node, {base.key: node.attr}), "u32", node)
        if base is MISSING:
            path = self.dotted(node.value)
            if path is not None and self.frame.find(path[0]) is not None:
                raise self.fail(node, f"{ast.unparse(node)}: kernel values have no attributes", KernelTypeError)
            if path is None:
                raise self.fail(node, f"{ast.unparse(node)}: an attribute of an expression is not part of the "
                                      "kernel language")
            raise self.fail(node, f"unknown name {ast.unparse(node)!r}", KernelNameError)
        obj = self.resolve(node)
        if obj is MISSING:
            raise self.fail(node, f"unknown name {ast.unparse(node)!r}", KernelNameError)
        return self.object_value(node, obj)

    def subscript(self, node: ast.Subscript, store: bool) -> Tuple[Buffer, Value]:
        base = node.value
        if not isinstance(base, ast.Name):
            raise self.fail(base, f"{ast.unparse(base)} is not a buffer: only buffers and private arrays are indexed", KernelTypeError)
        binding = self.frame.find(base.id)
        if binding is None and self.resolve(base) is MISSING:
            raise self.fail(base, f"unknown name {base.id!r}", KernelNameError)
        if not isinstance(binding, Buffer):
            raise self.fail(base, f"{base.id} is not a buffer: only buffers and private arrays are indexed", KernelTypeError)
        shape = binding.spec.shape
        given = len(node.slice.elts) if isinstance(node.slice, ast.Tuple) else 1
        if isinstance(node.slice, ast.Slice) or given != max(1, len(shape)):
            wanted = f"{binding.name}[{', '.join('yxz'[k] if len(shape) == 2 else 'zyx'[k] for k in range(len(shape)))}]" \
                if shape else f"{binding.name}[i]"
            shaped = f" (shape {shape}, row-major; NumPy's partial indexing has no kernel form)" if shape else ""
            raise self.fail(node.slice, f"{binding.name} takes {max(1, len(shape))} "
                                        f"ind{'ices' if len(shape) > 1 else 'ex'}: {wanted}{shaped}")
        if isinstance(node.slice, ast.Tuple):
            index = self.shaped_index(node.slice, shape)
        else:
            index = self.index(node.slice)
        if store and not (binding.spec.writable or binding.spec.access in ("workgroup", "private")):
            raise self.fail(node, f"{binding.name} is {binding.python_spelling}, which a kernel only reads: store into "
                                  "a vyre.Out or vyre.InOut buffer", KernelTypeError)
        return binding, index

    def index(self, node: ast.expr) -> Value:
        index = self.expr(node)
        if index.type is None:
            index = self.coerce(index, "u32" if index.const >= 0 else "i32", "index")
        if index.type not in INTEGER_TYPES:
            raise self.fail(node, f"an index is u32 or i32, not {index.type}", KernelTypeError)
        return index

    def shaped_index(self, node: ast.Tuple, shape: Tuple[int, ...]) -> Value:
        """img[y, x] of a (H, W) buffer: the row-major flat index y * W + x, in the indices' one type."""
        raw = [self.expr(e) for e in node.elts]
        t = next((p.type for p in raw if p.type is not None), "u32")
        if t not in INTEGER_TYPES:
            bad = next(p for p in raw if p.type == t)
            raise self.fail(bad.node, f"an index is u32 or i32, not {t}", KernelTypeError)
        parts = [self.coerce(p, t, "the indices of a shaped buffer share one type") for p in raw]
        flat = parts[0]
        for part, extent in zip(parts[1:], shape[1:]):
            row = self.op(node, "mul", [flat, Value(self.literal(t, extent, node), t, node, extent)], t)
            flat = self.op(node, "add", [row, part], t)
        return flat

    def load(self, node: ast.AST, buf: Buffer, index: Value) -> Value:
        return Value(self.mark(node, {"load": buf.name, "index": index.json}), value_type(buf.spec.dtype), node,
                     effect=index.effect)

    def expr_Subscript(self, node: ast.Subscript) -> Value:
        buf, index = self.subscript(node, store=False)
        return self.load(node, buf, index)

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Value:
        v = self.expr(node.operand)
        if isinstance(node.op, ast.Not):
            if v.type != "bool":
                raise self.fail(node, f"not on {v.type or 'an int'}: a kernel's `not` takes a bool "
                                      "(write x == 0)", KernelTypeError)
            return self.op(node, "not", [v], "bool")
        if isinstance(node.op, ast.UAdd):
            if v.type not in (None,) + NUMERIC_TYPES:
                raise self.fail(node, f"+ on {v.type}", KernelTypeError)
            return v
        if v.const is not NOT_CONST and v.type in (None, "f32") and not v.explicit:
            folded = -v.const if isinstance(node.op, ast.USub) else (~v.const if v.type is None else None)
            if folded is not None:
                return self.constant(folded, node, "this constant")
        if isinstance(node.op, ast.USub):
            v = self.concrete(v)
            if v.type not in ("i32", "f32", "f16", "f64"):
                raise self.fail(node, f"- on {v.type}: negation takes i32, f32, f16 or f64 (for the wrapped value of a u32 "
                                      "write 0 - x)", KernelTypeError)
            return self.op(node, "neg", [v], v.type)
        v = self.concrete(v)
        if v.type not in INTEGER_TYPES:
            raise self.fail(node, f"~ on {v.type}: takes u32 or i32", KernelTypeError)
        return self.op(node, "bitnot", [v], v.type)

    def expr_BinOp(self, node: ast.BinOp) -> Value:
        return self.binary(node, node.op, self.expr(node.left), self.expr(node.right))

    def binary(self, node: ast.AST, op: ast.operator, a: Value, b: Value) -> Value:
        symbol, key = ARITHMETIC[type(op)]
        if key is None:
            raise self.fail(node, f"{symbol} is not part of the kernel language")
        if a.type is None and b.type is None:
            return self.fold(node, op, a.const, b.const)
        if key in ("shl", "shr"):
            a = self.concrete(a)
            if a.type not in INTEGER_TYPES:
                raise self.fail(node, f"{symbol} shifts a u32 or i32, not {a.type}", KernelTypeError)
            b = self.coerce(b, "u32", f"shift amount of {symbol}")
            return self.op(node, key, [a, b], a.type)
        a, b, t = self.unify(a, b, symbol, node)
        if t == "bool":
            raise self.fail(node, f"{symbol} on bool: use and, or, not", KernelTypeError)
        if key in ("and", "or", "xor") and t not in INTEGER_TYPES:
            raise self.fail(node, f"{symbol} takes u32 or i32, not {t}", KernelTypeError)
        if symbol == "/" and t not in FLOAT_TYPES:
            raise self.fail(node, f"/ on {t}: Python's / makes a float; write // for integer division, or "
                                  f"f32(a) / f32(b)", KernelTypeError)
        if symbol == "**" and t not in ("f32", "f16"):
            raise self.fail(node, f"** on {t}: a kernel raises only f32 and f16 to a power (vyre.pow)"
                            + (", as Vulkan defines pow for 16- and 32-bit floats only: convert with vyre.f32(...)"
                               if t == "f64" else ""), KernelTypeError)
        if symbol == "//" and t == "i32":
            raise self.fail(node, "// on i32: Python floors, WGSL truncates toward zero; write vyre.div_trunc(a, b) "
                                  "for the truncating quotient (the same as // when a and b are not negative)",
                            KernelTypeError)
        if symbol == "%" and t == "i32":
            raise self.fail(node, "% on i32: Python's remainder takes the divisor's sign, WGSL's the dividend's; "
                                  "write vyre.rem_trunc(a, b) for the truncating remainder", KernelTypeError)
        if symbol == "%" and t in FLOAT_TYPES:
            raise self.fail(node, f"% on {t}: Python's remainder takes the divisor's sign; write vyre.rem_trunc(a, b) "
                                  "for the truncating one, or a - vyre.floor(a / b) * b", KernelTypeError)
        if symbol == "//" and t in FLOAT_TYPES:
            quotient = self.op(node, "div", [a, b], t)
            return self.op(node, "floor", [quotient], t)
        return self.op(node, key, [a, b], t)

    def fold(self, node: ast.AST, op: ast.operator, x: int, y: int) -> Value:
        """Two int literals: Python's own result (the type is decided where it is used)."""
        try:
            result = eval(compile(ast.Expression(ast.BinOp(ast.Constant(x), op, ast.Constant(y))), "<fold>", "eval"),
                          {"__builtins__": {}})
        except (ZeroDivisionError, ValueError, OverflowError) as e:
            raise self.fail(node, f"constant expression: {e}", KernelTypeError) from None
        return self.constant(result, node, "this constant")

    def expr_BoolOp(self, node: ast.BoolOp) -> Value:
        key = "land" if isinstance(node.op, ast.And) else "lor"
        word = "and" if key == "land" else "or"
        allowed, self.statements_allowed = self.statements_allowed, False
        try:
            values = [self.coerce(self.expr(v), "bool", f"operand of {word}") for v in node.values]
        finally:
            self.statements_allowed = allowed
        result = values[0]
        for v in values[1:]:
            result = self.op(node, key, [result, v], "bool")
        return result

    def expr_Compare(self, node: ast.Compare) -> Value:
        left = self.expr(node.left)
        result = None
        for i, (op, right_node) in enumerate(zip(node.ops, node.comparators)):
            if type(op) not in COMPARISONS:
                raise self.fail(node, f"{type(op).__name__} comparison is not part of the kernel language "
                                      "(==, !=, <, <=, >, >=)")
            symbol, key = COMPARISONS[type(op)]
            right = self.expr(right_node)
            if i + 1 < len(node.ops) and right.effect:
                raise self.fail(right_node, "a chained comparison evaluates this twice: no atomics in it")
            if left.type is None and right.type is None:
                part = self.constant(eval(compile(ast.Expression(ast.Compare(ast.Constant(left.const), [op],
                                                                             [ast.Constant(right.const)])),
                                                  "<fold>", "eval"), {"__builtins__": {}}), node, "comparison")
            else:
                a, b, t = self.unify(left, right, symbol, node)
                if t == "bool" and key not in ("eq", "ne"):
                    raise self.fail(node, f"{symbol} on bool", KernelTypeError)
                part = self.op(node, key, [a, b], "bool")
            result = part if result is None else self.op(node, "land", [result, part], "bool")
            left = right
        return result

    def expr_IfExp(self, node: ast.IfExp) -> Value:
        test = self.condition(node.test, "condition of a conditional expression")
        allowed, self.statements_allowed = self.statements_allowed, False
        try:
            a, b = self.expr(node.body), self.expr(node.orelse)
        finally:
            self.statements_allowed = allowed
        if a.effect or b.effect:
            raise self.fail(node, "both sides of `a if c else b` are evaluated (it is select): no atomics in them")
        a, b, t = self.unify(a, b, "a conditional expression", node)
        return Value(self.mark(node, {"select": [test.json, a.json, b.json]}), t, node, effect=test.effect)

    # ---- calls ----

    def check_call(self, call: ast.Call, count: Optional[int], name: Optional[str] = None) -> None:
        label = name or ast.unparse(call.func)
        if call.keywords:
            kw = call.keywords[0]
            raise self.fail(kw.value if kw.arg is None else call, f"{label}: keyword arguments are not part of the "
                                                                  "kernel language")
        for a in call.args:
            if isinstance(a, ast.Starred):
                raise self.fail(a, f"{label}: *args is not part of the kernel language")
        if count is not None and len(call.args) != count:
            raise self.fail(call, f"{label} takes {count} argument{'s' if count != 1 else ''}, "
                                  f"got {len(call.args)}", KernelTypeError)

    def expr_Call(self, node: ast.Call) -> Value:
        fn = self.resolve(node.func)
        if fn is MISSING:
            path = self.dotted(node.func)
            if path is not None and self.frame.find(path[0]) is not None:
                raise self.fail(node.func, f"{ast.unparse(node.func)} is not a function", KernelTypeError)
            if path is not None:
                raise self.fail(node.func, f"unknown name {ast.unparse(node.func)!r}", KernelNameError)
            raise self.fail(node.func, "a call of an expression is not part of the kernel language")
        if isinstance(fn, ScalarType):
            if fn.name in NARROW_TYPES:
                raise self.fail(node.func, f"{fn.name} is a storage type, not a value type: convert to "
                                f"{NARROW_TYPES[fn.name]} (a store to a {fn.name} buffer keeps the low bits)",
                                KernelTypeError)
            self.check_call(node, 1)
            return self.cast(node, fn.name, self.expr(node.args[0]))
        if isinstance(fn, Func):
            v = self.inline(fn, node, as_statement=False)
            if v is None:
                raise self.fail(node, f"{fn.__name__} returns no value", KernelTypeError)
            return v
        if isinstance(fn, lang.Builtin):
            return self.builtin(node, fn, fn.name)
        python = PYTHON_BUILTINS.get(fn) if _hashable(fn) else None
        if python == "len":
            self.check_call(node, 1)
            arg = node.args[0]
            binding = self.frame.find(arg.id) if isinstance(arg, ast.Name) else None
            if not isinstance(binding, Buffer):
                raise self.fail(arg, "len() takes a buffer", KernelTypeError)
            if binding.spec.access == "private":  # its count, known here
                return Value(self.literal("u32", binding.spec.count, node), "u32", node, binding.spec.count)
            return Value(self.mark(node, {"len": binding.name}), "u32", node)
        if python in ("abs", "min", "max"):
            return self.builtin(node, lang.BUILTINS[python], python)
        if python == "bool":
            self.check_call(node, 1)
            return self.cast(node, "bool", self.expr(node.args[0]))
        if python in ("int", "float"):
            raise self.fail(node.func, f"{python}() is not a kernel type: write vyre.{'i32' if python == 'int' else 'f32'}"
                                       f"(...){' or vyre.u32(...)' if python == 'int' else ''}", KernelTypeError)
        if python == "range":
            raise self.fail(node, "range(...) is only the iterable of a for loop")
        raise self.fail(node.func, f"call to {ast.unparse(node.func)}, which is neither a vyre built-in nor a "
                                   "@vyre.func")

    def cast(self, node: ast.AST, t: str, v: Value) -> Value:
        """``T(v)``: a Python constant becomes a T literal; anything else, an explicitly typed literal
        included, is the format's cast (also to its own type: the program says what was written)."""
        if v.const is not NOT_CONST and not v.effect and not v.explicit:
            c = v.const
            if t in INTEGER_TYPES:
                if isinstance(c, float):
                    if math.isnan(c) or math.isinf(c):
                        raise self.fail(node, f"{t}({c}) is not a number", KernelTypeError)
                    c = int(c)
                return Value(self.literal(t, int(c), node), t, node, int(c), explicit=True)
            if t in FLOAT_TYPES:
                return Value(self.literal(t, float(c), node), t, node, float(c), explicit=True)
            return Value(self.literal(t, bool(c), node), t, node, bool(c), explicit=True)
        if t in ("f16", "f64"):
            self.version_4_float = True
        return Value(self.mark(node, {"cast": t, "value": v.json}), t, node, effect=v.effect)

    def builtin(self, node: ast.Call, fn: lang.Builtin, label: str) -> Value:
        form, op = fn.form, fn.op
        name = f"vyre.{fn.name}" if label == fn.name and label not in ("abs", "min", "max") else label
        if form in ("unary", "binary", "ternary"):
            self.check_call(node, {"unary": 1, "binary": 2, "ternary": 3}[form], name)
            args = [self.expr(a) for a in node.args]
            if op in F32_ONLY:
                # Floats only: f16 or f64 when an argument is, else f32.
                t = next((a.type for a in args if a.type in ("f16", "f64")), "f32")
                if t == "f64" and op in NOT_FOR_F64:
                    raise self.fail(node, f"{name} is not defined for f64 (Vulkan defines it for 16- and 32-bit "
                                          f"floats only): convert with vyre.f32(...) and back", KernelTypeError)
                args = [self.coerce(a, t, f"{name}") for a in args]
                return self.op(node, op, args, t)
            if all(a.type is None for a in args) and op in ("abs", "min", "max"):
                return self.constant({"abs": abs, "min": min, "max": max}[op](*(a.const for a in args)), node,
                                     "this constant")
            typed = [a for a in args if a.type is not None]
            t = typed[0].type if typed else self.concrete(args[0]).type
            args = [self.coerce(a, t, name) for a in args]
            if op in INTEGER_ONLY and t not in INTEGER_TYPES:
                raise self.fail(node, f"{name} takes u32 or i32, not {t}", KernelTypeError)
            if t == "bool":
                raise self.fail(node, f"{name} takes numbers, not bool", KernelTypeError)
            return self.op(node, op, args, t)
        if form in ("atomic", "cas", "atomic_load"):
            count = {"atomic": 3, "cas": 4, "atomic_load": 2}[form]
            self.check_call(node, count, name)
            buf_node = node.args[0]
            binding = self.frame.find(buf_node.id) if isinstance(buf_node, ast.Name) else None
            if not isinstance(binding, Buffer):
                raise self.fail(buf_node, f"{name}: the first argument is a buffer", KernelTypeError)
            if not (binding.spec.writable or binding.spec.access == "workgroup"):
                raise self.fail(buf_node, f"{name}: {binding.name} is {binding.python_spelling}; atomics work on "
                                          "vyre.Out, vyre.InOut and vyre.shared buffers", KernelTypeError)
            if binding.spec.dtype not in INTEGER_TYPES:
                raise self.fail(buf_node, f"{name}: {binding.name} holds {binding.spec.dtype}; atomics work on u32 "
                                          "and i32", KernelTypeError)
            index = self.expr(node.args[1])
            if index.type is None:
                index = self.concrete(index)
            if index.type not in INTEGER_TYPES:
                raise self.fail(node.args[1], f"an index is u32 or i32, not {index.type}", KernelTypeError)
            d: Dict[str, Any] = {"atomic": op, "buffer": binding.name, "index": index.json}
            parts = [index]
            if form == "cas":
                expected = self.coerce(self.expr(node.args[2]), binding.spec.dtype, name)
                d["expected"] = expected.json
                parts.append(expected)
            if form != "atomic_load":
                value = self.coerce(self.expr(node.args[-1]), binding.spec.dtype, name)
                d["value"] = value.json
                parts.append(value)
            return Value(self.mark(node, d), binding.spec.dtype, node, effect=True)
        if form == "bitcast":
            self.check_call(node, 2, name)
            t = self.static_value(node.args[0])
            if not isinstance(t, ScalarType) or t is bool_:
                raise self.fail(node.args[0], "vyre.bitcast(T, v): T is vyre.u32, vyre.i32 or vyre.f32",
                                KernelTypeError)
            v = self.concrete(self.expr(node.args[1]))
            return Value(self.mark(node, {"bitcast": t.name, "value": v.json}), t.name, node, effect=v.effect)
        if form == "select":  # both sides evaluated, atomics allowed: the format's select as written
            self.check_call(node, 3, name)
            test = self.condition(node.args[0], f"{name}'s condition")
            a, b, t = self.unify(self.expr(node.args[1]), self.expr(node.args[2]), name, node)
            return Value(self.mark(node, {"select": [test.json, a.json, b.json]}), t, node,
                         effect=test.effect or a.effect or b.effect)
        if form == "barrier":
            raise self.fail(node, f"{name}() is a statement, not a value")
        if form == "array":
            raise self.fail(node, f"{name}(...) declares a private array: acc = vyre.array(vyre.f32, 16)")
        raise self.fail(node, f"{name}(...) declares workgroup memory: tile = vyre.shared(vyre.f32, 256)")

    # ---- @vyre.func ----

    def inline(self, fn: Func, call: ast.Call, as_statement: bool) -> Optional[Value]:
        if fn in self.inlining:
            raise self.fail(call, f"{fn.__name__} calls itself: a @vyre.func is inlined and cannot recurse")
        self.check_call(call, None, fn.__name__)
        source = load_source(fn.fn)
        tree = source.tree
        params = list(tree.args.posonlyargs) + list(tree.args.args)
        if tree.args.vararg or tree.args.kwarg or tree.args.kwonlyargs:
            raise KernelSyntaxError(source.position(tree), f"{fn.__name__}: a @vyre.func takes positional "
                                                           "parameters only")
        if len(call.args) != len(params):
            raise self.fail(call, f"{fn.__name__} takes {len(params)} arguments, got {len(call.args)}",
                            KernelTypeError)
        frame = Frame(source, helper=True)
        for param, arg in zip(params, call.args):
            binding = self.frame.find(arg.id) if isinstance(arg, ast.Name) else None
            if isinstance(binding, Buffer) and not binding.spec.scalar:
                frame.scopes[0][param.arg] = binding
                continue
            v = self.expr(arg)
            simple = v.const is not NOT_CONST or (isinstance(v.json, dict) and len(v.json) == 1
                                                  and next(iter(v.json)) in ("var", "gid", "lid", "wid", "nwg"))
            if simple or (not self.statements_allowed and not v.effect):
                frame.scopes[0][param.arg] = Alias(v)
            elif not self.statements_allowed:
                raise self.fail(arg, f"{fn.__name__}: this argument has an atomic; call it in a statement of its own")
            else:
                v = self.concrete(v)
                ir_name = self.fresh(f"{fn.__name__}_{param.arg}")
                self.emit(arg, {"let": ir_name, "value": v.json})
                frame.scopes[0][param.arg] = Local(ir_name, v.type, readonly=True, what="parameter of a @vyre.func")
        body = list(tree.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]
        result_node = None
        if body and isinstance(body[-1], ast.Return):
            result_node = body[-1].value
            body = body[:-1]
        self.frames.append(frame)
        self.inlining.append(fn)
        try:
            if body:
                if not self.statements_allowed:
                    raise self.fail(body[0], f"{fn.__name__} has statements, so it cannot be inlined here (a loop "
                                             "condition or bound, and/or, a conditional expression); assign its "
                                             "result to a local first")
                for stmt in body:
                    self.statement(stmt)
            result = self.expr(result_node) if result_node is not None else None
        finally:
            self.inlining.pop()
            self.frames.pop()
        return result


def _hashable(obj: Any) -> bool:
    try:
        hash(obj)
        return True
    except TypeError:
        return False


def statement_name(s: ast.stmt) -> str:
    names = {"With": "a with statement", "AsyncWith": "an async with statement", "Try": "a try statement",
             "Raise": "raise", "Assert": "assert", "Import": "import", "ImportFrom": "import",
             "FunctionDef": "a nested def", "ClassDef": "a class", "Global": "global", "Nonlocal": "nonlocal",
             "Delete": "del", "Match": "match", "AsyncFor": "async for", "TryStar": "a try statement"}
    return names.get(type(s).__name__, type(s).__name__)
