#!/usr/bin/env python3
"""Accuracy checks of a fast fidelity against the `network` reference, from a sweep folder.

Usage: scripts/fabric_accuracy.py SWEEP_DIR [--candidate fabric] [--reference network]
                                  [--jct-tol 2] [--util-tol 5] [--effect-tol 10] [--effect-keys K1,K2]
                                  [--strict]
       scripts/fabric_accuracy.py --self-test

SWEEP_DIR is a `fleetsim sweep` output (runs.csv) whose [[case]] tables name the candidate (default
`fabric`) and one or more reference cases (names starting with `network`: the same fidelity with other
chunkings, e.g. tests/validation/fabric-vs-network-philly.sweep.toml). The grid's keys (columns that vary
within a case) make the cells. For each cell, per metric (mean_jct_s and every network.tiers.*.mean_util
column), averaged over the seeds every case completed:

- the candidate against the reference: candidate / reference mean - 1;
- with several reference cases (an ensemble), the 95% prediction interval of one more reference
  variant: mean +- t(0.975, n - 1) sd sqrt(1 + 1/n), sd over the variants. One trace is one schedule,
  and any change of rate moves it, so on a single trace the reference's own variants can disagree by
  more than the tolerance;
- with one reference case and several seeds, the 95% interval of the mean per-seed difference.

Effects: for each grid key with two or more values (all but trace paths, or --effect-keys), each value
against the first, everything else equal, the change of mean JCT; the candidate's effect as a multiple of the reference's, with the
variants' prediction interval (ensemble) or a bootstrap interval over seeds (one reference, 2,000
resamples, fixed random seed).

Verdicts: `ok` (within the tolerance), `noise` (outside it, but inside the reference's own 95%
interval: the check cannot tell the candidate from another reference run), `OUT`; a cell where no seed
completed in every case is `missing`. --strict exits 1 when any check is OUT or a cell missing. Bad input (no runs.csv, no candidate or reference case) exits 2.
"""
import csv
import math
import os
import random
import statistics as st
import sys
import tempfile

# Student t, 97.5% quantile, by degrees of freedom (1..30); the normal's 1.96 above
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042]


def t975(df):
    return T975[df - 1] if df <= len(T975) else 1.96


class BadInput(Exception):
    pass


def load(folder):
    path = os.path.join(folder, "runs.csv")
    if not os.path.exists(path):
        raise BadInput(f"{path}: not found (give a `fleetsim sweep` output folder)")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        cols = reader.fieldnames or []
        rows = [r for r in reader if r.get("status") == "ok"]
    if "case" not in cols or "seed" not in cols:
        raise BadInput(f"{path}: no 'case' column: the sweep needs [[case]] tables (candidate and reference)")
    knobs = cols[cols.index("case") + 1:cols.index("seed")]
    # grid keys vary within a case; the others are the cases' own overrides
    grid = [k for k in knobs if any(len({r[k] for r in rows if r["case"] == c}) > 1 for c in {r["case"] for r in rows})]
    metrics = [c for c in cols if c == "mean_jct_s" or (c.startswith("network.tiers.") and c.endswith(".mean_util"))]
    return rows, grid, metrics


def show(value):
    """a grid value as printed: a path by its file name"""
    return os.path.basename(value) if "/" in value else value


def tolerance(metric, args):
    return args["jct_tol"] if metric == "mean_jct_s" else args["util_tol"]


def verdict(dev, tol, low=None, high=None, of_candidate=False):
    """ok within the tolerance; noise outside it where the interval [low, high] says the check cannot
    tell: the reference's own interval holds dev, or (of_candidate: the candidate's interval over
    seeds) it reaches inside the tolerance; OUT otherwise. All in % (or multiples less 1 for effects)."""
    if abs(dev) <= tol:
        return "ok"
    if low is None:
        return "OUT"
    inside = (low <= tol and high >= -tol) if of_candidate else (low <= dev <= high)
    return "noise" if inside else "OUT"


def prediction(xs):
    """the half-width of the 95% prediction interval of one more draw like xs"""
    return t975(len(xs) - 1) * st.stdev(xs) * math.sqrt(1 + 1 / len(xs))


