#!/usr/bin/env python3
"""Draws the time-to-first-result breakdown of bench/ttfr.py's runs (its
--runs file): one bar per tool, cold and warm cache, each stage the median
over the runs, on a full scale and zoomed to the first second.

    python3 scripts/plot_ttfr.py docs/benchmarks/h200/ttfr_runs.jsonl docs/benchmarks/ttfr_h200.png
"""
import json
import statistics
import sys

USAGE = "usage: python3 scripts/plot_ttfr.py RUNS.jsonl OUT.png"

if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
    print(__doc__.strip() + "\n\n" + USAGE + "\n\nNeeds matplotlib (apt install python3-matplotlib).",
          file=sys.stdout if len(sys.argv) == 2 else sys.stderr)
    sys.exit(0 if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help") else 2)

try:
    import matplotlib
except ImportError:
    # Only this plot needs it, so scripts/setup does not install it.
    print("scripts/plot_ttfr.py: needs matplotlib, which scripts/setup does not install: "
          "apt install python3-matplotlib (or pip install matplotlib)", file=sys.stderr)
    sys.exit(2)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Each tool's stages, gathered into the same few groups.
GROUPS = [
    ("process start", {"process_start"}),
    ("imports", {"import_numpy", "import"}),
    ("program and inputs", {"program", "inputs"}),
    ("GPU context / device", {"instance", "adapter", "device", "cache_open", "context"}),
    ("compile (or cache)", {"cache_or_lowering", "shader", "pipeline", "compile"}),
    ("upload", {"upload"}),
    ("first dispatch", {"dispatch"}),
    ("readback", {"readback"}),
]
COLORS = ["#bbbbbb", "#8c6bb1", "#9ecae1", "#fd8d3c", "#d62728", "#74c476", "#3182bd", "#31a354", "#eeeeee"]
TOOLS = [("vyre", "vyre"), ("cupy", "CuPy RawKernel"), ("triton", "Triton")]


def grouped(record):
    stages = record["stages_ms"]
    values = [sum(stages.get(name, 0.0) for name in names) for _, names in GROUPS]
    values.append(max(0.0, record["first_result_ms"] - sum(values)))  # what no stage covers
    return values


def main():
    runs_path, out_path = sys.argv[1], sys.argv[2]
    runs = [json.loads(line) for line in open(runs_path) if line.strip()]
    bars = []
    for tool, label in TOOLS:
        for cache in ("cold", "warm"):
            chosen = [r for r in runs if r["tool"] == tool and r["cache"] == cache and r["label"].startswith("ttfr.")]
            if not chosen:
                continue
            per_group = [statistics.median(v) for v in zip(*(grouped(r) for r in chosen))]
            total = statistics.median(r["first_result_ms"] for r in chosen)
            bars.append((f"{label}, {cache} cache", per_group, total, len(chosen)))
    bars.reverse()  # first tool on top

    names = [g for g, _ in GROUPS] + ["other"]
    fig, axes = plt.subplots(1, 2, figsize=(14, 4.8), gridspec_kw={"width_ratios": [3, 2]})
    for ax, limit in zip(axes, (None, 1100)):
        for y, (label, values, total, _) in enumerate(bars):
            left = 0.0
            for i, value in enumerate(values):
                ax.barh(y, value, left=left, color=COLORS[i], edgecolor="white", linewidth=0.5,
                        label=names[i] if y == 0 else None)
                left += value
            if limit is None or total <= limit:
                ax.text(total + (limit or max(b[2] for b in bars)) * 0.01, y, f"{total:.0f} ms", va="center", fontsize=8)
        ax.set_yticks(range(len(bars)))
        ax.set_yticklabels([b[0] for b in bars] if limit is None else [])
        ax.set_xlabel("time from process start to first result (ms)")
        if limit:
            ax.set_xlim(0, limit)
            ax.set_title("the first second", fontsize=10)
        else:
            ax.set_xlim(0, max(b[2] for b in bars) * 1.12)
            ax.set_title("saxpy, 2^20 floats, fresh process (median of %d runs each)" % bars[0][3], fontsize=10)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=8, frameon=False)
    fig.suptitle("Time to first result on an NVIDIA H200: vyre (Vulkan), CuPy RawKernel, Triton", fontsize=11)
    fig.tight_layout(rect=(0, 0.1, 1, 0.95))
    fig.savefig(out_path, dpi=120)


if __name__ == "__main__":
    main()
