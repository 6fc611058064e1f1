#!/usr/bin/env python3
"""The fabric fidelity's accuracy checks on the shared Philly VCs: runs tests/validation/fabric-vs-network-philly.sweep.toml
(the fabric fidelity against seven network variants) and scripts/fabric_accuracy.py on it.

Usage: check_fabric_accuracy.py FLEETSIM PROJECT_ROOT
Exit 77 (skipped, said on stdout) without ../shared/data's Philly traces; 1 if a check is OUT, if a mean
JCT is more than 2% off the reference ensemble's mean, or if a check is missing.
"""
import os
import subprocess
import sys
import tempfile


def main(fleetsim, root):
    traces = [os.path.join(root, "..", "shared", "data", "traces", "philly-gavel-vc", f"{t}.trace")
              for t in ("2869ce", "6214e9")]
    missing = [t for t in traces if not os.path.exists(t)]
    if missing:
        print(f"SKIPPED: needs the shared Philly traces ({', '.join(os.path.normpath(t) for t in missing)} absent)")
        return 77
    sys.path.insert(0, os.path.join(root, "scripts"))
    import fabric_accuracy

    with tempfile.TemporaryDirectory() as out:
        sweep = [fleetsim, "sweep", "tests/validation/fabric-vs-network-philly.sweep.toml", "--out", out, "--jobs",
                 str(os.cpu_count() or 2)]
        run = subprocess.run(sweep, cwd=root, capture_output=True, text=True)
        if run.returncode != 0:
            print(run.stdout[-4000:], run.stderr[-4000:])
            return 1
        args = fabric_accuracy.parse([out])[1]
        refs, checks = fabric_accuracy.analyse(*fabric_accuracy.load(out), args)
    fabric_accuracy.report(refs, checks, args)
    failed = []
    if len(refs) != 7:
        failed.append(f"7 reference cases expected, got {refs}")
    # 2 traces x 2 placements x 2 oversubscriptions x (JCT, leaf uplinks, NICs), and the effects that are
    # not zero: placement at 2:1 and 4:1 on each trace, 2:1 -> 4:1 under first-fit on each and under
    # topology on 6214e9 (topology keeps 2869ce's jobs inside leaves: no effect)
    if len(checks) != 24 + 7:
        failed.append(f"{len(checks)} checks, 31 expected")
    failed += [f"{c[0]} {c[1]}: {c[2]:+.2f} {c[6]}" for c in checks if c[6] in ("OUT", "missing")]
    failed += [f"mean JCT {c[1]}: {c[2]:+.2f}% (2% required, whatever the reference's spread)"
               for c in checks if c[0] == "mean_jct_s" and c[6] != "ok"]
    for f in failed:
        print("FAILED:", f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
