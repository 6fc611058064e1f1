#!/usr/bin/env python3
"""Plots of a fleetsim run with [failures].

Usage: scripts/plot_failures.py RESULTS_DIR     (scripts/plot.py calls it when failures.csv is there)
       scripts/plot_failures.py --self-test

Writes nodes_down.png (nodes down over time, with the failures of each component per day) and
interruptions_by_size.png (interruptions per job against its size in GPUs, and all interruptions per
job size) from failures.csv, failure_jobs.csv and summary.json.
"""
import json
import os
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

DAY = 86400.0


def nodes_down(failures):
    """(times in days, nodes down just after each time) as a step function from failures.csv."""
    rows = failures[failures["event"] == "failure"]
    events = [(t, n) for t, n in zip(rows["time_s"], rows["nodes"])]
    events += [(r, -n) for r, n in zip(rows["repaired_s"], rows["nodes"]) if pd.notna(r) and r >= 0]
    events.sort()
    times, down, level = [0.0], [0], 0
    for t, delta in events:
        level += delta
        times.append(t / DAY)
        down.append(level)
    return times, down


def plot(folder):
    failures = pd.read_csv(os.path.join(folder, "failures.csv"))
    with open(os.path.join(folder, "summary.json")) as f:
        summary = json.load(f).get("failures", {})
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6.5), sharex=True)
    times, down = nodes_down(failures)
    ax1.step(times, down, where="post", color="tab:red")
    mean = summary.get("nodes_down", {}).get("mean")
    if mean is not None:
        ax1.axhline(mean, ls="--", color="gray", label=f"mean {mean:.2f}")
        ax1.legend(fontsize=8)
    ax1.set_ylabel("nodes down")
    ax1.grid(True, alpha=0.3)
    rows = failures[failures["event"] == "failure"]
    if not rows.empty:
        days = (rows["time_s"] // DAY).astype(int)
        per_day = rows.assign(day=days).groupby(["day", "component"]).size().unstack(fill_value=0)
        bottom = None
        for component in per_day.columns:
            ax2.bar(per_day.index + 0.5, per_day[component], width=1.0, bottom=bottom, label=component)
            bottom = per_day[component] if bottom is None else bottom + per_day[component]
        ax2.legend(fontsize=8, ncol=4)
    ax2.set_ylabel("failures per day")
    ax2.set_xlabel("simulated time (days)")
    ax2.grid(True, alpha=0.3)
    fig.suptitle(f"Nodes down and failures by component ({summary.get('node_failures', len(rows))} failures)")
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "nodes_down.png"), dpi=120)
    plt.close(fig)

    jobs_path = os.path.join(folder, "failure_jobs.csv")
    if not os.path.exists(jobs_path):
        return
    jobs = pd.read_csv(jobs_path)
    if jobs.empty:
        return
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    ax1.scatter(jobs["gpus"], jobs["interruptions"], s=10, alpha=0.5)
    ax1.set_xscale("log")
    ax1.set_xlabel("job size (GPUs)")
    ax1.set_ylabel("interruptions per job")
    ax1.grid(True, alpha=0.3)
    by_size = jobs.groupby("gpus").agg(interruptions=("interruptions", "sum"), jobs=("job_id", "count"))
    ax2.bar([str(g) for g in by_size.index], by_size["interruptions"])
    ax2.set_xlabel("job size (GPUs)")
    ax2.set_ylabel("interruptions (all jobs of that size)")
    ax2.grid(True, alpha=0.3, axis="y")
    for i, (n, k) in enumerate(zip(by_size["interruptions"], by_size["jobs"])):
        ax2.annotate(f"{k} jobs", (i, n), ha="center", va="bottom", fontsize=7)
    fig.suptitle("Interruptions against job size")
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "interruptions_by_size.png"), dpi=120)
    plt.close(fig)


def self_test():
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "failures.csv"), "w") as f:
            f.write("time_s,event,node,nodes,component,jobs_hit,gpu_hours_lost,repaired_s\n")
            f.write("1000,failure,3,1,gpu,1,2.5,50000\n")
            f.write("20000,failure,4,16,network,3,10,100000\n")
            f.write("50000,repair,3,1,gpu,0,0,50000\n")
            f.write("100000,repair,4,16,network,0,0,100000\n")
            f.write("150000,failure,5,1,hbm,0,0,-1\n")  # not repaired before the end
        with open(os.path.join(d, "failure_jobs.csv"), "w") as f:
            f.write("job_id,gpus,interruptions,checkpoint_interval_s,redone_gpu_h,restart_gpu_h,checkpoint_gpu_h,"
                    "ettr\n")
            for i in range(20):
                f.write(f"j{i},{8 * (1 + i % 4)},{i % 3},600,1,1,1,0.95\n")
        with open(os.path.join(d, "summary.json"), "w") as f:
            json.dump({"failures": {"node_failures": 3, "nodes_down": {"mean": 2.0, "peak": 17}}}, f)
        times, down = nodes_down(pd.read_csv(os.path.join(d, "failures.csv")))
        assert max(down) == 17 and down[-1] == 1, (times, down)  # overlap, then one left down
        plot(d)
        for name in ("nodes_down.png", "interruptions_by_size.png"):
            path = os.path.join(d, name)
            assert os.path.getsize(path) > 10000, f"{name} missing or empty"
    print("plot_failures.py self-test: ok")


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        self_test()
    elif len(sys.argv) == 2:
        plot(sys.argv[1])
    else:
        sys.exit(__doc__)
