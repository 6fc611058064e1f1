"""The sections of scripts/report.py for a `fleetsim sweep` folder: runs.csv, aggregate.csv (mean ± 95%
CI over seeds per combination and metric), paired.csv (settings vs their baseline on the same seeds)
and runs/<id>/ (each run's own outputs and resolved scenario.toml)."""
import os

import pandas as pd

import report_html as H
import report_run as R

MAX_CDF_COMBOS = 12  # pooled JCT CDFs drawn for at most this many combinations
STAT_COLUMNS = ["metric", "n", "mean", "std", "ci95", "min", "max"]


def swept_keys(agg):
    """The columns between `combination` (and `case`) and `metric`: the swept keys."""
    cols = list(agg.columns)
    return [c for c in cols[1:cols.index("metric")]]


def combo_label(row, keys):
    return " ".join(f"{k}={row[k]}" for k in keys)


def numeric(values):
    try:
        return [float(v) for v in values], True
    except (TypeError, ValueError):
        return list(values), False


def headline_metrics(agg):
    present = set(agg["metric"])
    keys = [(k, lab) for k, lab in H.HEADLINE if k in present]
    if not keys:  # a sweep with its own `metrics`: the first six of them
        keys = [(m, m) for m in list(dict.fromkeys(agg["metric"]))[:6]]
    return keys


def aggregate_table(agg, keys, metrics):
    combos = agg.drop_duplicates("combination")
    scales = {m: H.scale_for(m, agg.loc[agg["metric"] == m, "mean"]) for m, _ in metrics}
    rows = []
    for _, c in combos.iterrows():
        sub = agg[agg["combination"] == c["combination"]].set_index("metric")
        cells = [c["combination"]] + [str(c[k]) for k in keys]
        n = ""
        for m, _ in metrics:
            if m in sub.index:
                r = sub.loc[m]
                cells.append(H.pm_scaled(r["mean"], r["ci95"], scales[m]))
                n = H.num(r["n"])
            else:
                cells.append("")
        rows.append(cells + [n])
    head = ["combination"] + keys + [f"{lab} ({scales[m][1]})" if scales[m][1] else lab for m, lab in metrics]
    return H.table(head + ["n"], rows, left=1 + len(keys))


