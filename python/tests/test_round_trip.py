"""The language covers the format: programs printed back as Python source translate to themselves.

tests/tools/round_trip_corpus writes every conformance case's programs (operator on loaded operands
and on literals), the conformance scenarios, the every-construct program and 200 of the differential
tester's generated programs as JSON. Each is printed by ``vyre.to_python`` into a module of its own,
imported, and its ``@vyre.kernel`` translated: the digest must be the JSON program's. The programs
Python cannot spell are counted by reason (docs/python.md, "Programs as Python source").
"""

from __future__ import annotations

import collections
import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

import vyre
from conftest import SOURCE_DIR

# Why a program may have no Python spelling; any other failure is a bug of the printer or translator.
KNOWN_LIMITS = ("is a Python keyword", "phony assignment", "is named like a buffer", "a domain in a shape",
                "reads its bound once", "an atomic in its bounds")


def corpus_tool() -> Path | None:
    given = os.environ.get("VYRE_ROUND_TRIP_CORPUS")
    if given:
        return Path(given)
    built = SOURCE_DIR / "build" / "tests" / "round_trip_corpus"
    return built if built.exists() else None


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tool = corpus_tool()
    if tool is None:
        pytest.skip("no tests/tools/round_trip_corpus in this build (the round trip runs in the CTest suite)")
    folder = tmp_path_factory.mktemp("corpus")
    subprocess.run([str(tool), str(folder), "--generated", "200"], check=True, timeout=300)
    return sorted(folder.glob("*.json"))


