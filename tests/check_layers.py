#!/usr/bin/env python3
"""Fails when an include points the wrong way between fleetsim's layers (issue 12).

Layers, lowest first: workloads/base (helpers; includes nothing of ours) -> workloads -> models
(pure: no SimGrid) -> sim. Inside sim/, each sub-folder may include only the folders listed in
SIM_ALLOWED (its own folder always), and that table must itself be acyclic.

Usage: check_layers.py [ROOT]   (exit 1 and one line per offending include)
"""
import pathlib
import re
import sys

SIM_ALLOWED = {
    "platform": set(),
    "cluster": {"platform"},
    "engine": {"platform", "cluster"},
    "scheduling/placement": {"cluster"},
    "scheduling/policies": {"cluster", "engine"},
    "metrics": {"platform", "engine"},
    "network": {"platform", "engine", "metrics"},
    "failures": {"platform", "cluster", "engine"},
    "replay": {"platform"},
    "serving": {"cluster", "engine", "metrics"},
    "app": {"platform", "cluster", "engine", "scheduling/placement", "scheduling/policies", "metrics",
            "network", "failures", "replay", "serving"},
    "cli": {"platform", "cluster", "engine", "scheduling/placement", "scheduling/policies", "metrics",
            "network", "failures", "replay", "serving", "app"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def sim_folder(rel):
    """'sim/scheduling/policies/x.cpp' -> 'scheduling/policies'; 'sim/engine/y.hpp' -> 'engine'."""
    parts = rel.split("/")[1:-1]
    if parts and parts[0] == "scheduling" and len(parts) > 1:
        return "scheduling/" + parts[1]
    return parts[0] if parts else ""


def layer(rel):
    if rel.startswith("workloads/base/"):
        return "base"
    return rel.split("/")[0]


def violations(root):
    out = []
    for path in sorted(root.glob("**/*")):
        if path.suffix not in (".cpp", ".hpp") or "build" in path.parts[len(root.parts):][:1]:
            continue
        rel = path.relative_to(root).as_posix()
        src = layer(rel)
        if src not in ("base", "workloads", "models", "sim"):
            continue
        for inc in INCLUDE.findall(path.read_text(errors="replace")):
            dst = layer(inc) if inc.split("/")[0] in ("workloads", "models", "sim") else None
            why = None
            if src == "models" and inc.startswith("simgrid/"):
                why = "models/ is pure: no SimGrid"
            elif src in ("base", "workloads") and inc.startswith("simgrid/"):
                why = f"{src} may not use SimGrid"
            elif dst is None:
                continue
            elif src == "base" and dst != "base":
                why = "workloads/base includes nothing of ours"
            elif src == "workloads" and dst in ("models", "sim"):
                why = "workloads/ may include only workloads/ and workloads/base"
            elif src == "models" and dst == "sim":
                why = "models/ may not include sim/"
            elif src == "sim" and dst == "sim":
                a, b = sim_folder(rel), sim_folder(inc)
                if a != b and b not in SIM_ALLOWED.get(a, set()):
                    why = f"sim/{a} may not include sim/{b} (allowed: {sorted(SIM_ALLOWED.get(a, set()))})"
            if why:
                out.append(f"{rel}: #include \"{inc}\": {why}")
    return out


def acyclic(graph):
    state = {}

    def visit(n):
        if state.get(n) == 1:
            return False
        if state.get(n) == 2:
            return True
        state[n] = 1
        ok = all(visit(m) for m in graph.get(n, ()))
        state[n] = 2
        return ok

    return all(visit(n) for n in graph)


def self_test():
    """The checker must catch a back-edge of each kind (a test that cannot fail is a defect)."""
    import tempfile
    cases = {
        "models/m.hpp": '#include "sim/engine/simulation.hpp"',
        "workloads/jobs/w.hpp": '#include "models/job/job_model.hpp"',
        "workloads/base/b.hpp": '#include "workloads/jobs/job.hpp"',
        "models/k.cpp": "#include <simgrid/s4u/Engine.hpp>",
        "sim/engine/e.cpp": '#include "sim/network/network_hook.hpp"',
        "sim/platform/p.hpp": '#include "sim/cluster/cluster_state.hpp"',
    }
    for rel, line in cases.items():
        with tempfile.TemporaryDirectory() as d:
            f = pathlib.Path(d) / rel
            f.parent.mkdir(parents=True)
            f.write_text(line + "\n")
            if len(violations(pathlib.Path(d))) != 1:
                print(f"self-test: {rel} with {line} not flagged")
                return 1
    print(f"check_layers self-test: {len(cases)} back-edges flagged")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[1])
    if not acyclic(SIM_ALLOWED):
        print("check_layers: SIM_ALLOWED has a cycle")
        return 1
    unknown = {sim_folder(p.relative_to(root).as_posix()) for p in (root / "sim").glob("**/*.[ch]pp")}
    unknown -= set(SIM_ALLOWED)
    if unknown:
        print(f"check_layers: sim/ folders without a rule: {sorted(unknown)}")
        return 1
    bad = violations(root)
    for line in bad:
        print(line)
    print(f"check_layers: {len(bad)} include(s) against the layering")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
