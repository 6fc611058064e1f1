#!/usr/bin/env python3
"""Plot a `fleetsim inflate` result: allocated GPU share against arrived load, per placement.

Usage: scripts/plot_inflation.py INFLATION_CSV [OUT_PNG]    (default: inflation.png beside the CSV)
       scripts/plot_inflation.py --self-test                 (checks the script on generated data)

One line per placement: the mean over seeds of the allocated share (% of the cluster's GPU
capacity) at each arrived load (% of the cluster's GPUs requested so far), with a band from the
seeds' minimum to maximum. Seeds are recorded at slightly different loads, so each seed's curve is
interpolated (as a step: the share holds until the next pod) onto a common grid first. A dashed
diagonal marks "everything that arrived is allocated". Uses matplotlib only (Debian's
python3-matplotlib), no pandas.
"""
import csv
import os
import sys
import tempfile
from collections import OrderedDict, defaultdict


def read(path):
    """{placement: {seed: [(arrived, allocated), ...]}} in file order."""
    runs = OrderedDict()
    with open(path, newline="") as f:
        rows = csv.DictReader(f)
        need = {"placement", "seed", "arrived_pct", "allocated_pct", "failed_pods"}
        if rows.fieldnames is None or not need.issubset(rows.fieldnames):
            raise SystemExit(f"{path}: not an inflation.csv (header {rows.fieldnames})")
        for r in rows:
            runs.setdefault(r["placement"], defaultdict(list))[r["seed"]].append(
                (float(r["arrived_pct"]), float(r["allocated_pct"])))
    return runs


def step_at(points, x):
    """Allocated share of the last recorded point at or before arrived load x (points sorted)."""
    value = 0.0
    for a, v in points:
        if a > x:
            break
        value = v
    return value


def steps_on(points, grid):
    """step_at for every x of an ascending grid, in one pass."""
    out, i, value = [], 0, 0.0
    for x in grid:
        while i < len(points) and points[i][0] <= x:
            value = points[i][1]
            i += 1
        out.append(value)
    return out


def curves(seeds):
    """Common grid, mean, min and max over seeds (grid limited to where every seed has data)."""
    last = min(max(a for a, _ in pts) for pts in seeds.values())
    grid = [i * 0.5 for i in range(int(last / 0.5) + 1)]
    if not grid or grid[-1] < last:
        grid.append(last)
    per_seed = [steps_on(sorted(pts), grid) for pts in seeds.values()]
    mean = [sum(col) / len(col) for col in zip(*per_seed)]
    lo = [min(col) for col in zip(*per_seed)]
    hi = [max(col) for col in zip(*per_seed)]
    return grid, mean, lo, hi


def plot(csv_path, png_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = read(csv_path)
    if not runs:
        raise SystemExit(f"{csv_path}: no rows")
    fig, (ax, zoom) = plt.subplots(1, 2, figsize=(12, 5), gridspec_kw={"width_ratios": [1, 1]})
    top = 0.0
    ranked = []
    for name, seeds in runs.items():
        grid, mean, lo, hi = curves(seeds)
        at100 = step_at(list(zip(grid, mean)), 100.0)
        ranked.append((at100, name, grid, mean, lo, hi, len(seeds)))
        top = max(top, grid[-1])
    ranked.sort(key=lambda t: -t[0])  # legend from best to worst at 100 % arrived
    zoom_from = 75.0
    zoom_low, zoom_high = 100.0, 0.0
    for at100, name, grid, mean, lo, hi, k in ranked:
        label = f"{name} ({at100:.1f}% at 100%, {k} seed{'s' if k > 1 else ''})"
        for axis in (ax, zoom):
            (line,) = axis.plot(grid, mean, label=label)
            axis.fill_between(grid, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
        shown = [v for x, v in zip(grid, lo) if x >= zoom_from]
        zoom_low = min([zoom_low] + shown)
        zoom_high = max([zoom_high] + [v for x, v in zip(grid, hi) if x >= zoom_from])
    for axis in (ax, zoom):
        axis.plot([0, 100], [0, 100], color="grey", linestyle="--", linewidth=0.8, label="all arrived allocated")
        axis.axvline(100, color="grey", linestyle=":", linewidth=0.8)
        axis.set_xlabel("arrived workload (% of cluster GPUs requested)")
        axis.grid(True, alpha=0.3)
    ax.set_xlim(0, max(top, 100))
    ax.set_ylim(0, 100)
    ax.set_ylabel("allocated GPU share (% of cluster GPU capacity)")
    ax.set_title("Workload inflation (mean over seeds, band = min..max)")
    zoom.set_xlim(zoom_from, max(top, 100))
    zoom.set_ylim(max(0.0, min(zoom_low, zoom_from) - 1), min(100.0, zoom_high + 1))
    zoom.set_title(f"zoom: arrived >= {zoom_from:.0f} %")
    zoom.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(png_path, dpi=120)
    plt.close(fig)


def self_test():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "inflation.csv")
        with open(path, "w") as f:
            f.write("placement,seed,arrived_pct,allocated_pct,failed_pods\n")
            for name, cap in (("a", 90.0), ("b", 80.0)):
                for seed in (1, 2):
                    for i in range(0, 261):
                        x = i * 0.5 + 0.1 * seed
                        f.write(f"{name},{seed},{x:.4f},{min(x, cap):.4f},{0 if x < cap else i}\n")
        grid, mean, lo, hi = curves(read(path)["a"])
        assert abs(step_at(list(zip(grid, mean)), 50.0) - 49.65) < 1e-9, mean[:5]
        assert all(lo_ <= m <= hi_ for lo_, m, hi_ in zip(lo, mean, hi))
        out = os.path.join(d, "inflation.png")
        plot(path, out)
        assert os.path.getsize(out) > 1000
    print("plot_inflation.py self-test passed")


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        self_test()
        return 0
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    csv_path = argv[1]
    png_path = argv[2] if len(argv) == 3 else os.path.join(os.path.dirname(csv_path) or ".", "inflation.png")
    plot(csv_path, png_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
