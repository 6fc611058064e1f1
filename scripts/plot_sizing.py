#!/usr/bin/env python3
"""Plot of a `fleetsim size` curve.

Usage: scripts/plot_sizing.py FOLDER [--target 0.99]   (FOLDER holds sizing.csv)
       scripts/plot_sizing.py --self-test

Writes sizing.png: SLO attainment against GPUs held, one panel per load multiple, one line per GPU type
and replica layout (sizing.csv's gpu and layout columns; older files without them are one line).
"""
import os
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def plot(folder, target=None):
    df = pd.read_csv(os.path.join(folder, "sizing.csv"))
    keys = [c for c in ("gpu", "layout") if c in df.columns]
    loads = sorted(df["load"].unique())
    fig, axes = plt.subplots(1, len(loads), figsize=(5 * len(loads), 4.2), squeeze=False)
    for ax, load in zip(axes[0], loads):
        rows = df[df["load"] == load]
        groups = rows.groupby(keys, sort=True) if keys else [("service", rows)]
        for name, g in groups:
            g = g.sort_values("gpus")
            label = " ".join(name) if isinstance(name, tuple) else str(name)
            ax.plot(g["gpus"], g["slo_attainment"], marker="o", label=label)
        if target is not None:
            ax.axhline(target, ls="--", color="gray")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("GPUs held (log2)")
        ax.set_ylabel("SLO attainment")
        ax.set_title(f"load x{load:g}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("fleetsim size: attainment against GPUs" + (" (dashed: target)" if target else ""))
    fig.tight_layout()
    path = os.path.join(folder, "sizing.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def self_test():
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "sizing.csv"), "w") as f:
            f.write("gpu,layout,load,replicas,gpus,slo_attainment,ttft_p99_s,tpot_p99_s\n")
            for load in (1, 2):
                for gpu, layout, per in (("H100", "tp1", 1), ("H100", "mig:3g", 3 / 7), ("A100-80GB", "tp2", 2)):
                    for n in (1, 2, 4, 8):
                        f.write(f"{gpu},{layout},{load},{n},{n * per},{min(1, n / (4 * load))},1,0.02\n")
        path = plot(d, 0.99)
        assert os.path.getsize(path) > 10000, "sizing.png missing or empty"
    print("plot_sizing.py self-test: ok")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["--self-test"]:
        self_test()
    elif len(args) in (1, 3) and (len(args) == 1 or args[1] == "--target"):
        plot(args[0], float(args[2]) if len(args) == 3 else None)
    else:
        sys.exit(__doc__)
