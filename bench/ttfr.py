#!/usr/bin/env python3
"""Time to first result of fresh processes, cold and warm cache.

Starts each tool's first-result program as a new process (fork and exec),
passing the CLOCK_MONOTONIC moment it started it; the program prints its
stage times. Cold and warm runs alternate, rep after rep, so that drift
falls on both alike; medians are reported. Prints JSON lines
{"name", "value", "unit"}; --runs FILE also keeps every run's record.

  warm_start  vyre on a large program (a chain of --statements statements,
              over 4096 elements):
              empty AOT cache against a warm one. The driver's own shader
              cache is switched off in both (MESA_SHADER_CACHE_DISABLE=true,
              __GL_SHADER_DISK_CACHE=0), so the ratio is vyre's cache alone;
              the same again with the driver's cache on, in a fresh folder
              for each cold run and kept for its warm run.
  import      the large program on a fresh "machine" (new HOME, XDG cache,
              vyre cache: nothing of the first machine's driver cache) after
              `vyre cache import` of an export made on a machine of the same
              fingerprint, against that machine's cold first run; with vyre's
              driver data on (the export carries it) and off
              (VYRE_DRIVER_CACHE=0: the driver's own cache is left in the
              first machine's home, so only WGSL travels). Both machines
              are this one, with different homes.
  floor       warm saxpy against the bare floor, in the same run: a process
              that only creates a wgpu-native instance, adapter and device
              (first_result --program floor).
  placement   warm saxpy of a fresh Python process (the @vyre.kernel, NumPy
              imported first) against the C++ program's, with nothing
              set: no driver variables in the environment, so each places
              the driver's cache in vyre's itself; each run says whether it
              did (driver_cache_placed).
  peers       saxpy through vyre (C++), vyre's Python package (vyre-python:
              bench/first_result.py, interpreter start included), CuPy
              RawKernel and Triton: each tool's
              caches (vyre's AOT cache and the driver's shader cache; CuPy's
              kernel cache; Triton's cache; CUDA's JIT cache for all) empty,
              against the same caches kept from the cold run.

    bench/ttfr.py --build build [--figures warm_start,import,floor,placement,peers] [--reps 5]
                  [--statements 5000] [--elements 1048576] [--runs FILE]
                  [--vyre-lib DIR] [--tools vyre,vyre-python,vyre-python-kernel,cupy,triton]
                  [--python-path build/python]

With vyre and vyre-python both in --tools, the Python package's figures are
also given as ratios to the C++ program's (ttfr.vyre-python.*_over_cpp);
with vyre-python and vyre-python-kernel (the same saxpy written as a
@vyre.kernel), the kernel's as ratios to the JSON dict's
(ttfr.vyre-python-kernel.*_over_json).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The large program runs on few elements: its start is the figure, not its arithmetic.
CHAIN_ELEMENTS = 4096


def emit(name, value, unit):
    print(json.dumps({"name": name, "value": value, "unit": unit}), flush=True)


def run_child(argv, env):
    """Starts argv as a fresh process; returns its JSON record."""
    spawn_ns = time.monotonic_ns()
    proc = subprocess.run(argv + ["--spawn-ns", str(spawn_ns)], env=env, capture_output=True, text=True)
    exit_ms = (time.monotonic_ns() - spawn_ns) / 1e6
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr[-2000:]}")
    record = json.loads(lines[-1])
    record["exit_ms"] = exit_ms
    if not record.get("ok", False):
        raise RuntimeError(f"{' '.join(argv)} gave a wrong result")
    return record


class Caches:
    """Cache folders of one cold/warm pair: made empty, kept for the warm run."""

    def __init__(self, root):
        self.dir = tempfile.mkdtemp(prefix="ttfr-", dir=root)

    def path(self, name):
        p = os.path.join(self.dir, name)
        os.makedirs(p, exist_ok=True)
        return p

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def driver_cache_env(caches, enabled):
    if not enabled:
        return {"MESA_SHADER_CACHE_DISABLE": "true", "__GL_SHADER_DISK_CACHE": "0"}
    return {"MESA_SHADER_CACHE_DISABLE": "false", "MESA_SHADER_CACHE_DIR": caches.path("mesa"),
            "__GL_SHADER_DISK_CACHE": "1", "__GL_SHADER_DISK_CACHE_PATH": caches.path("nvidia"),
            "__GL_SHADER_DISK_CACHE_SKIP_CLEANUP": "1"}


def base_env(caches):
    env = dict(os.environ)
    env.update({"VYRE_LOG": "warn", "XDG_CACHE_HOME": caches.path("xdg"), "CUDA_CACHE_PATH": caches.path("cuda"),
                "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"})
    return env


def tool_command(tool, build, elements, statements):
    if tool == "floor":
        return [os.path.join(build, "bench", "first_result"), "--program", "floor"]
    if tool == "vyre-chain":
        return [os.path.join(build, "bench", "first_result"), "--program", "chain", "--statements", str(statements),
                "--elements", str(CHAIN_ELEMENTS)]
    if tool == "vyre":
        return [os.path.join(build, "bench", "first_result"), "--program", "saxpy", "--elements", str(elements)]
    if tool == "vyre-python":
        return [sys.executable, os.path.join(HERE, "first_result.py"), "--elements", str(elements)]
    if tool == "vyre-python-kernel":
        return [sys.executable, os.path.join(HERE, "first_result.py"), "--kernel", "--elements", str(elements)]
    return [sys.executable, os.path.join(HERE, "peers", f"first_result_{tool}.py"), "--elements", str(elements)]


def tool_env(tool, caches, driver_cache, vyre_lib, python_path=None):
    env = base_env(caches)
    env.update(driver_cache_env(caches, driver_cache))
    if tool.startswith("vyre"):
        env["VYRE_AOT_CACHE_DIR"] = caches.path("vyre")
        if vyre_lib and not tool.startswith("vyre-python"):  # a packaged build whose libraries travel beside it
            env["LD_LIBRARY_PATH"] = vyre_lib
        if tool.startswith("vyre-python") and python_path:  # else the installed package
            env["PYTHONPATH"] = python_path
    elif tool == "cupy":
        env["CUPY_CACHE_DIR"] = caches.path("cupy")
    elif tool == "triton":
        env["TRITON_CACHE_DIR"] = caches.path("triton")
        env["PYTHONPATH"] = os.path.join(HERE, "peers") + os.pathsep + env.get("PYTHONPATH", "")
    return env


def keep(runs, record, path):
    """Adds a run's record, and writes it at once, so that a run cut short keeps what it made."""
    runs.append(record)
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def keep_labelled(runs, path, label, records, **extra):
    """Keeps each (kind, record) with its label, its kind of cache and `extra`."""
    for kind, record in records:
        record.update({"label": label, "cache": kind, **extra})
        keep(runs, record, path)


