"""The sections of scripts/report.py for one run folder (summary.json, jobs.csv, timeseries.csv, and
when present scenario.toml, requests.csv, failures.csv) and for a `fleetsim compare` folder
(comparison.csv and one run folder per policy x placement)."""
import math
import os

import pandas as pd

import report_html as H
import report_input


def read_summary(folder):
    return report_input.read_json(os.path.join(folder, "summary.json"))


def read_csv(folder, name, numeric=None):
    """`name` in `folder`, checked (report_input.read_csv), or None when absent."""
    p = os.path.join(folder, name)
    return report_input.read_csv(p, numeric) if os.path.exists(p) else None


def scenario_body(folder, summary):
    p = os.path.join(folder, "scenario.toml")
    if os.path.exists(p):
        with open(p) as f:
            return f"<p>Resolved scenario ({H.esc(p)}):</p><pre>{H.esc(f.read())}</pre>"
    return (f"<p>Scenario file: <code>{H.esc(summary.get('scenario', '?'))}</code> (this folder holds no "
            "resolved scenario.toml); policy <b>{}</b>, placement <b>{}</b>, job model {}, seed {}.</p>".format(
                H.esc(summary.get("policy", "?")), H.esc(summary.get("placement", "?")),
                H.esc(summary.get("job_model", "?")), H.esc(summary.get("seed", "?"))))


def mean_ci(values):
    """Mean and 95% half-width (normal approximation) of a column over the run's jobs."""
    v = values.dropna()
    if len(v) < 2:
        return (float(v.mean()) if len(v) else math.nan), math.nan
    return float(v.mean()), 1.96 * float(v.std(ddof=1)) / math.sqrt(len(v))


def headline_body(summary, jobs):
    rows = []
    intervals = {}
    if jobs is not None and not jobs.empty:
        intervals = {"mean_jct_s": mean_ci(jobs["jct_s"]), "mean_wait_s": mean_ci(jobs["wait_s"])}
    for key, label in H.HEADLINE:
        if key not in summary:
            continue
        m, ci = intervals.get(key, (summary[key], None))
        rows.append((label, key, H.pm(summary[key], ci, key) if ci is not None else H.with_unit(key, m)))
    others = [(k, v) for k, v in summary.items() if not isinstance(v, dict)]
    return (H.table(["metric", "key", "value"], rows, left=2)
            + '<p class="note">One run (one seed): the ± of the mean JCT and wait is the 95% interval over '
              "this run's jobs (normal approximation); a sweep over seeds gives intervals over seeds.</p>"
            + f"<details><summary>every value of summary.json</summary>{H.kv_table(others)}</details>")


def cdf_body(runs):
    """runs: [(label, jobs)] -> JCT and wait CDFs."""
    fig, (a, b) = H.figure(2)
    drawn = False
    for label, jobs in runs:
        if jobs is None or jobs.empty:
            continue
        drawn |= H.cdf(a, jobs["jct_s"] / 3600.0, label)
        H.cdf(b, jobs["wait_s"] / 3600.0, label)
    if not drawn:
        H.plt.close(fig)
        return "<p>No completed jobs.</p>"
    a.set_xscale("log")
    b.set_xscale("symlog", linthresh=1 / 60)
    H.finish(a, "job completion time (h, log)", "fraction of jobs", "JCT CDF")
    H.finish(b, "wait (h, linear below 1 min)", "fraction of jobs", "Wait CDF")
    return H.img(fig, "JCT and wait CDFs")


def timeseries_body(runs):
    """runs: [(label, timeseries, total_gpus)] -> utilization and queue over time."""
    runs = [r for r in runs if r[1] is not None and not r[1].empty]
    if not runs:
        return "<p>No timeseries.csv.</p>"
    fig, (a, b) = H.figure(1, 2, height=3.2)
    for label, ts, total in runs:
        h = ts["time_s"] / 3600.0
        a.step(h, 100.0 * ts["busy_gpus"] / (total or 1), where="post", label=label)
        b.step(h, ts["queued_jobs"], where="post", label=f"{label}: queued")
        b.step(h, ts["running_jobs"], where="post", alpha=0.6, label=f"{label}: running")
    a.set_ylim(0, 105)
    H.finish(a, "simulated time (h)", "GPUs allocated (%)", "Utilization over time")
    H.finish(b, "simulated time (h)", "jobs", "Queue and running jobs over time")
    return H.img(fig, "utilization and queue over time")