def bootstrap_ratio(pairs, draws=2000):
    """the 95% bootstrap interval of sum(a) / sum(b) over (a, b) pairs resampled (fixed random seed)"""
    rng = random.Random(1)
    boot = []
    for _ in range(draws):
        pick = [pairs[rng.randrange(len(pairs))] for _ in pairs]
        den = sum(b for _, b in pick)
        if den != 0:
            boot.append(sum(a for a, _ in pick) / den)
    boot.sort()
    return (boot[int(0.025 * len(boot))], boot[int(0.975 * len(boot)) - 1]) if boot else (None, None)


class Runs:
    """The completed runs of a sweep by (case, cell, seed); cells are tuples of the grid keys' values."""

    def __init__(self, rows, grid, cases):
        self.cases = cases
        self.value = {(r["case"], tuple(r[k] for k in grid), r["seed"]): r for r in rows}
        self.cells = sorted({cell for (_, cell, _) in self.value})

    def seeds(self, *cells):
        """the seeds every case completed in every one of `cells`"""
        common = set.intersection(*({sd for (c, ce, sd) in self.value if ce == cell and c == case}
                                    for cell in cells for case in self.cases))
        return sorted(common, key=lambda x: int(x) if x.isdigit() else x)

    def get(self, case, cell, metric, seed):
        return float(self.value[(case, cell, seed)][metric] or 0)

    def mean(self, case, cell, metric, seeds):
        return st.mean(self.get(case, cell, metric, s) for s in seeds)


def cell_checks(runs, grid, metrics, refs, cand, args):
    """each cell's metrics: the candidate against the reference mean, with the reference's interval
    (ensemble) or the candidate's paired per-seed interval (one reference over seeds)"""
    checks = []
    for cell in runs.cells:
        seeds = runs.seeds(cell)
        label = " ".join(f"{k}={show(v)}" for k, v in zip(grid, cell)) or "all runs"
        if not seeds:  # a run failed or is missing: say so rather than drop the cell's checks
            checks.append(("cell", label, 0.0, 0.0, None, None, "missing"))
            continue
        for metric in metrics:
            ref = [runs.mean(c, cell, metric, seeds) for c in refs]
            m = st.mean(ref)
            if m == 0:
                continue
            tol = tolerance(metric, args)
            dev = 100 * (runs.mean(cand, cell, metric, seeds) / m - 1)
            low = high = None
            if len(refs) > 1:
                half = 100 * prediction(ref) / m
                low, high = -half, half
            per_seed = [] if len(refs) > 1 else [
                100 * (runs.get(cand, cell, metric, s) / runs.get(refs[0], cell, metric, s) - 1)
                for s in seeds if runs.get(refs[0], cell, metric, s) != 0]
            if len(per_seed) > 1:
                dev = st.mean(per_seed)
                half = t975(len(per_seed) - 1) * st.stdev(per_seed) / math.sqrt(len(per_seed))
                low, high = dev - half, dev + half
            checks.append((metric, label, dev, tol, low, high, verdict(dev, tol, low, high, len(refs) == 1)))
    return checks


def effect_checks(runs, grid, refs, cand, args):
    """each grid key's values against its first, everything else equal, on mean JCT: the candidate's
    change as a multiple of the reference's (not of one trace against another, unless --effect-keys)"""
    keys = args["effect_keys"] if args["effect_keys"] is not None else [k for k in grid if not k.endswith(".path")]
    tol = args["effect_tol"] / 100
    checks = []
    for i, key in enumerate(grid):
        if key not in keys:
            continue
        values = list(dict.fromkeys(cell[i] for cell in runs.cells))
        for b in values[1:]:
            for cell in runs.cells:
                other = cell[:i] + (b,) + cell[i + 1:]
                if cell[i] != values[0] or other not in runs.cells:
                    continue
                seeds = runs.seeds(cell, other)
                if not seeds:
                    continue
                eff = {c: runs.mean(c, other, "mean_jct_s", seeds) - runs.mean(c, cell, "mean_jct_s", seeds)
                       for c in runs.cases}
                ref = [eff[c] for c in refs]
                m = st.mean(ref)
                if abs(m) <= 1e-6 * max(st.mean(runs.mean(c, cell, "mean_jct_s", seeds) for c in refs), 1):
                    continue  # no effect to compare (e.g. a placement that never crosses the uplinks)
                ratio = eff[cand] / m
                low = high = None
                if len(refs) > 1:
                    half = prediction(ref) / abs(m)
                    low, high = 1 - half, 1 + half
                elif len(seeds) > 1:
                    low, high = bootstrap_ratio(
                        [(runs.get(cand, other, "mean_jct_s", s) - runs.get(cand, cell, "mean_jct_s", s),
                          runs.get(refs[0], other, "mean_jct_s", s) - runs.get(refs[0], cell, "mean_jct_s", s))
                         for s in seeds])
                ctx = " ".join(f"{k}={show(v)}" for j, (k, v) in enumerate(zip(grid, cell)) if j != i)
                label = f"{key}: {show(values[0])} -> {show(b)} ({ctx}; reference {m:+.0f} s)"
                v = verdict(ratio - 1, tol, None if low is None else low - 1, None if high is None else high - 1,
                            len(refs) == 1)
                checks.append(("effect", label, ratio, tol, low, high, v))
    return checks


