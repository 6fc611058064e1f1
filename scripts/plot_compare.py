#!/usr/bin/env python3
"""Plot a `fleetsim compare` folder.

Usage: scripts/plot_compare.py DIR      (DIR holds comparison.csv and, per row, its run_dir/jobs.csv)
       scripts/plot_compare.py --self-test

Writes DIR/comparison.png (bar charts: mean, p50 and p99 JCT, mean wait, makespan, GPU utilization,
restarts, and rho_mean when the summaries have it; policies on the x axis, one bar per placement) and
DIR/jct_cdf.png (the JCT CDF of every run, overlaid). Needs matplotlib only (Debian python3-matplotlib).
"""
import csv
import math
import os
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# (column, title, scale, unit)
METRICS = [
    ("mean_jct_s", "mean JCT", 1 / 3600, "hours"),
    ("p50_jct_s", "median JCT", 1 / 3600, "hours"),
    ("p99_jct_s", "p99 JCT", 1 / 3600, "hours"),
    ("mean_wait_s", "mean wait", 1 / 3600, "hours"),
    ("makespan_s", "makespan", 1 / 3600, "hours"),
    ("gpu_utilization", "GPU utilization", 100, "%"),
    ("restarts", "restarts", 1, "count"),
    ("rho_mean", "mean finish-time fairness rho", 1, "rho"),
]


def read_rows(folder):
    with open(os.path.join(folder, "comparison.csv"), newline="") as f:
        return list(csv.DictReader(f))


def number(row, column):
    try:
        return float(row.get(column, "") or "nan")
    except ValueError:
        return math.nan


def unique(values):
    out = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def plot_bars(folder, rows):
    policies = unique(r["policy"] for r in rows)
    placements = unique(r["placement"] for r in rows)
    metrics = [m for m in METRICS if rows and m[0] in rows[0]]
    bars = len(policies) * len(placements)
    cols = min(len(metrics), 4 if bars <= 8 else 2 if bars <= 24 else 1)
    nrows = max(1, math.ceil(len(metrics) / cols))
    width_per_panel = min(14.0, max(3.6, 0.3 * bars + 1.5))
    fig, axes = plt.subplots(nrows, cols, figsize=(width_per_panel * cols, 3.4 * nrows + 0.6), squeeze=False)
    bar_w = 0.8 / max(1, len(placements))
    for k, (column, title, scale, unit) in enumerate(metrics):
        ax = axes[k // cols][k % cols]
        top = 0.0
        for j, placement in enumerate(placements):
            xs, ys = [], []
            for i, policy in enumerate(policies):
                match = [r for r in rows if r["policy"] == policy and r["placement"] == placement]
                if match:
                    xs.append(i + (j - (len(placements) - 1) / 2) * bar_w)
                    ys.append(number(match[0], column) * scale)
            ax.bar(xs, ys, width=bar_w, label=placement)
            top = max([top] + [y for y in ys if not math.isnan(y)])
        ax.set_ylim(0, top * 1.08 if top > 0 else 1)
        ax.set_xticks(range(len(policies)))
        tilt = len(policies) > 3
        ax.set_xticklabels(policies, rotation=30 if tilt else 0, ha="right" if tilt else "center")
        ax.set_title(title)
        ax.set_ylabel(unit)
        ax.grid(True, axis="y", alpha=0.3)
    for k in range(len(metrics), nrows * cols):
        axes[k // cols][k % cols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, title="placement", loc="upper center", ncol=min(len(placements), 6))
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.6 / (3.4 * nrows + 0.6)))
    out = os.path.join(folder, "comparison.png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def plot_cdf(folder, rows):
    fig, ax = plt.subplots(figsize=(8, 5))
    smallest = math.inf
    for r in rows:
        # run_dir: where the run's outputs are (compare runs under runs/<id>/); older compare folders
        # had one folder per <policy>__<placement>.
        run_dir = r.get("run_dir") or f"{r['policy']}__{r['placement']}"
        path = os.path.join(folder, run_dir, "jobs.csv")
        if not os.path.exists(path):
            continue
        with open(path, newline="") as f:
            jct = sorted(float(j["jct_s"]) / 3600 for j in csv.DictReader(f))
        if not jct:
            continue
        positive = [x for x in jct if x > 0]
        if positive:
            smallest = min(smallest, positive[0])
        ys = [(i + 1) / len(jct) for i in range(len(jct))]
        ax.step(jct, ys, where="post",
                label=f"{r['policy']} / {r['placement']} (mean {number(r, 'mean_jct_s') / 3600:.2f} h)")
    if smallest < math.inf:
        ax.set_xscale("log")
        ax.set_xlim(left=smallest / 1.5)
    ax.set_xlabel("job completion time (hours, log scale)")
    ax.set_ylabel("fraction of jobs")
    ax.set_title("JCT CDF")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    out = os.path.join(folder, "jct_cdf.png")
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def plot(folder):
    rows = read_rows(folder)
    if not rows:
        raise ValueError(f"{folder}/comparison.csv has no rows")
    return [plot_bars(folder, rows), plot_cdf(folder, rows)]


def self_test():
    with tempfile.TemporaryDirectory() as d:
        header = ("policy,placement,scenario,jobs,mean_jct_s,p50_jct_s,p99_jct_s,mean_wait_s,makespan_s,"
                  "gpu_utilization,restarts,run_dir\n")
        rows = []
        for i, (p, q) in enumerate([("fifo", "first-fit"), ("fifo", "consolidate"),
                                    ("fifo-skip", "first-fit"), ("fifo-skip", "consolidate")]):
            run_dir = os.path.join("runs", f"c00{i}-s1")
            rows.append(f"{p},{q},s.toml,2,{100 + i},{90 + i},{200 + i},{10 * i},{400 + i},0.{5 + i},{i},{run_dir}\n")
            os.makedirs(os.path.join(d, run_dir))
            with open(os.path.join(d, run_dir, "jobs.csv"), "w") as f:
                f.write("job_id,submit_s,start_s,end_s,wait_s,jct_s,gpus,gpu_type,nodes,restarts,preempted_s\n")
                f.write(f"a,0,0,100,0,{100 + i},1,V100,1,0,0\nb,10,100,400,90,{390 + i},2,V100,1,0,0\n")
        with open(os.path.join(d, "comparison.csv"), "w") as f:
            f.write(header + "".join(rows))
        for p in plot(d):
            if not os.path.getsize(p) > 1000:
                print(f"plot_compare.py self-test: {p} is empty", file=sys.stderr)
                return 1
    print("plot_compare.py self-test: 2 plots written")
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) == 2 else 2
    if not os.path.exists(os.path.join(argv[1], "comparison.csv")):
        print(f"plot_compare.py: {argv[1]}: no comparison.csv (not a fleetsim compare folder)", file=sys.stderr)
        return 2
    for p in plot(argv[1]):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
