#!/usr/bin/env python3
"""Plot a `fleetsim llm eval` folder: predicted against measured time, one point per case.

Usage: scripts/plot_llm_eval.py DIR        (DIR holds predictions.csv; writes predicted_vs_measured.png)
       scripts/plot_llm_eval.py --self-test
"""
import csv
import os
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_rows(folder):
    with open(os.path.join(folder, "predictions.csv"), newline="") as f:
        return list(csv.DictReader(f))


def plot(folder):
    rows = read_rows(folder)
    if not rows:
        raise ValueError(f"{folder}/predictions.csv has no rows")
    groups = {}
    for r in rows:
        groups.setdefault(f"{r['source']} {r['gpu']}", []).append(r)
    fig, ax = plt.subplots(figsize=(7, 6))
    lo, hi = float("inf"), 0.0
    for label, rs in sorted(groups.items()):
        m = [float(r["measured_ms"]) for r in rs]
        p = [float(r["predicted_ms"]) for r in rs]
        mape = sum(float(r["ape_pct"]) for r in rs) / len(rs)
        ax.scatter(m, p, s=12, alpha=0.7, label=f"{label} (n={len(rs)}, MAPE {mape:.1f}%)")
        lo, hi = min(lo, *m, *p), max(hi, *m, *p)
    xs = [lo / 1.2, hi * 1.2]
    ax.plot(xs, xs, color="black", lw=1, label="predicted = measured")
    ax.fill_between(xs, [x * 0.9 for x in xs], [x * 1.1 for x in xs], color="grey", alpha=0.15, label="±10%")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured, ms")
    ax.set_ylabel("predicted, ms")
    ax.set_title("fleetsim llm eval: predicted vs measured")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    out = os.path.join(folder, "predicted_vs_measured.png")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def self_test():
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "predictions.csv"), "w") as f:
            f.write("source,case,gpu,measured_ms,predicted_ms,ape_pct\n")
            f.write("neusight,T4/a,T4,10,11,10\nneusight,V100/b,V100,100,95,5\nvtrain,c,A100-80GB,50,50,0\n")
        out = plot(d)
        if os.path.getsize(out) == 0:
            print("plot_llm_eval.py self-test: empty plot", file=sys.stderr)
            return 1
    print("plot_llm_eval.py self-test: 1 plot written")
    return 0


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    if argv[1] == "--self-test":
        return self_test()
    if not os.path.exists(os.path.join(argv[1], "predictions.csv")):
        print(f"plot_llm_eval.py: {argv[1]}: no predictions.csv", file=sys.stderr)
        return 2
    print(plot(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
