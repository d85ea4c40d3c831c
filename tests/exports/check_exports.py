#!/usr/bin/env python3
"""Fails when libvyre exports a symbol that include/vyre does not declare.

Usage: check_exports.py LIBVYRE INCLUDE_VYRE_DIR

The public headers mark what the library exports with VYRE_API: a class
(`class VYRE_API Cache`), whose members, typeinfo and vtable may be
exported, or a free function (`VYRE_API std::string lower_to_wgsl(...)`).
Every defined dynamic symbol (nm -D --defined-only -C) must belong to one of
them; anything else, such as aot::read_entry or gpu::Dispatcher, is an
internal that leaked through the fence.
"""
import pathlib
import re
import subprocess
import sys


def declared(include_dir):
    classes, functions = set(), set()
    for header in sorted(pathlib.Path(include_dir).glob("*.hpp")):
        namespaces = []  # (name, brace depth at which it opened)
        depth = 0
        for line in header.read_text().splitlines():
            code = line.split("//")[0]
            m = re.match(r"\s*namespace\s+([\w:]+)\s*\{", code)
            if m:
                namespaces.append((m.group(1), depth))
            ns = "::".join(n for n, _ in namespaces)
            m = re.match(r"\s*(?:class|struct)\s+VYRE_API\s+(\w+)", code)
            if m:
                classes.add(f"{ns}::{m.group(1)}")
            m = re.match(r"\s*VYRE_API\s+[^(]*?([\w~]+)\s*\(", code)
            if m:
                functions.add(f"{ns}::{m.group(1)}")
            depth += code.count("{") - code.count("}")
            while namespaces and depth <= namespaces[-1][1]:
                namespaces.pop()
    return classes, functions


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
    classes, functions = declared(include_dir)
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
            ok = name in functions or any(name.startswith(c + "::") for c in classes)
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