def analyse(rows, grid, metrics, args):
    """(reference cases, checks): each check (metric or "effect" or "cell", label, deviation in % or
    the effect's multiple, tolerance, interval low and high or None, verdict)"""
    cand = args["candidate"]
    refs = sorted({r["case"] for r in rows if r["case"].startswith(args["reference"])})
    if not any(r["case"] == cand for r in rows):
        raise BadInput(f"no completed run of the candidate case '{cand}'")
    if not refs:
        raise BadInput(f"no completed run of a reference case (a case named '{args['reference']}...')")
    runs = Runs(rows, grid, refs + [cand])
    return refs, cell_checks(runs, grid, metrics, refs, cand, args) + effect_checks(runs, grid, refs, cand, args)


def report(refs, checks, args, out=sys.stdout):
    """prints the checks and a summary line; returns the count of each verdict"""
    kind = (f"ensemble of {len(refs)} reference cases ({', '.join(refs)}): 95% prediction interval of one more"
            if len(refs) > 1 else f"one reference case ({refs[0]}): 95% interval over seeds")
    print(f"fabric_accuracy: {args['candidate']} against {kind}", file=out)
    for metric, label, dev, tol, low, high, v in checks:
        if v == "missing":
            print(f"  {label}: no seed that every case completed (see runs.csv's status column)  missing", file=out)
        elif metric == "effect":
            iv = "" if low is None else f"  95% interval [{low:.2f}, {high:.2f}]x"
            print(f"  effect  {label}: {dev:.2f}x (tolerance {1 - tol:.2f}-{1 + tol:.2f}){iv}  {v}", file=out)
        else:
            iv = "" if low is None else f"  95% interval [{low:+.1f}, {high:+.1f}]%"
            print(f"  {metric:<40} {label}: {dev:+6.1f}% (tolerance {tol:g}%){iv}  {v}", file=out)
    counts = {v: sum(1 for c in checks if c[6] == v) for v in ("ok", "noise", "OUT", "missing")}
    print(f"checks: {len(checks)}: {counts['ok']} ok, {counts['noise']} within the reference's noise, "
          f"{counts['OUT']} OUT" + (f", {counts['missing']} cells missing" if counts["missing"] else ""), file=out)
    return counts


def parse(argv):
    args = {"candidate": "fabric", "reference": "network", "jct_tol": 2.0, "util_tol": 5.0, "effect_tol": 10.0,
            "strict": False, "effect_keys": None}
    names = {"--candidate": "candidate", "--reference": "reference", "--jct-tol": "jct_tol",
             "--util-tol": "util_tol", "--effect-tol": "effect_tol"}
    folder = None
    it = iter(argv)
    for a in it:
        if a == "--strict":
            args["strict"] = True
        elif a == "--effect-keys":
            v = next(it, None)
            if v is None:
                raise BadInput(f"{a} needs a value")
            args["effect_keys"] = [k for k in v.split(",") if k]
        elif a in names:
            v = next(it, None)
            if v is None:
                raise BadInput(f"{a} needs a value")
            try:
                args[names[a]] = v if names[a] in ("candidate", "reference") else float(v)
            except ValueError:
                raise BadInput(f"{a}: '{v}' is not a number") from None
        elif folder is None and not a.startswith("--"):
            folder = a
        else:
            raise BadInput(f"unknown argument '{a}'")
    if folder is None:
        raise BadInput("usage: fabric_accuracy.py SWEEP_DIR [--candidate NAME] [--strict] (or --self-test)")
    return folder, args