def kernel_of(source: str, folder: Path, stem: str) -> vyre.KernelFunction:
    path = folder / f"{stem}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"round_trip_{stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernels = [v for v in vars(module).values() if isinstance(v, vyre.KernelFunction)]
    assert len(kernels) == 1, source
    return kernels[0]


def test_every_printable_program_translates_back_to_its_digest(corpus, tmp_path):
    families = collections.Counter(p.name.split(".")[0] for p in corpus)
    assert families["conformance-loaded"] >= 50 and families["generated"] == 200, families
    unprintable = collections.Counter()
    mismatches = []
    for n, path in enumerate(corpus):
        program = vyre.Program.from_json(str(path))
        try:
            source = vyre.to_python(program)
        except vyre.UnprintableProgram as why:
            assert any(limit in str(why) for limit in KNOWN_LIMITS), f"{path.name}: {why}"
            # Only the generator (and the every-construct program) pick names Python cannot take:
            # WGSL's and Python's keywords, one name for a local and a buffer, on purpose, to test
            # the lowering's renaming. Every conformance program is printed.
            # A loop whose body moves its own bound has no range that reads it as the program does.
            assert path.name.startswith(("generated.", "construct.")) or "reads its bound once" in str(why) \
                or "an atomic in its bounds" in str(why), \
                f"{path.name}: {why}"
            unprintable[next(limit for limit in KNOWN_LIMITS if limit in str(why))] += 1
            continue
        try:
            digest = kernel_of(source, tmp_path, f"k{n}").program.digest
        except vyre.KernelError as e:
            mismatches.append(f"{path.name}: {e}\n{source}")
            continue
        if digest != program.digest:
            mismatches.append(f"{path.name}: digest {digest} != {program.digest}\n{source}")
    assert not mismatches, f"{len(mismatches)} of {len(corpus)} did not round-trip:\n" + "\n".join(m.splitlines()[0] + "\n" + m.splitlines()[1] for m in mismatches)
    printed = len(corpus) - sum(unprintable.values())
    print(f"\nround trip: {printed} of {len(corpus)} programs; unprintable: {dict(unprintable)}")
    assert printed >= 0.85 * len(corpus), dict(unprintable)


def test_the_printer_writes_what_a_person_would():
    program = vyre.Program.from_json(str(SOURCE_DIR / "examples" / "saxpy.json"))
    source = vyre.to_python(program)
    assert "@vyre.kernel(workgroup=(64, 1, 1))" in source
    assert "def saxpy(alpha: vyre.In[vyre.f32, 1], x: vyre.In[vyre.f32], y: vyre.In[vyre.f32], " \
           "out: vyre.Out[vyre.f32]):" in source, source


def test_what_python_cannot_spell_is_refused_with_the_reason():
    def program(**changes):
        p = {"vyre": 1, "workgroup_size": [1, 1, 1],
             "buffers": [{"name": "out", "binding": 0, "access": "read_write", "type": "u32", "output": True}],
             "body": [{"let": "i", "value": {"gid": "x"}},
                      {"store": "out", "index": {"var": "i"}, "value": {"u32": 1}}]}
        p.update(changes)
        return vyre.Program.from_dict(p)

    renamed = program(body=[{"let": "lambda", "value": {"gid": "x"}},
                            {"store": "out", "index": {"var": "lambda"}, "value": {"u32": 1}}])
    with pytest.raises(vyre.UnprintableProgram, match="'lambda' is a Python keyword"):
        vyre.to_python(renamed)
    phony = program(body=[{"let": "_", "value": {"gid": "x"}},
                          {"store": "out", "index": {"var": "_"}, "value": {"u32": 1}}])
    with pytest.raises(vyre.UnprintableProgram, match="phony assignment"):
        vyre.to_python(phony)


def test_bindings_and_names_the_module_uses_are_spelled_too(tmp_path):
    p = vyre.Program.from_dict({
        "vyre": 1, "workgroup_size": [1, 1, 1],
        "buffers": [{"name": "vyre", "binding": 3, "access": "read", "type": "u32"},
                    {"name": "len", "binding": 7, "access": "read_write", "type": "u32", "output": True}],
        "body": [{"let": "math", "value": {"len": "vyre"}},
                 {"store": "len", "index": {"u32": 0}, "value": {"load": "vyre", "index": {"var": "math"}}}]})
    source = vyre.to_python(p)
    assert "vyre: vyre_.In[vyre_.u32] = vyre_.bind(3)" in source and "builtins.len(vyre)" in source, source
    assert kernel_of(source, tmp_path, "names").program.digest == p.digest


def test_casts_are_kept_as_written(tmp_path):
    # vyre.f32(vyre.u32(3)) is the cast of a u32 literal, and vyre.f32(x) of an f32 is a cast too:
    # the translation says what was written, so a printed program comes back unchanged.
    p = vyre.Program.from_dict({
        "vyre": 1, "workgroup_size": [1, 1, 1],
        "buffers": [{"name": "x", "binding": 0, "access": "read", "type": "f32"},
                    {"name": "out", "binding": 1, "access": "read_write", "type": "f32", "output": True}],
        "body": [{"store": "out", "index": {"u32": 0},
                  "value": {"add": [{"cast": "f32", "value": {"u32": 3}},
                                    {"cast": "f32", "value": {"load": "x", "index": {"u32": 0}}}]}}]})
    source = vyre.to_python(p)
    assert "vyre.f32(vyre.u32(3))" in source
    assert kernel_of(source, tmp_path, "casts").program.digest == p.digest


def test_stepped_loops_print_as_range_with_a_step_and_come_back(tmp_path):
    # Format version 4's loop step is range's third argument; a bound the body moves is refused.
    def program(bound, body):
        return vyre.Program.from_dict({
            "vyre": 4, "workgroup_size": [1, 1, 1],
            "buffers": [{"name": "out", "binding": 0, "access": "read_write", "type": "i32", "output": True}],
            "body": [{"let": "n", "value": {"i32": -20}},
                     {"loop": "k", "from": {"i32": 9}, "to": bound, "step": {"i32": -3}, "body": body}]})

    p = program({"var": "n"}, [{"store": "out", "index": {"u32": 0}, "value": {"var": "k"}}])
    source = vyre.to_python(p)
    assert "for k in range(n, " not in source and "range(vyre.i32(9), n, -3)" in source, source
    assert kernel_of(source, tmp_path, "stepped").program.digest == p.digest
    moved = program({"var": "n"}, [{"assign": "n", "value": {"add": [{"var": "n"}, {"i32": 1}]}}])
    with pytest.raises(vyre.UnprintableProgram, match="reads its bound once"):
        vyre.to_python(moved)


def test_f16_programs_print_and_come_back(tmp_path):
    p = vyre.Program.from_dict({
        "vyre": 4, "workgroup_size": [64, 1, 1],
        "buffers": [{"name": "x", "binding": 0, "access": "read", "type": "f16"},
                    {"name": "out", "binding": 1, "access": "read_write", "type": "f16", "output": True},
                    {"name": "n", "binding": 2, "access": "read_write", "type": "u32", "output": True}],
        "body": [{"let": "i", "value": {"gid": "x"}},
                 {"store": "out", "index": {"var": "i"},
                  "value": {"div": [{"add": [{"load": "x", "index": {"var": "i"}}, {"f16": 0.1}]}, {"f16": "inf"}]}},
                 {"store": "n", "index": {"var": "i"},
                  "value": {"cast": "u32", "value": {"cast": "f16", "value": {"f32": 2.5}}}}]})
    source = vyre.to_python(p)
    assert "vyre.In[vyre.f16]" in source and "vyre.f16(0.0999755859375)" in source and "vyre.f16(math.inf)" in source, source
    assert kernel_of(source, tmp_path, "halves").program.digest == p.digest


def test_f64_programs_print_and_come_back(tmp_path):
    p = vyre.Program.from_dict({
        "vyre": 4, "workgroup_size": [64, 1, 1],
        "buffers": [{"name": "x", "binding": 0, "access": "read", "type": "f64"},
                    {"name": "out", "binding": 1, "access": "read_write", "type": "f64", "output": True},
                    {"name": "n", "binding": 2, "access": "read_write", "type": "i32", "output": True}],
        "body": [{"let": "i", "value": {"gid": "x"}},
                 {"array": "w", "type": "f64", "count": 2},
                 {"store": "w", "index": {"u32": 1}, "value": {"load": "x", "index": {"var": "i"}}},
                 {"store": "out", "index": {"var": "i"},
                  "value": {"div": [{"add": [{"load": "w", "index": {"u32": 1}}, {"f64": 0.1}]}, {"f64": "-inf"}]}},
                 {"store": "n", "index": {"var": "i"},
                  "value": {"cast": "i32", "value": {"cast": "f64", "value": {"f32": 2.5}}}}]})
    source = vyre.to_python(p)
    assert "vyre.In[vyre.f64]" in source and "vyre.f64(0.1)" in source and "vyre.f64(-math.inf)" in source, source
    assert "vyre.array(vyre.f64, 2)" in source, source
    assert kernel_of(source, tmp_path, "doubles").program.digest == p.digest