def line_plots(agg, keys, metrics):
    """For each swept key, each metric against the key's values, one line per setting of the other keys,
    the band the 95% interval of the mean over seeds."""
    out = []
    for key in keys:
        others = [k for k in keys if k != key]
        fig, axes = H.figure(min(3, len(metrics)), -(-len(metrics) // 3), width=12, height=3.0)
        for ax, (m, lab) in zip(axes, metrics):
            rows = agg[agg["metric"] == m]
            scale = H.scale_for(m, rows["mean"])
            by = others[0] if len(others) == 1 else others
            groups = rows.groupby(by, sort=False) if others else [((), rows)]
            for ctx, g in groups:
                g = g.dropna(subset=["mean"])
                xs, is_num = numeric(g[key])
                if is_num:
                    order = sorted(range(len(xs)), key=lambda i: xs[i])
                    x = [xs[i] for i in order]
                else:
                    order = list(range(len(xs)))
                    x = list(range(len(xs)))
                    ax.set_xticks(x, [str(v) for v in xs])
                f = scale[0]
                mean = f * g["mean"].to_numpy()[order]
                ci = f * g["ci95"].fillna(0).to_numpy()[order]
                ctx = ctx if isinstance(ctx, tuple) else (ctx,)
                label = " ".join(f"{k}={v}" for k, v in zip(others, ctx)) or m
                line = ax.plot(x, mean, marker="o", label=label)[0]
                ax.fill_between(x, mean - ci, mean + ci, alpha=0.2, color=line.get_color())
            H.finish(ax, key, f"{m} ({scale[1]})" if scale[1] else m, lab)
        for ax in axes[len(metrics):]:
            ax.set_visible(False)
        out.append(H.img(fig, f"metrics against {key}"))
    return "".join(out)


def paired_body(paired, metrics):
    if paired is None or paired.empty:
        return "<p>No paired comparisons.</p>"
    p = paired[paired["setting"].astype(str) != paired["baseline"].astype(str)]
    names = [m for m, _ in metrics if m not in ("completed", "skipped")]

    def rows_of(df):
        rows, cls = [], []
        for _, r in df.iterrows():
            rows.append([r["key"], f"{r['setting']} vs {r['baseline']}", r["context"] if pd.notna(r["context"]) else "",
                         r["metric"], H.num(r["n"]), H.pm(r["mean_diff"], r["ci95_diff"]),
                         "" if pd.isna(r["mean_rel_pct"]) else f"{r['mean_rel_pct']:.1f} ± {r['ci95_rel_pct']:.1f} %"])
            sig = pd.notna(r["ci95_diff"]) and abs(r["mean_diff"]) > r["ci95_diff"] and r["n"] > 1
            cls.append("sig" if sig else "")
        return H.table(["key", "setting", "at", "metric", "n", "difference ± 95% CI", "relative ± 95% CI"],
                       rows, left=4, row_class=cls)

    head = p[p["metric"].isin(names)]
    return (rows_of(head) + '<p class="note">Shaded rows: the 95% interval of the paired difference excludes '
            "0 (a difference the seeds support).</p>"
            f"<details><summary>every metric ({len(p)} rows)</summary>{rows_of(p)}</details>")


def cdf_by_combo(folder, runs, keys):
    ok = runs[runs["status"] == "ok"]
    curves = []
    for combo, g in list(ok.groupby("combination", sort=True))[:MAX_CDF_COMBOS]:
        frames = [R.read_csv(os.path.join(folder, "runs", rid), "jobs.csv") for rid in g["run"]]
        frames = [f for f in frames if f is not None]
        if frames:
            curves.append((f"{combo}: {combo_label(g.iloc[0], keys)}", pd.concat(frames)))
    note = (f'<p class="note">Jobs of every seed of a combination pooled; the first {MAX_CDF_COMBOS} '
            "combinations.</p>" if ok["combination"].nunique() > MAX_CDF_COMBOS else
            '<p class="note">Jobs of every seed of a combination pooled.</p>')
    return (R.cdf_body(curves) + note) if curves else "<p>No runs/&lt;id&gt;/jobs.csv.</p>"


def scenario_body(folder, runs, agg, keys):
    vals = "".join(f"<li><code>{H.esc(k)}</code>: {H.esc(', '.join(dict.fromkeys(str(v) for v in agg[k])))}</li>"
                   for k in keys)
    seeds = ", ".join(str(s) for s in dict.fromkeys(runs["seed"]))
    out = f"<p>Swept keys:</p><ul>{vals}</ul><p>Seeds: {H.esc(seeds)}.</p>"
    for rid in runs["run"]:
        p = os.path.join(folder, "runs", str(rid), "scenario.toml")
        if os.path.exists(p):
            with open(p) as f:
                out += (f"<details open><summary>resolved scenario of run {H.esc(rid)} (base + its overrides)"
                        f"</summary><pre>{H.esc(f.read())}</pre></details>")
            break
    return out


def runs_body(runs):
    bad = runs[runs["status"] != "ok"]
    out = f"<p>{len(runs)} runs, {len(runs) - len(bad)} ok, {len(bad)} failed.</p>"
    if not bad.empty:
        out += H.table(["run", "status", "error"], bad[["run", "status", "error"]].fillna("").values.tolist(), left=3)
    return out


def sweep_part(folder, prefix):
    agg = R.read_csv(folder, "aggregate.csv")
    runs = R.read_csv(folder, "runs.csv")
    paired = R.read_csv(folder, "paired.csv")
    keys = swept_keys(agg)
    metrics = headline_metrics(agg)
    names = list(dict.fromkeys(agg["metric"]))
    parts = [H.section(prefix, "scenario", "Scenario", scenario_body(folder, runs, agg, keys)),
             H.section(prefix, "runs", "Runs", runs_body(runs)),
             H.section(prefix, "headline", "Headline metrics (mean ± 95% CI over seeds)",
                       aggregate_table(agg, keys, metrics[:7])
                       + (f"<details><summary>more metrics</summary>{aggregate_table(agg, keys, metrics[7:])}"
                          "</details>" if len(metrics) > 7 else "")),
             H.section(prefix, "lines", "Metrics against each swept key (band: 95% CI)",
                       line_plots(agg, keys, metrics[:6])),
             H.section(prefix, "paired", "Paired comparisons (same seeds)", paired_body(paired, metrics)),
             H.section(prefix, "cdf", "JCT and wait CDFs", cdf_by_combo(folder, runs, keys))]
    for sid, title, pick in [("serving", "Serving SLOs", lambda m: m.startswith("services.")),
                             ("failures", "Failures", lambda m: m.startswith("failures.")),
                             ("energy", "Energy and cost", lambda m: m in H.ENERGY)]:
        chosen = [m for m in names if pick(m)]
        if chosen:
            parts.append(H.section(prefix, sid, f"{title} (mean ± 95% CI over seeds)",
                                   aggregate_table(agg, keys, [(m, m) for m in chosen])))
    return parts
