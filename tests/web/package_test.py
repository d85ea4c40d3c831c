#!/usr/bin/env python3
"""An exported kernel as a package a project uses: `vyre export web` of
examples/saxpy.json, then
  - kernel.d.ts type-checked with tsc against a consumer that uses it right,
    and against consumers that misuse it (each must be refused);
  - the package bundled by esbuild through its package.json, and the bundle
    run in headless Chromium, its outputs checked;
  - the demo page (index.html) opened in headless Chromium: its DOM must show
    the run file's expected outputs, and its screenshot must not be blank.

    package_test.py VYRE SOURCE_DIR

Exit codes: 0 passed, 1 failed, 77 chromium, tsc or esbuild missing (outside CI).
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

CONSUMER = """import { createKernel, INFO, type Inputs, type Outputs, type Kernel } from "./saxpy/kernel.js";

export async function run(device: GPUDevice): Promise<Float32Array> {
  const kernel: Kernel = await createKernel(device);
  const inputs: Inputs = { alpha: new Float32Array([2]), x: new Float32Array(4), y: Float32Array.of(1, 2, 3, 4) };
  const outputs: Outputs = await kernel.dispatch(inputs, { sizes: { out: 4 }, dim: [4] });
  const bits: Inputs = { alpha: new Uint32Array([0x40000000]), x: new Float32Array(4), y: new Float32Array(4) };
  await kernel.dispatch(bits, { sizes: { out: 4 }, grid: [1, 1, 1] });
  const shader: "base" | "wide" | "guard" | null = kernel.stats.shader;
  console.log(INFO.name, INFO.buffers.map(b => b.name), shader);
  kernel.dispose();
  return outputs.out;
}
"""

# Each misuse, and a word of the error tsc must give for it.
MISUSES = {
    "wrong_array": ("const i: Inputs = { alpha: new Float32Array(1), x: new Int32Array(4), y: new Float32Array(4) };",
                    "Int32Array"),
    "missing_input": ("const i: Inputs = { alpha: new Float32Array(1), x: new Float32Array(4) };", "'y'"),
    "unknown_buffer": ("const i: Inputs = { alpha: new Float32Array(1), x: new Float32Array(4), "
                       "y: new Float32Array(4), z: new Float32Array(4) };", "'z'"),
    "output_type": ("declare const o: Outputs; const u: Int32Array = o.out;", "Float32Array"),
    "size_name": ("const s: Sizes = { outt: 4 };", "'outt'"),
}

BUNDLE_ENTRY = """import { createKernel } from "vyre-kernel-saxpy";

const adapter = await navigator.gpu.requestAdapter();
const device = await adapter.requestDevice();
const kernel = await createKernel(device);
const { out } = await kernel.dispatch(
    { alpha: new Float32Array([2.5]), x: Float32Array.of(1, 2, -4, 0.5), y: Float32Array.of(10, 0.25, 1, -1.25) },
    { sizes: { out: 4 } });
await fetch("/result", { method: "POST", body: JSON.stringify({ out: Array.from(out), array: out.constructor.name }) });
"""


def fail(message):
    print(f"FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def missing(tool):
    message = f"{tool} is not installed (scripts/setup --all installs it)"
    if os.environ.get("CI"):
        fail(f"CI must run the web package tests: {message}")
    print(f"skipped: {message}", file=sys.stderr)
    sys.exit(77)


def run(argv, cwd=None, expect=0):
    r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if expect is not None and r.returncode != expect:
        fail(f"{' '.join(argv)} exited {r.returncode}, not {expect}:\n{r.stdout}{r.stderr}")
    return r


def png_pixels(path):
    """The distinct colours of an 8-bit RGB or RGBA PNG, and its size."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path} is not a PNG")
    pos, chunks, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        fail(f"{path}: a PNG of depth {depth}, colour type {colour}, interlace {interlace} is not read here")
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(chunks)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    colours = {}
    for line in rows:
        for x in range(0, stride, channels):
            key = line[x:x + 3]
            colours[key] = colours.get(key, 0) + 1
    return colours, width * height


