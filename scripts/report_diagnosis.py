"""The section of scripts/report.py for a `fleetsim diagnose` folder (summary.json with a `diagnosis`
block, findings.csv, breakdown.csv; fixes.csv and fleet_jobs.csv with a fleet table): the fixes ranked by
fleet GPU-hours saved, the per-job step breakdown bars, the findings with their what-if speedups, and
the fleet rerun's change in queueing and JCT."""
import json
import os

import pandas as pd

import report_html as H


def fixes_body(folder):
    p = os.path.join(folder, "fixes.csv")
    if not os.path.exists(p):
        return "<p>No fleet table was given (--jobs or --shares): no ranking by GPU-hours.</p>"
    fx = pd.read_csv(p)
    if fx.empty:
        return "<p>No fix applies to a job of the fleet table.</p>"
    fig, (ax,) = H.figure(width=9, height=max(2.0, 0.45 * len(fx) + 1))
    labels = [f"{r.fix} ({r.estimate})" for r in fx.itertuples()]
    colors = ["#4c72b0" if e == "prediction" else "#c0c0c0" for e in fx["estimate"]]
    ax.barh(labels[::-1], fx["gpu_hours_saved"][::-1], color=colors[::-1])
    H.finish(ax, "GPU-hours saved across the fleet", "", "Fixes ranked (grey: upper bound)", legend=False)
    rows = [(r.rank, r.fix, r.estimate, r.jobs, H.num(r.gpu_hours), H.num(r.gpu_hours_saved),
             f"{100 * r.share_of_fleet_gpu_hours:.1f}%") for r in fx.itertuples()]
    return H.img(fig, "fixes by GPU-hours saved") + H.table(
        ["rank", "fix", "estimate", "jobs", "GPU-hours of those jobs", "GPU-hours saved", "of the fleet"], rows, left=3)


def breakdown_body(folder):
    b = pd.read_csv(os.path.join(folder, "breakdown.csv"))
    per_job = b.groupby("job")[["step_s", "step_compute_s", "step_communication_s", "step_memory_s", "step_idle_s",
                                "step_overlap_s"]].mean()
    if per_job.empty:
        return "<p>No job.</p>"
    # Stacked shares of the step: compute, exposed communication, memory copies, idle (overlap counted once).
    step = per_job["step_s"].where(per_job["step_s"] > 0, 1)
    parts = {"compute": per_job["step_compute_s"] / step,
             "exposed communication": (per_job["step_communication_s"] - per_job["step_overlap_s"]).clip(lower=0) / step,
             "memory copies": per_job["step_memory_s"] / step,
             "idle": per_job["step_idle_s"] / step}
    fig, (ax,) = H.figure(width=9, height=max(2.2, 0.4 * len(per_job) + 1.2))
    left = pd.Series(0.0, index=per_job.index)
    for name, v in parts.items():
        ax.barh(per_job.index, v, left=left, label=name)
        left = left + v
    H.finish(ax, "share of the step (mean over ranks)", "", "Per-job step breakdown")
    return H.img(fig, "per-job step breakdown")


def findings_body(folder):
    f = pd.read_csv(os.path.join(folder, "findings.csv"), keep_default_na=False)
    if f.empty:
        return "<p>No rule fired.</p>"
    rows = [(r.job, r.rule, H.num(r.value), r.evidence,
             f"{float(r.speedup):.3f}x ({r.estimate})" if r.simulated in (True, "true") else "not simulated: "
             + r.not_simulated) for r in f.itertuples()]
    return H.table(["job", "rule", "value", "evidence", "what-if"], rows, left=2)


def rerun_body(summary):
    r = summary.get("rerun")
    if not r:
        return "<p>No fleet rerun (--scenario) in this folder.</p>"
    rows = []
    for k, v in r.items():
        if isinstance(v, dict):
            rows.append((k, H.with_unit(k, v["baseline"]), H.with_unit(k, v["fixed"]), f"{100 * v['change']:+.1f}%"))
    return f"<p>{r.get('jobs_changed', 0)} fleet jobs shortened by their predicted fixes.</p>" + H.table(
        ["metric", "as traced", "with the fixes", "change"], rows)


def diagnosis_part(folder, prefix):
    with open(os.path.join(folder, "summary.json")) as fh:
        summary = json.load(fh)
    return [H.section(prefix, "fixes", "Fixes ranked by fleet GPU-hours saved", fixes_body(folder)),
            H.section(prefix, "breakdown", "Per-job step breakdown", breakdown_body(folder)),
            H.section(prefix, "findings", "Findings and what-ifs", findings_body(folder)),
            H.section(prefix, "rerun", "Fleet rerun with the fixes", rerun_body(summary))]
