"""A program back to Python source: the ``@vyre.kernel`` that translates to the same program.

``vyre.to_python(program)`` writes a module holding one kernel function. Translating it
(``vyre.kernel``) gives the program again, digest included: each JSON form is written in the one
Python spelling the translator reads as that form (typed literals as ``vyre.u32(7)``, operators
with the format's semantics as vyre's functions, ``a if c else b`` for ``select``). What Python
cannot spell raises ``UnprintableProgram`` saying why (docs/python.md, "Programs as Python source").
"""

from __future__ import annotations

import json
import keyword
import math
import struct
from typing import Any, Dict, List

from ._types import value_type

__all__ = ["to_python", "UnprintableProgram"]

# `_ = e` is the phony assignment (eval), so no local may be named `_`.
RESERVED = {"_"}
# Python's functions the printed kernel calls; reached through `builtins` when the program has a
# name like one of them.
PYTHON_FUNCTIONS = ("len", "range", "bool")

INFIX = {"add": "+", "sub": "-", "mul": "*", "shl": "<<", "shr": ">>", "and": "&", "or": "|", "xor": "^",
         "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
FUNCTIONS = {"min", "max", "pow", "atan2", "abs", "popcount", "clz", "ctz", "reverse_bits", "sqrt", "inverse_sqrt",
             "exp", "exp2", "log", "log2", "sin", "cos", "tan", "tanh", "floor", "ceil", "round", "trunc", "fract",
             "fma", "clamp"}
IDS = {"gid": "gid", "lid": "lid", "wid": "wgid", "nwg": "num_workgroups"}
KINDS = {("read", False): "In", ("read_write", True): "Out", ("read_write", False): "Scratch",
         ("uniform", False): "Uniform"}


def _walk(node: Any):
    """Every dict of a program's JSON below ``node``, ``node`` included."""
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def bound_may_change(bound: Any, body: Any) -> bool:
    """Whether a loop's body assigns a local its bound reads, or writes a buffer whose elements the
    bound reads: the rule by which a kernel keeps a range's bound before the loop (_translate.py)."""
    locals_read = {d["var"] for d in _walk(bound) if "var" in d}
    buffers_read = {d["load"] for d in _walk(bound) if "load" in d}
    for d in _walk(body):
        if d.get("assign") in locals_read or d.get("store") in buffers_read:
            return True
        if buffers_read and "atomic" in d and d["atomic"] != "load":
            return True
    return False


class PrivateArray:
    """A private array in a printer's scope: its element type."""

    def __init__(self, type_: str) -> None:
        self.type = type_


class UnprintableProgram(ValueError):
    """The program has no Python spelling; the message says which part and why."""


def to_python(program: Any) -> str:
    """The source of a module whose one ``@vyre.kernel`` is ``program`` (a vyre.Program, a dict or
    JSON text)."""
    if hasattr(program, "to_json"):
        program = program.to_json()
    if isinstance(program, str):
        program = json.loads(program)
    return _Printer(program).module()


def operator_of(e: Dict[str, Any]) -> str:
    """An expression object's operator key (its other keys are operands: index, value, ...)."""
    for special in ("atomic", "cast", "bitcast"):
        if special in e:
            return special
    return next(k for k in e if k != "index")


def names_declared(body: List[Dict[str, Any]]) -> set:
    """Every local, loop variable and private array the statements declare, at any depth."""
    names = set()
    for s in body:
        for kind in ("let", "loop", "array"):
            if kind in s:
                names.add(s[kind])
        for block in ("then", "else", "body"):
            names |= names_declared(s.get(block) or [])
    return names


def free_name(wanted: str, taken: set) -> str:
    name = wanted
    while name in taken:
        name += "_"
    return name


class _Printer:
    def __init__(self, program: Dict[str, Any]) -> None:
        self.p = program
        self.types: Dict[str, str] = {b["name"]: b["type"] for b in program["buffers"]}
        self.scopes: List[Dict[str, str]] = [{}]  # local name -> type, block by block
        self.lines: List[str] = []
        # The module's own names (vyre, math, Python's functions) step aside for the program's.
        taken = set(self.types) | names_declared(program["body"])
        self.vyre = free_name("vyre", taken)
        self.math = free_name("math", taken)
        self.builtins = free_name("builtins", taken) if taken & set(PYTHON_FUNCTIONS) else None
        self.imports = [f"import math as {self.math}" if self.math != "math" else "import math",
                        f"import vyre as {self.vyre}" if self.vyre != "vyre" else "import vyre"]
        if self.builtins:
            self.imports.insert(0, f"import builtins as {self.builtins}" if self.builtins != "builtins"
                                else "import builtins")

    def python(self, function: str) -> str:
        return f"{self.builtins}.{function}" if self.builtins else function

    # ---- the module ----

    def module(self) -> str:
        p = self.p
        bound = sorted((b for b in p["buffers"] if b["access"] != "workgroup"), key=lambda b: b["binding"])
        in_order = [b["binding"] for b in bound] == list(range(len(bound)))
        for b in p["buffers"]:
            self.check_name(b["name"], "buffer")
        # Bound 0, 1, 2, ... in parameter order, else each says its binding.
        params = [f"{b['name']}: {self.annotation(b)}" + ("" if in_order else f" = {self.vyre}.bind({b['binding']})")
                  for b in bound]
        decorator = f"@{self.vyre}.kernel(workgroup={tuple(p['workgroup_size'])!r}{self.domain()})"
        name = p.get("name") or "kernel"
        if not name.isidentifier() or keyword.iskeyword(name) or name in self.types or \
                name in (self.vyre, self.math, self.builtins):
            name = "kernel"
        self.lines = self.imports + ["", "", decorator, f"def {name}({', '.join(params)}):"]
        body_start = len(self.lines)
        for b in p["buffers"]:
            if b["access"] == "workgroup":
                self.emit(1, f"{b['name']} = {self.vyre}.shared({self.vyre}.{b['type']}, {b['count']})")
        self.block(p["body"], 1, new_scope=False)
        if len(self.lines) == body_start:
            self.emit(1, "pass")
        return "\n".join(self.lines) + "\n"

    def domain(self) -> str:
        d = self.p.get("domain")
        if d is None:
            return ""
        if isinstance(d, dict):
            raise UnprintableProgram("a domain in a shape (format version 3): a kernel declares it by the "
                                     "buffer's shape, and a shaped buffer is indexed img[y, x], never flat")
        return f", dim={d!r}"

    def annotation(self, b: Dict[str, Any]) -> str:
        kind = KINDS.get((b["access"], bool(b.get("output"))))
        count = b.get("count", 0)
        dtype = "bool_" if b["type"] == "bool" else b["type"]
        return f"{self.vyre}.{kind}[{self.vyre}.{dtype}{', ' + str(count) if count else ''}]"

    def check_name(self, name: str, what: str) -> None:
        if keyword.iskeyword(name):
            raise UnprintableProgram(f"{what} {name!r} is a Python keyword")
        if name in RESERVED and what != "buffer":
            raise UnprintableProgram(f"{what} {name!r} would read as the phony assignment `_ = e`")

    # ---- statements ----

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * depth + text)

    def block(self, statements: List[Dict[str, Any]], depth: int, new_scope: bool = True,
              names: Dict[str, str] | None = None) -> None:
        if new_scope:
            self.scopes.append(dict(names or {}))
        start = len(self.lines)
        for s in statements:
            self.statement(s, depth)
        if len(self.lines) == start:
            self.emit(depth, "pass")
        if new_scope:
            self.scopes.pop()

    def private_array(self, name: str) -> "PrivateArray | None":
        """The private array `name` names here, if it names one (a private array never takes a
        buffer's name: validation refuses it)."""
        for scope in reversed(self.scopes):
            if name in scope:
                found = scope[name]
                return found if isinstance(found, PrivateArray) else None
        return None

    def local_type(self, name: str) -> str:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        raise UnprintableProgram(f"{name!r} is used where it is not declared")

    def statement(self, s: Dict[str, Any], depth: int) -> None:
        if "let" in s:
            name = s["let"]
            self.check_name(name, "local")
            if name in self.types:
                raise UnprintableProgram(f"local {name!r} is named like a buffer: in Python one name is one thing")
            text = self.expr(s["value"])
            self.scopes[-1][name] = self.type_of(s["value"])
            self.emit(depth, f"{name} = {text}")
        elif "assign" in s:
            self.emit(depth, f"{s['assign']} = {self.expr(s['value'])}")
        elif "store" in s:
            self.emit(depth, f"{s['store']}[{self.expr(s['index'])}] = {self.expr(s['value'])}")
        elif "if" in s:
            self.emit(depth, f"if {self.expr(s['if'])}:")
            self.block(s["then"], depth + 1)
            if s.get("else"):
                self.emit(depth, "else:")
                self.block(s["else"], depth + 1)
        elif "loop" in s:
            name = s["loop"]
            self.check_name(name, "loop variable")
            if name in self.types:
                raise UnprintableProgram(f"loop variable {name!r} is named like a buffer")
            if self.has_atomic(s["from"]) or self.has_atomic(s["to"]):
                raise UnprintableProgram(f"loop {name!r} has an atomic in its bounds, which a kernel's range "
                                         "refuses (the program reads its bound before every trip)")
            if bound_may_change(s["to"], s["body"]):
                raise UnprintableProgram(f"loop {name!r} reads a bound its body changes, and Python's range "
                                         "reads its bound once")
            # A step is a literal of the loop's type, which range takes as a plain int.
            step = f", {next(iter(s['step'].values()))}" if "step" in s else ""
            self.emit(depth, f"for {name} in {self.python('range')}({self.expr(s['from'])}, {self.expr(s['to'])}{step}):")
            self.block(s["body"], depth + 1, names={name: self.type_of(s["from"])})
        elif "while" in s:
            self.emit(depth, f"while {self.expr(s['while'])}:")
            self.block(s["body"], depth + 1)
        elif "break" in s:
            self.emit(depth, "break")
        elif "continue" in s:
            self.emit(depth, "continue")
        elif "barrier" in s:
            self.emit(depth, f"{self.vyre}.barrier()" if s["barrier"] == "workgroup" else f"{self.vyre}.storage_barrier()")
        elif "eval" in s:
            # An expression statement must have an effect (an atomic); `_ = e` evaluates any.
            text = self.expr(s["eval"])
            if self.has_atomic(s["eval"]):
                self.emit(depth, text)
            elif "_" in self.types:
                raise UnprintableProgram("buffer '_' would read as the phony assignment `_ = e` this eval needs")
            else:
                self.emit(depth, f"_ = {text}")
        elif "return" in s:
            self.emit(depth, "return")
        elif "array" in s:
            name = s["array"]
            self.check_name(name, "private array")
            self.scopes[-1][name] = PrivateArray(s["type"])
            self.emit(depth, f"{name} = {self.vyre}.array({self.vyre}.{s['type']}, {s['count']})")
        else:
            raise UnprintableProgram(f"unknown statement {sorted(s)}")

    # ---- expressions ----

    def has_atomic(self, e: Any) -> bool:
        if isinstance(e, dict):
            return "atomic" in e or any(self.has_atomic(v) for v in e.values())
        if isinstance(e, list):
            return any(self.has_atomic(v) for v in e)
        return False

    def type_of(self, e: Dict[str, Any]) -> str:
        """The type of a well-typed expression (the checker has proven the program)."""
        key = operator_of(e)
        if key in ("u32", "i32", "f32", "f16", "f64", "bool"):
            return key
        if key == "var":
            return self.local_type(e["var"])
        if key == "load":
            array = self.private_array(e["load"])
            return array.type if array else value_type(self.types[e["load"]])
        if key == "atomic":
            return self.types[e["buffer"]]
        if key in ("len", "gid", "lid", "wid", "nwg"):
            return "u32"
        if key in ("cast", "bitcast"):
            return e[key]
        if key in ("eq", "ne", "lt", "le", "gt", "ge", "land", "lor", "not"):
            return "bool"
        if key == "select":
            return self.type_of(e["select"][1])
        operand = e[key]
        return self.type_of(operand[0] if isinstance(operand, list) else operand)

    def expr(self, e: Dict[str, Any]) -> str:
        if "atomic" in e:
            return self.atomic(e)
        if "cast" in e:
            target = self.python("bool") if e["cast"] == "bool" else f"{self.vyre}.{e['cast']}"
            return f"{target}({self.expr(e['value'])})"
        if "bitcast" in e:
            return f"{self.vyre}.bitcast({self.vyre}.{e['bitcast']}, {self.expr(e['value'])})"
        key = operator_of(e)
        arg = e[key]
        if key in ("u32", "i32"):
            return f"{self.vyre}.{key}({arg})"
        if key == "f32":
            return f"{self.vyre}.f32({self.float_text(arg)})"
        if key == "f16":
            return f"{self.vyre}.f16({self.float_text(arg, 'e')})"
        if key == "f64":
            return f"{self.vyre}.f64({self.float_text(arg, 'd')})"
        if key == "bool":
            return "True" if arg else "False"
        if key == "var":
            return arg
        if key == "load":
            return f"{arg}[{self.expr(e['index'])}]"
        if key == "len":
            return f"{self.python('len')}({arg})"
        if key in IDS:
            return f"{self.vyre}.{IDS[key]}.{arg}"
        if key in INFIX:
            a, b = arg
            return f"({self.expr(a)} {INFIX[key]} {self.expr(b)})"
        if key in ("div", "rem"):
            return self.division(key, arg)
        if key in ("land", "lor"):
            a, b = arg
            return f"({self.expr(a)} {'and' if key == 'land' else 'or'} {self.expr(b)})"
        if key == "not":
            return f"(not {self.expr(arg)})"
        if key == "neg":
            return f"(-{self.expr(arg)})"
        if key == "bitnot":
            return f"(~{self.expr(arg)})"
        if key == "select":
            c, t, f = arg
            if self.has_atomic(t) or self.has_atomic(f):
                return f"{self.vyre}.select({self.expr(c)}, {self.expr(t)}, {self.expr(f)})"
            return f"({self.expr(t)} if {self.expr(c)} else {self.expr(f)})"
        if key in FUNCTIONS:
            args = arg if isinstance(arg, list) else [arg]
            return f"{self.vyre}.{key}({', '.join(self.expr(a) for a in args)})"
        raise UnprintableProgram(f"unknown expression {key!r}")

    def division(self, key: str, operands: List[Any]) -> str:
        a, b = operands
        t = self.type_of(a)
        if t == "u32":  # Python's // and % agree with WGSL's on unsigned values
            return f"({self.expr(a)} {'//' if key == 'div' else '%'} {self.expr(b)})"
        if key == "div" and t in ("f32", "f16", "f64"):
            return f"({self.expr(a)} / {self.expr(b)})"
        return f"{self.vyre}.{'div_trunc' if key == 'div' else 'rem_trunc'}({self.expr(a)}, {self.expr(b)})"

    def atomic(self, e: Dict[str, Any]) -> str:
        op, buf, index = e["atomic"], e["buffer"], self.expr(e["index"])
        if op == "load":
            return f"{self.vyre}.atomic_load({buf}, {index})"
        if op == "compare_exchange":
            return f"{self.vyre}.atomic_compare_exchange({buf}, {index}, {self.expr(e['expected'])}, {self.expr(e['value'])})"
        return f"{self.vyre}.atomic_{op}({buf}, {index}, {self.expr(e['value'])})"

    def float_text(self, value: Any, layout: str = "f") -> str:
        v = float(value)  # also "nan", "inf", "-inf"
        if math.isfinite(v):  # the f32's (f16's: layout "e", f64's: "d") exact value (JSON gives its shortest decimal)
            v = struct.unpack("<" + layout, struct.pack("<" + layout, v))[0]
        if math.isnan(v):
            return f"{self.math}.nan"
        if math.isinf(v):
            return f"{self.math}.inf" if v > 0 else f"-{self.math}.inf"
        return repr(v)