def cold_warm(tool, args, root, driver_cache, runs, label):
    caches = Caches(root)
    try:
        command = tool_command(tool, args.build, args.elements, args.statements)
        env = tool_env(tool, caches, driver_cache, args.vyre_lib, args.python_path)
        cold = run_child(command, env)
        warm = run_child(command, env)
    finally:
        caches.remove()
    keep_labelled(runs, args.runs, label, (("cold", cold), ("warm", warm)), driver_cache=driver_cache)
    return cold, warm


def machine_env(caches, name, driver_data, vyre_lib):
    """A fresh machine: its own home, XDG cache and vyre cache; the driver's own variables unset."""
    env = dict(os.environ)
    for var in list(env):
        if var.startswith("MESA_SHADER_CACHE") or var.startswith("__GL_SHADER_DISK_CACHE"):
            del env[var]
    home = caches.path(name + "-home")
    env.update({"VYRE_LOG": "warn", "HOME": home, "XDG_CACHE_HOME": os.path.join(home, ".cache"),
                "CUDA_CACHE_PATH": caches.path(name + "-cuda"), "VYRE_AOT_CACHE_DIR": caches.path(name + "-vyre"),
                "VYRE_DRIVER_CACHE": "1" if driver_data else "0"})
    if vyre_lib:
        env["LD_LIBRARY_PATH"] = vyre_lib
    return env


