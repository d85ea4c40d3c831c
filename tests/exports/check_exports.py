#!/usr/bin/env python3
"""Fails when libvyre exports a symbol that include/vyre does not declare.

Usage: check_exports.py LIBVYRE INCLUDE_VYRE_DIR

The public headers mark what the library exports with VYRE_API: a class
(`class VYRE_API Cache`), whose members, typeinfo and vtable may be
exported, or a free function (`VYRE_API std::string lower_to_wgsl(...)`).
Every defined dynamic symbol (nm -D --defined-only -C) must belong to one of
them; anything else, such as aot::read_entry or gpu::Dispatcher, is an
internal that leaked through the fence. A member of a nested type counts
only when the headers define that type (`struct Outputs::Entry { ... }`):
a type they only name (`struct Impl;`) is private, and so are its members
(vyre::aot::Cache::Impl::backfill would be a leak).
"""
import pathlib
import re
import subprocess
import sys


def declared(include_dir):
    """VYRE_API classes, VYRE_API functions, and every class the headers define (with a body)."""
    classes, functions, defined = set(), set(), set()
    for header in sorted(pathlib.Path(include_dir).rglob("*.hpp")):  # sub-folders too (lib/)
        scopes = []  # (name, brace depth at which it opened): namespaces and classes
        depth = 0
        pending_class = None  # a class head whose "{" has not been seen yet
        for line in header.read_text().splitlines():
            code = line.split("//")[0]
            m = re.match(r"\s*namespace\s+([\w:]+)\s*\{", code)
            if m:
                scopes.append((m.group(1), depth))
            scope = "::".join(n for n, _ in scopes)
            m = re.match(r"\s*(?:class|struct)\s+(VYRE_API\s+)?(\w+)\b([^;]*)$", code)
            if m and not re.match(r"\s*(?:class|struct)\s+\w+\s*;", code):
                name = f"{scope}::{m.group(2)}"
                if m.group(1):
                    classes.add(name)
                pending_class = name
            m = re.match(r"\s*VYRE_API\s+[^(]*?([\w~]+)\s*\(", code)
            if m:
                functions.add(f"{scope}::{m.group(1)}")
            if pending_class and "{" in code:
                defined.add(pending_class)
                scopes.append((pending_class.rsplit("::", 1)[1], depth))
                pending_class = None
            elif pending_class and ";" in code:
                pending_class = None  # a declaration only
            depth += code.count("{") - code.count("}")
            while scopes and depth <= scopes[-1][1]:
                scopes.pop()
    return classes, functions, defined


def member_of_exported_class(name, classes, defined):
    """Whether `name` is a member of a VYRE_API class, or of a type nested in one that the headers define."""
    for c in classes:
        if not name.startswith(c + "::"):
            continue
        owner = name.rsplit("::", 1)[0]
        if owner == c or owner in defined:
            return True
    return False


def qualified_name(symbol):
    """The name before the parameter list, without template arguments."""
    for prefix in ("typeinfo name for ", "typeinfo for ", "vtable for ", "VTT for ", "guard variable for "):
        if symbol.startswith(prefix):
            return re.sub(r"\[abi:\w+\]", "", symbol[len(prefix):]), True
    name, level = "", 0
    for ch in symbol:
        if ch == "<":
            level += 1
        elif ch == ">":
            level -= 1
        elif ch == "(" and level == 0 and not name.endswith("operator"):
            break
        elif level == 0:
            name += ch
    return re.sub(r"\[abi:\w+\]", "", name).strip(), False


def main():
    library, include_dir = sys.argv[1], sys.argv[2]
    classes, functions, defined = declared(include_dir)
    out = subprocess.run(["nm", "-D", "--defined-only", "-C", library], check=True, capture_output=True,
                         text=True).stdout
    exported, leaked = 0, []
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) < 3:
            continue
        exported += 1
        name, is_class_data = qualified_name(parts[2])
        if is_class_data:
            ok = name in classes
        else:
            ok = name in functions or member_of_exported_class(name, classes, defined)
        if not ok:
            leaked.append(parts[2])
    print(f"{exported} exported symbols; {len(classes)} classes and {len(functions)} functions declared VYRE_API")
    if leaked:
        print(f"{len(leaked)} exported symbols are not declared VYRE_API in {include_dir}:")
        for s in leaked:
            print("  " + s)
        return 1
    if exported == 0:
        print("no exported symbols at all: is this libvyre?")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