SERVICE_COLUMNS = ["requests", "completed", "ttft_p50_s", "ttft_p99_s", "tpot_p50_s", "tpot_p99_s", "e2e_p50_s",
                   "e2e_p99_s", "slo_ttft_s", "slo_tpot_s", "slo_attainment", "goodput_rps", "peak_replicas",
                   "gpu_hours"]


def serving_body(folder, summary):
    services = summary.get("services") or {}
    rows = [[name] + [H.num(s.get(c)) for c in SERVICE_COLUMNS] for name, s in services.items()]
    out = H.table(["service"] + SERVICE_COLUMNS, rows) if rows else ""
    req = read_csv(folder, "requests.csv")
    if req is not None and not req.empty:
        fig, axes = H.figure(3)
        for name, r in req.groupby("service"):
            H.cdf(axes[0], r["ttft_s"], name)
            H.cdf(axes[1], r["tpot_s"] * 1000, name)
            H.cdf(axes[2], r["e2e_s"], name)
            s = services.get(name, {})
            if s.get("slo_ttft_s", 0) > 0:
                axes[0].axvline(s["slo_ttft_s"], ls="--", color="gray")
            if s.get("slo_tpot_s", 0) > 0:
                axes[1].axvline(1000 * s["slo_tpot_s"], ls="--", color="gray")
        for ax, what in zip(axes, ["TTFT (s, log)", "TPOT (ms)", "end-to-end latency (s, log)"]):
            H.finish(ax, what, "fraction of requests")
        axes[0].set_xscale("log")
        axes[2].set_xscale("log")
        out += H.img(fig, "request latency CDFs (dashed: SLO)") + '<p class="note">Dashed: SLO targets.</p>'
    return out


def failures_body(folder, summary):
    out = ""
    if isinstance(summary.get("failures"), dict):
        out += H.kv_table(H.flatten(summary["failures"]))
    ev = read_csv(folder, "failures.csv")
    if ev is not None and not ev.empty:
        ev = ev.sort_values("time_s")
        sign = ev["event"].map({"failure": 1, "repair": -1}).fillna(0)
        down = (sign * ev["nodes"]).cumsum()
        fig, (a, b) = H.figure(2, height=3.2)
        a.step(ev["time_s"] / 3600.0, down, where="post")
        H.finish(a, "simulated time (h)", "nodes down", "Nodes down over time", legend=False)
        fails = ev[ev["event"] == "failure"]
        counts = fails["component"].fillna("?").value_counts()
        b.bar(counts.index.astype(str), counts.values)
        H.finish(b, "component", "failures", "Failures by component", legend=False)
        out += H.img(fig, "failures over time and by component")
    return out


def energy_body(pairs):
    return H.kv_table(pairs)


def run_part(folder, prefix):
    summary = read_summary(folder)
    jobs = read_csv(folder, "jobs.csv")
    ts = read_csv(folder, "timeseries.csv")
    label = f"{summary.get('policy', '?')}/{summary.get('placement', '?')}"
    parts = [H.section(prefix, "scenario", "Scenario", scenario_body(folder, summary)),
             H.section(prefix, "headline", "Headline metrics", headline_body(summary, jobs)),
             H.section(prefix, "cdf", "JCT and wait CDFs", cdf_body([(label, jobs)])),
             H.section(prefix, "timeseries", "Utilization and queue over time",
                       timeseries_body([(label, ts, summary.get("total_gpus", 0))]))]
    parts += extras(folder, summary, prefix)
    return parts


