#!/usr/bin/env python3
"""Plot a `fleetsim calibrate eval` result: predicted against measured time, one panel per op group.

Usage: scripts/plot_calibration.py PREDICTIONS_CSV [OUT_PNG]  (default: predicted_vs_measured.png beside it)
       scripts/plot_calibration.py --self-test                (checks the script on generated data)

Log-log scatter of measured_ms against predicted_ms, one colour per device, hollow markers for
extrapolated rows; the diagonal and a +-10% band mark perfect and acceptable predictions. Panels:
GEMM (linear), batched GEMM (bmm), element-wise, layer-norm/softmax, collectives. Uses matplotlib
only (Debian's python3-matplotlib).
"""
import csv
import os
import sys
import tempfile
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

GROUPS = OrderedDict([("linear", "GEMM (linear)"), ("bmm", "batched GEMM (bmm)"),
                      ("elementwise", "element-wise"), ("norm", "layer-norm / softmax"),
                      ("collective", "collectives")])


def group_of(op):
    if op in ("linear", "bmm"):
        return op
    if op in ("ln", "softmax"):
        return "norm"
    if op in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "send_recv"):
        return "collective"
    return "elementwise"


def read(path):
    rows = []
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        need = {"device", "op", "measured_ms", "predicted_ms", "label"}
        if r.fieldnames is None or not need.issubset(r.fieldnames):
            raise SystemExit(f"{path}: not a predictions.csv (header {r.fieldnames})")
        for row in r:
            rows.append((row["device"], row["op"], float(row["measured_ms"]), float(row["predicted_ms"]),
                         row["label"]))
    return rows


def plot(rows, out):
    present = [g for g in GROUPS if any(group_of(op) == g for _, op, _, _, _ in rows)]
    if not present:
        raise SystemExit("no rows to plot")
    fig, axes = plt.subplots(1, len(present), figsize=(4.6 * len(present), 4.4), squeeze=False)
    devices = sorted({d for d, *_ in rows})
    colours = {d: plt.cm.tab10(i % 10) for i, d in enumerate(devices)}
    for ax, g in zip(axes[0], present):
        sel = [r for r in rows if group_of(r[1]) == g]
        lo = min(min(m, p) for _, _, m, p, _ in sel)
        hi = max(max(m, p) for _, _, m, p, _ in sel)
        for d in devices:
            for extrapolated in (False, True):
                pts = [(m, p) for dev, _, m, p, lab in sel if dev == d and (lab == "extrapolated") == extrapolated]
                if not pts:
                    continue
                label = d + (" (extrapolated)" if extrapolated else "")
                ax.scatter([m for m, _ in pts], [p for _, p in pts], s=6, alpha=0.5, label=label,
                           facecolors="none" if extrapolated else colours[d], edgecolors=colours[d],
                           linewidths=0.6)
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
        ax.fill_between([lo, hi], [lo * 0.9, hi * 0.9], [lo * 1.1, hi * 1.1], color="k", alpha=0.08,
                        label="±10%")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("measured (ms)")
        ax.set_ylabel("predicted (ms)")
        ax.set_title(GROUPS[g])
        ax.legend(fontsize=6, loc="upper left", markerscale=2)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def self_test():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "predictions.csv")
        with open(path, "w") as f:
            f.write("device,op,shape,measured_ms,predicted_ms,ape_pct,label\n")
            for i in range(1, 30):
                f.write(f"T4,linear,B=1 M={i},{i * 0.1},{i * 0.105},5,interpolated\n")
                f.write(f"L4,bmm,B={i},{i * 0.2},{i * 0.25},25,extrapolated\n")
                f.write(f"A100,all_reduce,ranks=2,{i},{i * 1.01},1,interpolated\n")
        out = os.path.join(d, "p.png")
        plot(read(path), out)
        assert os.path.getsize(out) > 10000, "plot too small"
    print("plot_calibration.py self-test: ok")


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        self_test()
        return
    if len(argv) not in (2, 3):
        raise SystemExit(__doc__)
    out = argv[2] if len(argv) == 3 else os.path.join(os.path.dirname(argv[1]) or ".", "predicted_vs_measured.png")
    plot(read(argv[1]), out)


if __name__ == "__main__":
    main(sys.argv)
