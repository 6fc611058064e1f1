#!/usr/bin/env python3
"""Turn a fleetsim results folder into PNG plots.

Usage: scripts/plot.py RESULTS_DIR [RESULTS_DIR ...]   (several folders: curves overlaid)
       scripts/plot.py --self-test                      (checks the script on a generated folder)

Writes into the first folder: jct_cdf.png (CDF of job completion time), utilization.png (busy GPUs
over time), queue.png (running and queued jobs over time) and, for network-fidelity runs (a
link_tiers.csv), link_tiers.png (utilization of each fabric tier over time); for runs with services
(a requests.csv), latency_cdf.png and serving_queue.png (scripts/plot_serving.py); for runs with
failures (a failures.csv), nodes_down.png and interruptions_by_size.png (scripts/plot_failures.py).
Uses matplotlib and
pandas (Debian).
"""
import json
import os
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def load(folder):
    jobs = pd.read_csv(os.path.join(folder, "jobs.csv"))
    ts_path = os.path.join(folder, "timeseries.csv")
    ts = pd.read_csv(ts_path) if os.path.exists(ts_path) else None
    with open(os.path.join(folder, "summary.json")) as f:
        summary = json.load(f)
    label = f"{summary.get('policy', '?')}/{summary.get('placement', '?')}"
    if label in ("?/?",):
        label = os.path.basename(os.path.normpath(folder))
    return jobs, ts, summary, label


def busy_window(summary):
    """', busy window X %' when the summary has the busy-window utilization, else ''."""
    if "busy_window_utilization" not in summary:
        return ""
    return f", {100 * summary['busy_window_utilization']:.1f} % over the busy window"


def step_hours(ts):
    return ts["time_s"] / 3600.0


def plot(folders):
    runs = [load(f) for f in folders]
    out = folders[0]

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for jobs, _, summary, label in runs:
        if jobs.empty:
            continue
        jct = (jobs["jct_s"] / 3600.0).sort_values().reset_index(drop=True)
        y = (jct.index + 1) / len(jct)
        ax.step(jct, y, where="post", label=f"{label} (mean {summary['mean_jct_s'] / 3600:.2f} h)")
    ax.set_xscale("log")
    ax.set_xlabel("job completion time (hours, log scale)")
    ax.set_ylabel("fraction of jobs")
    ax.set_title("JCT CDF")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "jct_cdf.png"), dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for _, ts, summary, label in runs:
        if ts is None or ts.empty:
            continue
        total = summary.get("total_gpus", 0) or 1
        ax.step(step_hours(ts), 100.0 * ts["busy_gpus"] / total, where="post",
                label=f"{label} (mean {100 * summary['gpu_utilization']:.1f} %{busy_window(summary)})")
    ax.set_xlabel("simulated time (hours)")
    ax.set_ylabel("GPUs allocated (% of cluster)")
    ax.set_ylim(0, 105)
    ax.set_title("GPU utilization over time")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "utilization.png"), dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for _, ts, _, label in runs:
        if ts is None or ts.empty:
            continue
        ax.step(step_hours(ts), ts["queued_jobs"], where="post", label=f"{label}: queued")
        ax.step(step_hours(ts), ts["running_jobs"], where="post", alpha=0.7, label=f"{label}: running")
    ax.set_xlabel("simulated time (hours)")
    ax.set_ylabel("jobs")
    ax.set_title("Queue length and running jobs")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "queue.png"), dpi=120)
    plt.close(fig)
    written = [os.path.join(out, n) for n in ("jct_cdf.png", "utilization.png", "queue.png")]
    tiers_path = os.path.join(out, "link_tiers.csv")
    if os.path.exists(tiers_path):
        written.append(plot_link_tiers(pd.read_csv(tiers_path), runs[0][3], out))
    if os.path.exists(os.path.join(out, "requests.csv")):  # services: scripts/plot_serving.py
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import plot_serving  # noqa: E402

        plot_serving.plot(out)
        written += [os.path.join(out, n) for n in ("latency_cdf.png", "serving_queue.png")]
    if os.path.exists(os.path.join(out, "failures.csv")):  # failures: scripts/plot_failures.py
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import plot_failures  # noqa: E402

        plot_failures.plot(out)
        written += [os.path.join(out, n) for n in ("nodes_down.png", "interruptions_by_size.png")
                    if os.path.exists(os.path.join(out, n))]
    return written


def plot_link_tiers(tiers, label, out):
    """Mean utilization of each fabric tier (NICs, leaf uplinks, spine, GPU links) over time."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for tier, rows in tiers.groupby("tier", sort=True):
        ax.step(rows["time_s"] / 3600.0, 100.0 * rows["util"], where="post",
                label=f"{tier} (mean {100 * rows['util'].mean():.1f} %)")
    ax.set_xlabel("simulated time (hours)")
    ax.set_ylabel("load / capacity of the tier (%)")
    ax.set_title(f"Fabric utilization by link tier ({label})")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path = os.path.join(out, "link_tiers.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def self_test():
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "jobs.csv"), "w") as f:
            f.write("job_id,submit_s,start_s,end_s,wait_s,jct_s,gpus,gpu_type,nodes,restarts,preempted_s\n")
            f.write("a,0,0,100,0,100,1,V100,1,0,0\nb,10,100,400,90,390,2,V100,1,0,0\n")
        with open(os.path.join(d, "timeseries.csv"), "w") as f:
            f.write("time_s,busy_gpus,running_jobs,queued_jobs,completed_jobs\n")
            f.write("0,1,1,0,0\n10,1,1,1,0\n100,2,1,0,1\n400,0,0,0,2\n")
        with open(os.path.join(d, "summary.json"), "w") as f:
            json.dump({"policy": "fifo", "placement": "first-fit", "mean_jct_s": 245.0,
                       "gpu_utilization": 0.5, "total_gpus": 2}, f)
        with open(os.path.join(d, "link_tiers.csv"), "w") as f:
            f.write("time_s,tier,util\n0,nic,0.5\n200,nic,0.1\n0,leaf-uplink,0.9\n200,leaf-uplink,0\n")
        paths = plot([d])
        if len(paths) != 4:
            print(f"plot.py self-test: expected 4 plots, got {paths}", file=sys.stderr)
            return 1
        for p in paths:
            if not os.path.getsize(p) > 1000:
                print(f"plot.py self-test: {p} is empty", file=sys.stderr)
                return 1
    print("plot.py self-test: 4 plots written")
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    for f in argv[1:]:
        for name in ("jobs.csv", "summary.json"):
            if not os.path.exists(os.path.join(f, name)):
                print(f"plot.py: {f}: missing {name} (not a fleetsim results folder)", file=sys.stderr)
                return 2
    for p in plot(argv[1:]):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