def write_runs(folder, rows):
    cols = ["run", "combination", "case", "execution.chunks_shared", "scheduler.placement", "seed", "status",
            "error", "scenario_hash", "mean_jct_s", "network.tiers.nic.mean_util"]
    with open(os.path.join(folder, "runs.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for i, (case, chunks, placement, seed, jct, nic) in enumerate(rows):
            w.writerow([f"r{i}", "c", case, chunks, placement, seed, "ok", "", "h", jct, nic])


def self_test():
    import io

    base = parse(["x"])[1]

    def report_of(d, args, buf):
        return report(*analyse(*load(d), args), args, buf)
    with tempfile.TemporaryDirectory() as d:
        # ensemble: four reference variants per placement, spread +-1% in JCT and +-10% in NIC use
        rows = []
        for i, (jf, nf) in enumerate(((0.99, 0.9), (1.01, 1.1), (1.0, 1.0), (1.0, 1.0))):
            rows.append((f"network-{i}", 14 + i, "a", 1, 1000 * jf, 0.10 * nf))
            rows.append((f"network-{i}", 14 + i, "b", 1, 1100 * jf, 0.20 * nf))
        # candidate: JCT +1% (ok), NIC +12% at a (noise: the variants' interval is about +-26%), NIC +60% at b
        rows += [("fabric", "", "a", 1, 1010, 0.112), ("fabric", "", "b", 1, 1111, 0.32)]
        write_runs(d, rows)
        buf = io.StringIO()
        counts = report_of(d, dict(base), buf)
        text = buf.getvalue()
        assert "ensemble of 4 reference cases" in text, text
        got = {(c[0], c[1]): c[6] for c in analyse(*load(d), dict(base))[1] if c[0] != "effect"}
        assert got == {("mean_jct_s", "scheduler.placement=a"): "ok", ("mean_jct_s", "scheduler.placement=b"): "ok",
                       ("network.tiers.nic.mean_util", "scheduler.placement=a"): "noise",
                       ("network.tiers.nic.mean_util", "scheduler.placement=b"): "OUT"}, (got, text)
        # the placement effect: reference +100 s (+-2 s across variants), candidate +101 s: 1.01x, ok
        assert "scheduler.placement: a -> b" in text and "1.01x" in text and counts["OUT"] == 1, text
        assert main([d, "--strict"], io.StringIO()) == 1 and main([d], io.StringIO()) == 0
        # a failed candidate run: its cell is missing, and --strict fails on it
        with open(os.path.join(d, "runs.csv")) as f:
            text = f.read().replace("fabric,,b,1,ok", "fabric,,b,1,failed")
        with open(os.path.join(d, "runs.csv"), "w") as f:
            f.write(text)
        buf = io.StringIO()
        counts = report_of(d, dict(base), buf)
        assert counts["missing"] == 1 and "scheduler.placement=b: no seed" in buf.getvalue(), buf.getvalue()
        assert main([d, "--strict"], io.StringIO()) == 1
        # one reference over seeds: per-seed differences of +3% +-0.2% are OUT at 2%, ok at 4%
        rows = []
        for s in range(1, 6):
            for p, scale in (("a", 1.0), ("b", 2.0)):
                rows.append(("network", "", p, s, 1000 * scale * (1 + s / 10), 0.1))
                rows.append(("fabric", "", p, s, 1000 * scale * (1 + s / 10) * (1.03 + 0.001 * s), 0.1))
        write_runs(d, rows)
        buf = io.StringIO()
        assert report_of(d, dict(base), buf)["OUT"] == 2, buf.getvalue()
        assert "95% interval over seeds" in buf.getvalue()
        buf = io.StringIO()
        assert report_of(d, dict(base, jct_tol=4.0), buf)["OUT"] == 0, buf.getvalue()
        # bad input: exit 2 with a message, nothing else
        for argv in ([os.path.join(d, "nowhere")], [d, "--candidate", "nobody"], [d, "--jct-tol", "x"], [d, "--bogus"]):
            err = io.StringIO()
            assert main(argv, io.StringIO(), err) == 2 and err.getvalue().startswith("fabric_accuracy: "), argv
    print("fabric_accuracy.py self-test: ok")


def main(argv, out=sys.stdout, err=sys.stderr):
    try:
        folder, args = parse(argv)
        counts = report(*analyse(*load(folder), args), args, out)
    except BadInput as e:
        print(f"fabric_accuracy: {e}", file=err)
        return 2
    return 1 if args["strict"] and (counts["OUT"] or counts["missing"]) else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