def main():
    vyre, source = sys.argv[1], sys.argv[2]
    for tool in ("chromium", "tsc", "esbuild"):
        if not shutil.which(tool):
            missing(tool)
    runner = os.path.join(source, "tests", "web", "run_web.py")
    with tempfile.TemporaryDirectory(prefix="vyre-web-package-") as work:
        env_cache = {"VYRE_AOT_CACHE_DIR": os.path.join(work, "cache")}
        os.environ.update(env_cache)
        site = os.path.join(work, "site")
        run([vyre, "export", "web", os.path.join(source, "examples", "saxpy.json"), "-o", os.path.join(site, "saxpy")])

        # kernel.d.ts: a right use passes, each misuse is refused.
        with open(os.path.join(site, "consumer.ts"), "w") as f:
            f.write(CONSUMER)
        tsc = ["tsc", "--noEmit", "--strict", "--target", "es2022", "--module", "es2022", "--moduleResolution", "node",
               "--lib", "es2022,dom"]
        run(tsc + ["consumer.ts"], cwd=site)
        for name, (line, word) in MISUSES.items():
            path = os.path.join(site, f"misuse_{name}.ts")
            with open(path, "w") as f:
                f.write('import type { Inputs, Outputs, Sizes } from "./saxpy/kernel.js";\n' + line + "\nexport {};\n")
            r = run(tsc + [os.path.basename(path)], cwd=site, expect=None)
            if r.returncode == 0 or word not in r.stdout:
                fail(f"tsc took the misuse {name} ({line}): exit {r.returncode}\n{r.stdout}")
        print(f"kernel.d.ts: a right use type-checks; {len(MISUSES)} misuses refused by tsc")

        # The package through a bundler, and the bundle on a page.
        modules = os.path.join(site, "node_modules")
        os.mkdir(modules)
        os.symlink(os.path.join(site, "saxpy"), os.path.join(modules, "vyre-kernel-saxpy"))
        with open(os.path.join(site, "entry.js"), "w") as f:
            f.write(BUNDLE_ENTRY)
        run(["esbuild", "entry.js", "--bundle", "--format=esm", "--target=es2022", "--outfile=bundle.js"], cwd=site)
        bundle = open(os.path.join(site, "bundle.js")).read()
        if "@compute" not in bundle or "createKernel" not in bundle:
            fail("the bundle holds no kernel")
        with open(os.path.join(site, "bundle.html"), "w") as f:
            f.write('<!doctype html><script type="module" src="bundle.js"></script>\n')
        results = os.path.join(work, "bundle.json")
        r = run([sys.executable, runner, "results", site, "bundle.html", results, "--timeout", "120"], expect=None)
        if r.returncode == 77:
            missing("chromium")
        if r.returncode != 0:
            fail(f"the bundle did not run: {r.stderr}")
        got = json.load(open(results))
        if got != {"out": [12.5, 5.25, -9, 0], "array": "Float32Array"}:
            fail(f"the bundle gave {got}")
        print(f"esbuild bundled the package ({len(bundle)} bytes); in Chromium it gave {got['out']}")

        # The demo page: its DOM after the dispatches, and a screenshot.
        dom_path, shot = os.path.join(work, "dom.html"), os.path.join(work, "shot.png")
        r = run([sys.executable, runner, "page", site, "saxpy/index.html", dom_path, shot, "--timeout", "120"],
                expect=None)
        if r.returncode != 0:
            fail(f"the demo page did not run: {r.stderr}")
        dom = open(dom_path).read()
        checks = {
            "status": r'<p id="status" data-state="done">Done</p>',
            "inputs": r'data-buffer="x">1, 2, -4, 0.5<',
            "outputs": r'<table id="outputs"><tr><th>out</th><td>Float32Array\[4\]</td><td class="values" '
                       r'data-buffer="out">12.5, 5.25, -9, 0</td><td class="match" data-check="match">',
            "times": r'<li data-ms="[0-9.e-]+">dispatch 1: [0-9.]+ ms',
            "adapter": r'<span id="adapter">[^<]*swiftshader',
        }
        for name, pattern in checks.items():
            if not re.search(pattern, dom):
                fail(f"the demo page's DOM shows no {name} ({pattern}):\n{dom[-3000:]}")
        if len(re.findall(r"<li data-ms=", dom)) != 3:
            fail("the demo page shows no time for each of its 3 dispatches")
        colours, pixels = png_pixels(shot)
        background = max(colours.values())
        if len(colours) < 16 or pixels - background < pixels // 50:
            fail(f"the screenshot is blank: {len(colours)} colours, {pixels - background} of {pixels} pixels off "
                 "the background")
        print(f"demo page: status done, outputs as the run file expects; screenshot {len(colours)} colours, "
              f"{100 * (pixels - background) / pixels:.1f}% off the background")
    return 0


if __name__ == "__main__":
    sys.exit(main())