def placed_start(tool, args, root, runs):
    """A cold and a warm run of `tool` on a fresh machine whose environment names no driver cache."""
    caches = Caches(root)
    try:
        env = machine_env(caches, "m", True, None if tool.startswith("vyre-python") else args.vyre_lib)
        env.pop("VYRE_DRIVER_CACHE")
        if tool.startswith("vyre-python") and args.python_path:
            env["PYTHONPATH"] = args.python_path
        command = tool_command(tool, args.build, args.elements, args.statements)
        cold = run_child(command, env)
        warm = run_child(command, env)
    finally:
        caches.remove()
    keep_labelled(runs, args.runs, f"placement.{tool}", (("cold", cold), ("warm", warm)))
    return cold, warm


def run_cli(args, build, env):
    proc = subprocess.run([os.path.join(build, "vyre")] + args, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"vyre {' '.join(args)} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return proc.stdout


def imported_start(args, root, driver_data, runs, label):
    """The cold first run of machine A; then machine B's first run after importing A's export."""
    caches = Caches(root)
    try:
        command = tool_command("vyre-chain", args.build, args.elements, args.statements)
        env_a = machine_env(caches, "a", driver_data, args.vyre_lib)
        cold = run_child(command, env_a)
        export = caches.path("export")
        run_cli(["cache", "export", export], args.build, env_a)
        env_b = machine_env(caches, "b", driver_data, args.vyre_lib)
        run_cli(["cache", "import", export], args.build, env_b)
        imported = run_child(command, env_b)
    finally:
        caches.remove()
    keep_labelled(runs, args.runs, label, (("cold", cold), ("imported", imported)), driver_data=driver_data)
    return cold, imported


def median_stages(records):
    names = []
    for r in records:
        for name in r["stages_ms"]:
            if name not in names:
                names.append(name)
    return {n: statistics.median(r["stages_ms"].get(n, 0.0) for r in records) for n in names}


def report(label, colds, warms):
    cold_ms = statistics.median(r["first_result_ms"] for r in colds)
    warm_ms = statistics.median(r["first_result_ms"] for r in warms)
    emit(f"{label}.cold_first_result_ms", cold_ms, "ms")
    emit(f"{label}.warm_first_result_ms", warm_ms, "ms")
    for kind, records in (("cold", colds), ("warm", warms)):
        for stage, ms in median_stages(records).items():
            emit(f"{label}.{kind}.{stage}_ms", ms, "ms")
    return cold_ms, warm_ms


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--figures", default="warm_start")
    parser.add_argument("--tools", default="vyre,cupy,triton")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--statements", type=int, default=5000)
    parser.add_argument("--elements", type=int, default=1 << 20, help="saxpy's elements (peers)")
    parser.add_argument("--runs", help="write every run's record here, one JSON object a line")
    parser.add_argument("--vyre-lib", help="library folder for vyre's programs (a packaged build: scripts/h200)")
    parser.add_argument("--python-path", help="PYTHONPATH for vyre-python (build/python; default: the installed vyre)")
    args = parser.parse_args()
    figures = args.figures.split(",")
    runs = []
    if args.runs:
        open(args.runs, "w").close()
    root = tempfile.mkdtemp(prefix="vyre-ttfr-")
    try:
        if "warm_start" in figures:
            for driver_cache, label in ((False, "warm_start"), (True, "warm_start_with_driver_cache")):
                pairs = [cold_warm("vyre-chain", args, root, driver_cache, runs, label) for _ in range(args.reps)]
                cold_ms, warm_ms = report(label, [c for c, _ in pairs], [w for _, w in pairs])
                ratio = warm_ms / cold_ms
                emit("warm_start_ratio" if not driver_cache else "warm_start_ratio_with_driver_cache", ratio, "ratio")
            emit("warm_start_program_statements", args.statements, "count")
        if "import" in figures:
            for driver_data, label in ((True, "import"), (False, "import_without_driver_data")):
                pairs = [imported_start(args, root, driver_data, runs, label) for _ in range(args.reps)]
                cold_ms, imported_ms = report(label, [c for c, _ in pairs], [w for _, w in pairs])
                emit(f"{label}_ratio", imported_ms / cold_ms, "ratio")
            emit("import_program_statements", args.statements, "count")
        if "floor" in figures:
            warms, floors = [], []
            for rep in range(args.reps):
                _, warm = cold_warm("vyre", args, root, True, runs, "floor.vyre")
                caches = Caches(root)
                try:
                    floor = run_child(tool_command("floor", args.build, args.elements, args.statements),
                                      tool_env("vyre", caches, True, args.vyre_lib))
                finally:
                    caches.remove()
                floor.update({"label": "floor.bare", "cache": "none"})
                keep(runs, floor, args.runs)
                warms.append(warm)
                floors.append(floor)
            warm_ms = statistics.median(r["first_result_ms"] for r in warms)
            floor_ms = statistics.median(r["first_result_ms"] for r in floors)
            emit("floor.vyre_saxpy_warm_first_result_ms", warm_ms, "ms")
            emit("floor.bare_instance_adapter_device_ms", floor_ms, "ms")
            emit("floor.warm_saxpy_over_floor", warm_ms / floor_ms, "ratio")
            for stage, ms in median_stages(warms).items():
                emit(f"floor.vyre_saxpy_warm.{stage}_ms", ms, "ms")
        if "placement" in figures:
            medians = {}
            for tool in ("vyre", "vyre-python-kernel"):
                pairs = [placed_start(tool, args, root, runs) for _ in range(args.reps)]
                medians[tool] = report(f"placement.{tool}", [c for c, _ in pairs], [w for _, w in pairs])
                placed = all(r.get("driver_cache_placed") for pair in pairs for r in pair)
                emit(f"placement.{tool}.driver_cache_placed_every_run", 1.0 if placed else 0.0, "bool")
            emit("placement.python_kernel_warm_over_cpp", medians["vyre-python-kernel"][1] / medians["vyre"][1],
                 "ratio")
        if "peers" in figures:
            tools = args.tools.split(",")
            pairs = {tool: [] for tool in tools}
            for rep in range(args.reps):
                for k in range(len(tools)):  # the order rotates from rep to rep
                    tool = tools[(rep + k) % len(tools)]
                    try:
                        pairs[tool].append(cold_warm(tool, args, root, True, runs, f"ttfr.{tool}"))
                    except Exception as error:  # one tool failing leaves the others' figures
                        print(f"ttfr: {tool}: {error}", file=sys.stderr)
            medians = {}
            for tool in tools:
                if pairs[tool]:
                    medians[tool] = report(f"ttfr.{tool}", [c for c, _ in pairs[tool]], [w for _, w in pairs[tool]])
            if "vyre" in medians and "vyre-python" in medians:
                (c_cold, c_warm), (p_cold, p_warm) = medians["vyre"], medians["vyre-python"]
                emit("ttfr.vyre-python.cold_over_cpp", p_cold / c_cold, "ratio")
                emit("ttfr.vyre-python.warm_over_cpp", p_warm / c_warm, "ratio")
                emit("ttfr.vyre-python.warm_over_cold", p_warm / p_cold, "ratio")
                emit("ttfr.vyre.warm_over_cold", c_warm / c_cold, "ratio")
            if "vyre-python" in medians and "vyre-python-kernel" in medians:
                (j_cold, j_warm), (k_cold, k_warm) = medians["vyre-python"], medians["vyre-python-kernel"]
                emit("ttfr.vyre-python-kernel.cold_over_json", k_cold / j_cold, "ratio")
                emit("ttfr.vyre-python-kernel.warm_over_json", k_warm / j_warm, "ratio")
            emit("ttfr_saxpy_elements", args.elements, "count")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
