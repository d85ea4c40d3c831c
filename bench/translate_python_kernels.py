#!/usr/bin/env python3
"""Translation time of the Python kernels of examples/python: milliseconds a kernel from its
source to a checked vyre.Program (reading and parsing the source, translating the syntax tree,
the library's check), as the first call of a kernel in a process pays it once.

    PYTHONPATH=build/python .venv/bin/python bench/translate_python_kernels.py [repetitions]
"""

from __future__ import annotations

import importlib.util
import linecache
import statistics
import sys
import time
from pathlib import Path

import vyre
from vyre import _source, _translate

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "python"


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, path.stem)


def main() -> None:
    repetitions = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    print(f"{'example':<14} {'median ms':>10} {'min ms':>8}  (source -> checked Program, {repetitions} runs)")
    for path in sorted(EXAMPLES.glob("*.py")):
        kernel = load(path)
        times = []
        for _ in range(repetitions):
            # read and parse the file again each time: the first call's cost in a process
            _source._CACHE.pop(kernel.fn, None)
            _source._FILES.pop(str(path), None)
            linecache.checkcache()
            linecache.clearcache()
            start = time.perf_counter()
            translation = _translate.translate(kernel.fn, kernel.workgroup, {})
            vyre.Program.from_dict(translation.program)
            times.append((time.perf_counter() - start) * 1e3)
        print(f"{path.stem:<14} {statistics.median(times):>10.3f} {min(times):>8.3f}")


if __name__ == "__main__":
    main()