def extras(folder, summary, prefix, title_suffix="", energy=True):
    """Serving, failures and (with `energy`) energy sections where the run has them."""
    parts = []
    if summary.get("services") or os.path.exists(os.path.join(folder, "requests.csv")):
        parts.append(H.section(prefix, "serving", "Serving SLOs" + title_suffix, serving_body(folder, summary)))
    if isinstance(summary.get("failures"), dict) or os.path.exists(os.path.join(folder, "failures.csv")):
        parts.append(H.section(prefix, "failures", "Failures" + title_suffix, failures_body(folder, summary)))
    energy = [(k, summary[k]) for k in H.ENERGY if k in summary] if energy else []
    if energy:
        parts.append(H.section(prefix, "energy", "Energy and cost" + title_suffix, energy_body(energy)))
    return parts


def compare_part(folder, prefix):
    cmp_rows = read_csv(folder, "comparison.csv", ([], [k for k, _ in H.HEADLINE] + list(H.ENERGY)))
    if cmp_rows.empty:
        raise report_input.BadInput(f"{folder}/comparison.csv has no rows")
    labels = [f"{r.policy}/{r.placement}" for r in cmp_rows.itertuples()]
    run_dirs = (cmp_rows["run_dir"] if "run_dir" in cmp_rows.columns
                else [f"{r.policy}__{r.placement}" for r in cmp_rows.itertuples()])
    subs = [os.path.join(folder, str(d)) for d in run_dirs]
    scen = ", ".join(sorted({str(s) for s in cmp_rows.get("scenario", pd.Series(["?"]))}))
    keys = [(k, lab) for k, lab in H.HEADLINE if k in cmp_rows.columns]
    headline = wide_table(labels, cmp_rows, keys)
    keys = keys[:8]
    fig, axes = H.figure(min(4, len(keys)), math.ceil(len(keys) / 4), width=12, height=2.8)
    for ax, (k, lab) in zip(axes, keys):
        f, unit = H.scale_for(k, cmp_rows[k])
        ax.bar(range(len(labels)), f * cmp_rows[k])
        ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize=7)
        H.finish(ax, "", f"{k} ({unit})" if unit else k, lab, legend=False)
    for ax in axes[len(keys):]:
        ax.set_visible(False)
    headline += H.img(fig, "headline metrics per policy/placement")
    jobs = [(lab, read_csv(s, "jobs.csv")) for lab, s in zip(labels, subs)]
    ts = [(lab, read_csv(s, "timeseries.csv"), r.get("total_gpus", 0))
          for lab, s, (_, r) in zip(labels, subs, cmp_rows.iterrows())]
    parts = [H.section(prefix, "scenario", "Scenario",
                       f"<p>Every combination runs <code>{H.esc(scen)}</code> with the same trace, cluster and "
                       "seed; only the policy and placement differ.</p>"),
             H.section(prefix, "headline", "Headline metrics (one seed each)", headline),
             H.section(prefix, "cdf", "JCT and wait CDFs", cdf_body(jobs)),
             H.section(prefix, "timeseries", "Utilization and queue over time", timeseries_body(ts))]
    for lab, s in zip(labels, subs):
        if os.path.exists(os.path.join(s, "summary.json")):
            parts += extras(s, read_summary(s), f"{prefix}-{lab.replace('/', '-')}", f" ({lab})", energy=False)
    energy = [(k, k) for k in H.ENERGY if k in cmp_rows.columns]
    if energy:
        parts.append(H.section(prefix, "energy", "Energy and cost", wide_table(labels, cmp_rows, energy)))
    return parts


def wide_table(labels, rows, keys):
    """One row per policy/placement, one column per (key, label), each column in one unit."""
    scales = {k: H.scale_for(k, rows[k]) for k, _ in keys}
    cells = [[lab] + [H.pm_scaled(r[k], None, scales[k]) for k, _ in keys]
             for lab, (_, r) in zip(labels, rows.iterrows())]
    return H.table(["policy/placement"] + [lab for _, lab in keys], cells)
