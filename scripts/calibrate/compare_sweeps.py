#!/usr/bin/env python3
"""Do two GEMM sweeps of the same GPU agree? Nearest-shape throughput ratios between two measurements.

Usage: scripts/calibrate/compare_sweeps.py [--tolerance T] REFERENCE... --against OTHER...
       scripts/calibrate/compare_sweeps.py --self-test

REFERENCE and OTHER are NeuSight-schema CSV files or folders of them (`OPName, Latency` in ms,
`Device, B, M, N, K`), e.g. the training sweeps and the held-out test rows, or this week's sweep
against last month's. For every OTHER row of a (device, op) that REFERENCE also measured, the
REFERENCE row with the nearest shape is found; when every dimension of the two shapes is within the
tolerance (default 10%, as |log ratio|), the pair is kept and the ratio of achieved FLOP/s
(OTHER / REFERENCE, each row's own FLOP count) is recorded. Prints per (device, op): pairs, median
ratio and its 10th/90th percentiles.

A model fitted to REFERENCE cannot predict OTHER better than these ratios allow: a median of 1.15
means OTHER runs 15% faster on the same shapes (other clocks, driver, temperature, library version),
whatever the model. Exit status 0, or 2 on an unreadable file. Needs numpy and pandas (Debian's
python3-pandas).
"""
import os
import sys
import tempfile

import numpy as np
import pandas as pd

DIMS = ["B", "M", "N", "K"]


def fail(message):
    print(f"compare_sweeps.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_sweeps(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".csv"))
        else:
            files.append(p)
    frames = []
    for f in files:
        try:
            df = pd.read_csv(f)
        except (OSError, ValueError) as e:
            fail(f"{f}: {e}")
        missing = [c for c in ["OPName", "Latency", "Device"] + DIMS if c not in df.columns]
        if missing:
            fail(f"{f}: missing column(s) {', '.join(missing)}")
        frames.append(df[["OPName", "Latency", "Device"] + DIMS])
    if not frames:
        fail("no CSV files given")
    out = pd.concat(frames, ignore_index=True)
    out = out[(out.Latency > 0) & (out[DIMS] > 0).all(axis=1)].copy()
    out["flops_per_ms"] = 2.0 * out.B * out.M * out.N * out.K / out.Latency
    return out


def nearest_ratios(ref, other, tolerance):
    """Throughput ratios other/ref for the other rows whose nearest ref shape is within tolerance."""
    a = np.log(ref[DIMS].to_numpy(float))
    b = np.log(other[DIMS].to_numpy(float))
    ref_tp = ref.flops_per_ms.to_numpy()
    other_tp = other.flops_per_ms.to_numpy()
    limit = np.log1p(tolerance)
    ratios = []
    for start in range(0, len(b), 256):  # chunks keep the distance matrix small
        d = np.abs(b[start:start + 256, None, :] - a[None, :, :]).max(axis=2)  # Chebyshev in log space
        best = d.argmin(axis=1)
        ok = d[np.arange(len(best)), best] <= limit
        ratios += list(other_tp[start:start + 256][ok] / ref_tp[best[ok]])
    return np.array(ratios)


def compare(ref, other, tolerance):
    rows = []
    for (device, op), o in other.groupby(["Device", "OPName"], sort=True):
        r = ref[(ref.Device == device) & (ref.OPName == op)]
        if r.empty:
            continue
        q = nearest_ratios(r, o, tolerance)
        if len(q) == 0:
            rows.append((device, op, 0, float("nan"), float("nan"), float("nan")))
            continue
        rows.append((device, op, len(q), float(np.median(q)), float(np.quantile(q, 0.1)),
                     float(np.quantile(q, 0.9))))
    return rows


def print_table(rows, tolerance):
    print(f"throughput ratio other/reference on nearest shapes (every dimension within {tolerance:.0%})")
    print(f"{'device':<28} {'op':<8} {'pairs':>6} {'median':>7} {'p10':>6} {'p90':>6}")
    for device, op, n, med, p10, p90 in rows:
        print(f"{device:<28} {op:<8} {n:>6} {med:>7.3f} {p10:>6.3f} {p90:>6.3f}")


def self_test():
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as tmp:
        def sweep(name, n, speed, offset):
            shapes = rng.integers(256, 1024, size=(n, 4)) + offset
            shapes[:, 0] = rng.integers(1, 8, size=n)
            flops = 2.0 * shapes.prod(axis=1)
            df = pd.DataFrame(shapes, columns=DIMS)
            df.insert(0, "OPName", "bmm")
            df.insert(1, "Latency", flops / (speed * 1e9))  # ms at `speed` GFLOP/ms
            df.insert(2, "Device", "GPU-X")
            path = os.path.join(tmp, name)
            df.to_csv(path, index=False)
            return path

        ref = read_sweeps([sweep("ref.csv", 4000, 10.0, 0)])
        other = read_sweeps([sweep("other.csv", 300, 12.0, 1)])
        rows = compare(ref, other, 0.1)
        assert len(rows) == 1 and rows[0][2] > 50, rows
        assert abs(rows[0][3] - 1.2) < 0.03, rows  # the 20% faster sweep is found, shape noise aside
        assert compare(ref, other.assign(Device="GPU-Y"), 0.1) == []
    print("compare_sweeps.py self-test: ok")


def main(argv):
    if argv[1:] == ["--self-test"]:
        self_test()
        return 0
    args = argv[1:]
    tolerance = 0.1
    if len(args) >= 2 and args[0] == "--tolerance":
        try:
            tolerance = float(args[1])
        except ValueError:
            fail(f"--tolerance: not a number: {args[1]}")
        args = args[2:]
    if "--against" not in args:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    cut = args.index("--against")
    ref, other = read_sweeps(args[:cut]), read_sweeps(args[cut + 1:])
    print_table(compare(ref, other, tolerance), tolerance)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
