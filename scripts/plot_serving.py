#!/usr/bin/env python3
"""Plots of a fleetsim run with [[service]] tables.

Usage: scripts/plot_serving.py RESULTS_DIR     (scripts/plot.py calls it when requests.csv is there)
       scripts/plot_serving.py --self-test

Writes latency_cdf.png (CDFs of TTFT, TPOT and end-to-end latency per service, SLO targets marked) and
serving_queue.png (running and waiting requests, and KV cache use, over time per service, summed or
averaged over its replicas) from requests.csv, serving_timeseries.csv and summary.json.
"""
import json
import os
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def cdf(ax, values, label):
    v = values.dropna().sort_values().reset_index(drop=True)
    if v.empty:
        return
    ax.step(v, (v.index + 1) / len(v), where="post", label=label)


def plot(folder):
    req = pd.read_csv(os.path.join(folder, "requests.csv"))
    with open(os.path.join(folder, "summary.json")) as f:
        services = json.load(f).get("services", {})
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for name, rows in req.groupby("service"):
        s = services.get(name, {})
        cdf(axes[0], rows["ttft_s"], f"{name} (p99 {s.get('ttft_p99_s', float('nan')):.3f} s)")
        cdf(axes[1], rows["tpot_s"] * 1000, f"{name} (p99 {1000 * s.get('tpot_p99_s', float('nan')):.1f} ms)")
        cdf(axes[2], rows["e2e_s"], f"{name} (p99 {s.get('e2e_p99_s', float('nan')):.1f} s)")
        if s.get("slo_ttft_s", 0) > 0:
            axes[0].axvline(s["slo_ttft_s"], ls="--", color="gray")
        if s.get("slo_tpot_s", 0) > 0:
            axes[1].axvline(1000 * s["slo_tpot_s"], ls="--", color="gray")
    for ax, what in zip(axes, ["TTFT (s)", "TPOT (ms)", "end-to-end latency (s)"]):
        ax.set_xlabel(what)
        ax.set_ylabel("fraction of requests")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_xscale("log")
    axes[2].set_xscale("log")
    fig.suptitle("Latency CDFs (dashed: SLO)")
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "latency_cdf.png"), dpi=120)
    plt.close(fig)

    ts_path = os.path.join(folder, "serving_timeseries.csv")
    if not os.path.exists(ts_path):
        return
    ts = pd.read_csv(ts_path)
    if ts.empty:
        return
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    for name, rows in ts.groupby("service"):
        rows = rows.assign(second=rows["t_s"].astype(int))
        per = rows.groupby("second").agg(running=("running", "sum"), waiting=("waiting", "sum"),
                                         kv=("kv_used", "mean"))
        ax1.step(per.index, per["running"], where="post", label=f"{name}: running")
        ax1.step(per.index, per["waiting"], where="post", alpha=0.7, label=f"{name}: waiting")
        ax2.step(per.index, 100 * per["kv"], where="post", label=f"{name}: KV cache use (mean of replicas)")
    ax1.set_ylabel("requests")
    ax1.grid(True, alpha=0.3)
    ax1.legend(fontsize=8)
    ax2.set_ylabel("KV cache used (%)")
    ax2.set_ylim(0, 105)
    ax2.set_xlabel("simulated time (s)")
    ax2.grid(True, alpha=0.3)
    ax2.legend(fontsize=8)
    fig.suptitle("Queue and KV cache over time")
    fig.tight_layout()
    fig.savefig(os.path.join(folder, "serving_queue.png"), dpi=120)
    plt.close(fig)


def self_test():
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "requests.csv"), "w") as f:
            f.write("service,request_id,arrival_s,first_token_s,end_s,input_tokens,output_tokens,ttft_s,tpot_s,"
                    "e2e_s,replica,preemptions,cached_tokens\n")
            for i in range(50):
                f.write(f"chat,{i},{i * 0.1},{i * 0.1 + 0.05},{i * 0.1 + 1},100,20,0.05,0.05,1,{i % 2},0,0\n")
            f.write("chat,50,5,,,100,20,,,,0,0,0\n")  # never finished
        with open(os.path.join(d, "serving_timeseries.csv"), "w") as f:
            f.write("service,t_s,replica,running,waiting,kv_used\n")
            for t in range(10):
                for r in range(2):
                    f.write(f"chat,{t + 0.01},{r},{t % 4},{t % 3},{t / 10}\n")
        with open(os.path.join(d, "summary.json"), "w") as f:
            json.dump({"services": {"chat": {"ttft_p99_s": 0.05, "tpot_p99_s": 0.05, "e2e_p99_s": 1,
                                             "slo_ttft_s": 0.5, "slo_tpot_s": 0.05}}}, f)
        plot(d)
        for name in ("latency_cdf.png", "serving_queue.png"):
            path = os.path.join(d, name)
            assert os.path.getsize(path) > 10000, f"{name} missing or empty"
    print("plot_serving.py self-test: ok")


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        self_test()
    elif len(sys.argv) == 2:
        plot(sys.argv[1])
    else:
        sys.exit(__doc__)
