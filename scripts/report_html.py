"""HTML and plotting helpers of scripts/report.py: tables, embedded PNG figures, number formats.

Everything the page needs is inline (PNG as base64 data URIs, one <style> block): no network access,
no external JS or CSS.
"""
import base64
import html
import io
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Headline metrics, in this order, where present: (key, label).
HEADLINE = [
    ("mean_jct_s", "mean JCT"),
    ("p50_jct_s", "median JCT"),
    ("p99_jct_s", "p99 JCT"),
    ("mean_wait_s", "mean wait"),
    ("p99_wait_s", "p99 wait"),
    ("makespan_s", "makespan"),
    ("gpu_utilization", "GPU utilization"),
    ("busy_window_utilization", "utilization over the busy window"),
    ("restarts", "restarts"),
    ("rho_mean", "mean finish-time fairness rho"),
    ("completed", "jobs completed"),
    ("skipped", "jobs skipped"),
]
ENERGY = ["energy_kwh", "facility_kwh", "gpu_kwh", "idle_gpu_kwh", "node_kwh", "link_kwh",
          "energy_per_completed_job_kwh", "mean_power_w", "pue", "price_per_kwh", "cost"]

STYLE = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1200px; color: #222; }
h1 { border-bottom: 2px solid #345; } h2 { background: #eef2f6; padding: .3em .5em; margin-top: 2em; }
h3 { border-bottom: 1px solid #ccd; }
table { border-collapse: collapse; margin: .5em 0; font-size: 90%; }
th, td { border: 1px solid #ccd; padding: .2em .5em; text-align: right; white-space: nowrap; }
th { background: #f3f5f8; } td.t, th.t { text-align: left; }
tr.sig td { background: #eef8ee; }
pre { background: #f7f7f7; padding: .6em; overflow: auto; max-height: 24em; font-size: 85%; }
.wide { overflow-x: auto; }
img { max-width: 100%; display: block; margin: .5em 0; }
nav ul { columns: 2; } .note { color: #556; font-size: 90%; }
"""


def esc(x):
    return html.escape(str(x), quote=True)


def num(v):
    """A number as a short string ('' for NaN or None)."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, str):
        return v
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if math.isnan(f):
        return ""
    if f == int(f) and abs(f) < 1e15:
        return str(int(f))
    a = abs(f)
    if a >= 1000:
        return f"{f:,.1f}"
    if a >= 1:
        return f"{f:.3f}"
    return f"{f:.4g}"


def with_unit(key, v):
    """Seconds also in hours when long; fractions also in %."""
    s = num(v)
    try:
        f = float(v)
    except (TypeError, ValueError):
        return s
    if math.isnan(f):
        return s
    if key.endswith("_s") and abs(f) >= 3600:
        return f"{s} s ({f / 3600:.2f} h)"
    if key.endswith("_s"):
        return f"{s} s"
    if key.endswith("utilization") or key.endswith("_share") or key == "slo_attainment":
        return f"{s} ({100 * f:.1f} %)"
    return s


def scale_for(key, values):
    """(factor, unit) to show a metric's values in: hours for long times, % for fractions."""
    vals = [abs(float(v)) for v in values if v == v]
    if key.endswith("_s"):
        return (1 / 3600, "h") if vals and max(vals) >= 3600 else (1, "s")
    if key.endswith("utilization") or key == "slo_attainment":
        return 100, "%"
    return 1, ""


def pm_scaled(mean, ci, scale):
    """'mean ± ci' in the unit of scale_for()."""
    f, unit = scale
    if mean is None or mean != mean:
        return ""
    text = num(f * float(mean)) if ci is None or ci != ci else f"{num(f * float(mean))} ± {num(f * float(ci))}"
    return f"{text} {unit}".strip()


def pm(mean, ci, key=""):
    """'mean ± ci' (with the unit of `key` on the mean)."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return ""
    if ci is None or (isinstance(ci, float) and math.isnan(ci)):
        return with_unit(key, mean)
    if key.endswith("_s") and abs(float(mean)) >= 3600:
        return f"{float(mean) / 3600:.3f} ± {float(ci) / 3600:.3f} h"
    return f"{num(mean)} ± {num(ci)}"


def table(headers, rows, left=1, row_class=None):
    """An HTML table; the first `left` columns are left-aligned text."""
    out = ['<div class="wide"><table><tr>']
    out += [f'<th class="{"t" if i < left else ""}">{esc(h)}</th>' for i, h in enumerate(headers)]
    out.append("</tr>")
    for r, row in enumerate(rows):
        cls = f' class="{row_class[r]}"' if row_class and row_class[r] else ""
        out.append(f"<tr{cls}>")
        out += [f'<td class="{"t" if i < left else ""}">{esc(c)}</td>' for i, c in enumerate(row)]
        out.append("</tr>")
    out.append("</table></div>")
    return "".join(out)


def kv_table(pairs):
    return table(["key", "value"], [(k, with_unit(k, v)) for k, v in pairs])


def flatten(d, prefix=""):
    """Nested dict -> [(dotted key, scalar)]."""
    out = []
    for k, v in d.items():
        if isinstance(v, dict):
            out += flatten(v, f"{prefix}{k}.")
        elif isinstance(v, list):
            out.append((f"{prefix}{k}", ", ".join(num(x) for x in v)))
        else:
            out.append((f"{prefix}{k}", v))
    return out


def figure(ncols=1, nrows=1, width=11, height=3.6):
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height * nrows), squeeze=False)
    return fig, [ax for row in axes for ax in row]


def img(fig, alt):
    """The figure as an <img> with a base64 PNG data URI; closes the figure."""
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img alt="{esc(alt)}" src="data:image/png;base64,{data}">'


def cdf(ax, values, label):
    v = values.dropna().sort_values().reset_index(drop=True)
    if v.empty:
        return False
    ax.step(v, (v.index + 1) / len(v), where="post", label=label)
    return True


def finish(ax, xlabel, ylabel, title=None, legend=True):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)


def section(prefix, sid, title, body):
    """One section of a folder's part; its anchor is <prefix>-<sid> (unique over the page)."""
    return (f'<section data-section="{esc(sid)}"><h3 id="{esc(prefix)}-{esc(sid)}">{esc(title)}</h3>'
            f"{body}</section>")


def page(title, parts, toc):
    items = "".join(f'<li><a href="#{esc(a)}">{esc(t)}</a></li>' for a, t in toc)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
            f"<style>{STYLE}</style></head><body><h1>{esc(title)}</h1><nav><ul>{items}</ul></nav>"
            + "".join(parts) + "</body></html>\n")
