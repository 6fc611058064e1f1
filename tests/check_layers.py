#!/usr/bin/env python3
"""Fails when an include points the wrong way between fleetsim's folders. It fails closed.

Layers, lowest first: workloads/base (helpers) -> workloads/* -> models/* (pure: no SimGrid) -> sim/*.
Every folder holding C++ is a unit of ALLOWED below, which lists the units it may include (its own
always). The check fails on:
  - an include of ours that its unit's row does not allow;
  - SimGrid included outside sim/;
  - C++ in a folder that has no row (a new folder, at any depth or at the top, needs a rule first);
  - a row allowing an edge no include uses (the table says exactly what the code does);
  - a row pointing down the layer order (models/* allowed sim/*, ...), or a cycle in the table.
tests/ may include anything; scripts/ (the CUDA suite) nothing of ours.

Usage: check_layers.py [ROOT]      exit 1 and one line per problem
       check_layers.py --self-test plants one problem of each kind and checks each is caught
"""
import pathlib
import re
import sys

ALLOWED = {
    "workloads/base": set(),
    "workloads/throughputs": {"workloads/base"},
    "workloads/jobs": {"workloads/base", "workloads/throughputs"},
    "workloads/profiler": {"workloads/base"},
    "workloads/requests": {"workloads/base"},
    "workloads/faults": {"workloads/base"},
    "models/hardware": {"workloads/base"},
    "models/reliability": set(),
    "models/kernel": {"workloads/base", "models/hardware"},
    "models/collective": {"workloads/base", "models/hardware"},
    "models/calibration": {"workloads/base", "models/kernel", "models/collective"},
    "models/serving": {"workloads/base", "models/collective"},
    "models/llm": {"workloads/base", "models/hardware", "models/kernel", "models/collective"},
    "models/job": {"workloads/base", "workloads/jobs", "workloads/throughputs", "models/hardware",
                   "models/kernel", "models/collective", "models/calibration", "models/llm"},
    "sim/platform": {"workloads/base", "models/hardware"},
    "sim/cluster": {"workloads/base", "workloads/jobs", "models/hardware", "sim/platform"},
    "sim/engine": {"workloads/base", "workloads/jobs", "models/job", "sim/platform", "sim/cluster"},
    "sim/scheduling/placement": {"workloads/base", "sim/cluster"},
    "sim/scheduling/policies": {"workloads/base", "models/job", "sim/cluster", "sim/engine"},
    "sim/metrics": {"workloads/base", "models/hardware", "sim/platform", "sim/engine"},
    "sim/network": {"workloads/base", "models/hardware", "models/collective", "sim/platform", "sim/engine",
                    "sim/metrics"},
    "sim/failures": {"workloads/base", "workloads/faults", "models/reliability", "sim/cluster", "sim/engine"},
    "sim/replay": {"workloads/base", "workloads/profiler", "models/hardware", "models/kernel", "models/job",
                   "sim/platform"},
    "sim/serving": {"workloads/base", "workloads/requests", "models/hardware", "models/collective",
                    "models/serving", "sim/platform", "sim/cluster", "sim/engine", "sim/metrics"},
    "sim/app": {"workloads/base", "workloads/jobs", "workloads/requests", "workloads/faults", "models/hardware",
                "models/kernel", "models/collective", "models/job", "sim/platform", "sim/cluster", "sim/engine",
                "sim/metrics", "sim/network", "sim/failures", "sim/serving"},
    "sim/experiments": {"workloads/base", "models/job", "sim/platform", "sim/cluster", "sim/engine", "sim/app"},
    "sim/diagnosis": {"workloads/base", "workloads/profiler", "models/hardware", "models/kernel", "sim/replay",
                      "sim/app"},
    "sim/cli": {"workloads/base", "workloads/jobs", "workloads/profiler", "workloads/throughputs",
                "models/hardware", "models/kernel", "models/collective", "models/calibration", "models/job",
                "models/llm", "sim/cluster", "sim/engine", "sim/metrics", "sim/replay", "sim/serving", "sim/app",
                "sim/experiments", "sim/diagnosis"},
}
OURS = ("workloads", "models", "sim")
FREE = {"tests"}        # may include anything of ours
SEALED = {"scripts"}    # may include nothing of ours
SIMGRID = ("simgrid/", "xbt/", "smpi/")
CXX = {".cpp", ".hpp", ".h", ".cc", ".cu", ".cuh"}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def rank(unit):
    """Layer order: workloads/base 0, workloads/* 1, models/* 2, sim/* 3."""
    if unit == "workloads/base":
        return 0
    return {"workloads": 1, "models": 2, "sim": 3}[unit.split("/")[0]]


def unit_of(folder, table):
    """The longest unit of `table` that `folder` (a/b/c) lies in; None when no row covers it."""
    parts = folder.split("/")
    for n in range(len(parts), 0, -1):
        cand = "/".join(parts[:n])
        if cand in table:
            return cand
    return None


def sources(root):
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.suffix not in CXX or not path.is_file():
            continue
        if rel.parts[0].startswith(("build", ".")):
            continue
        yield rel.as_posix(), path


def scan(root, table):
    """(problems, used edges): problems for includes and folders; the edges the code uses."""
    problems, used = [], set()
    for rel, path in sources(root):
        top = rel.split("/")[0]
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        if top in FREE:
            continue
        src = unit_of(folder, table) if top in OURS else None
        if top not in SEALED and src is None:
            problems.append(f"{rel}: folder '{folder or '.'}' has no rule in ALLOWED (add its row first)")
            continue
        for inc in INCLUDE.findall(path.read_text(errors="replace")):
            if inc.startswith(SIMGRID):
                if top != "sim":
                    problems.append(f"{rel}: #include <{inc}>: only sim/ may use SimGrid")
                continue
            if inc.split("/")[0] not in OURS:
                continue
            if top in SEALED:
                problems.append(f"{rel}: #include \"{inc}\": {top}/ may include nothing of ours")
                continue
            dst = unit_of(inc.rsplit("/", 1)[0], table)
            if dst is None:
                problems.append(f"{rel}: #include \"{inc}\": its folder has no rule in ALLOWED")
            elif dst != src:
                used.add((src, dst))
                if dst not in table[src]:
                    problems.append(f"{rel}: #include \"{inc}\": {src} may not include {dst} "
                                    f"(allowed: {sorted(table[src])})")
    return problems, used


def table_problems(table):
    out = []
    for a, bs in sorted(table.items()):
        for b in sorted(bs):
            if b not in table:
                out.append(f"ALLOWED[{a}] names '{b}', which has no row")
            elif rank(b) > rank(a):
                out.append(f"ALLOWED[{a}] allows {b}, which is above it in the layer order")
    state = {}

    def visit(n, path):
        state[n] = 1
        for m in sorted(table.get(n, ())):
            if state.get(m) == 1:
                out.append("ALLOWED has a cycle: " + " -> ".join(path[path.index(m):] + [m]))
            elif m in table and state.get(m) is None:
                visit(m, path + [m])
        state[n] = 2

    for n in sorted(table):
        if state.get(n) is None:
            visit(n, [n])
    return out


def unused(table, used):
    return [f"ALLOWED[{a}] allows {b}, but no include uses it (remove it)"
            for a, bs in sorted(table.items()) for b in sorted(bs) if (a, b) not in used]


def check(root, table):
    problems, used = scan(root, table)
    return table_problems(table) + problems + unused(table, used)


def self_test():
    """Each planted problem must be reported, and only it (a test that cannot fail is a defect)."""
    import tempfile
    mini = {"workloads/base": set(), "workloads/jobs": {"workloads/base"}, "models/job": {"workloads/jobs"},
            "models/llm": set(), "sim/engine": {"models/job"}, "sim/network": {"sim/engine"}}
    clean = {"workloads/base/b.hpp": "", "workloads/jobs/j.hpp": '#include "workloads/base/b.hpp"',
             "models/job/m.hpp": '#include "workloads/jobs/j.hpp"', "models/llm/l.hpp": "",
             "sim/engine/e.hpp": '#include "models/job/m.hpp"\n#include <simgrid/s4u.hpp>',
             "sim/network/n.hpp": '#include "sim/engine/e.hpp"', "tests/t.cpp": '#include "sim/network/n.hpp"',
             "scripts/calibrate/c.cpp": '#include "common.hpp"'}
    plants = {  # name: (extra files, table change, text the one report must contain)
        "models -> sim": ({"models/job/x.cpp": '#include "sim/engine/e.hpp"'}, None, "models/job may not"),
        "workloads -> models": ({"workloads/jobs/x.cpp": '#include "models/job/m.hpp"'}, None, "may not"),
        "base -> workloads": ({"workloads/base/x.cpp": '#include "workloads/jobs/j.hpp"'}, None, "may not"),
        "sim sub-folder back-edge": ({"sim/engine/x.cpp": '#include "sim/network/n.hpp"'}, None, "may not"),
        "models sub-folder": ({"models/llm/x.cpp": '#include "models/job/m.hpp"'}, None, "models/llm may not"),
        "models SimGrid": ({"models/llm/x.cpp": "#include <simgrid/s4u/Engine.hpp>"}, None, "only sim/"),
        "workloads SimGrid": ({"workloads/jobs/x.cpp": "#include <xbt/log.h>"}, None, "only sim/"),
        "scripts include ours": ({"scripts/calibrate/x.cpp": '#include "models/job/m.hpp"'}, None, "nothing"),
        "new sim folder": ({"sim/newfeature/x.cpp": ""}, None, "has no rule"),
        "new top folder": ({"lib/x.cpp": ""}, None, "has no rule"),
        "include of a folder without rule": ({"sim/network/x.cpp": '#include "sim/other/y.hpp"'}, None,
                                             "its folder has no rule"),
        "unused edge": ({}, ("sim/network", "models/job"), "no include uses it"),
        "edge against the layer order": ({}, ("models/llm", "sim/engine"), "above it in the layer order"),
        "cycle": ({}, ("models/job", "models/llm"), None),
    }
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        for rel, text in clean.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text + "\n")
        if check(root, mini):
            print("self-test: the clean tree is reported:", check(root, mini))
            return 1
    for name, (files, edge, want) in plants.items():
        table = {k: set(v) for k, v in mini.items()}
        if name == "cycle":  # models/job -> models/llm -> models/job, both used
            table["models/job"].add("models/llm")
            table["models/llm"].add("models/job")
            files = {"models/job/x.cpp": '#include "models/llm/l.hpp"',
                     "models/llm/x.cpp": '#include "models/job/m.hpp"'}
            want = "cycle"
        elif edge:
            table[edge[0]].add(edge[1])
            if name == "edge against the layer order":
                files = {"models/llm/x.cpp": '#include "sim/engine/e.hpp"'}
        with tempfile.TemporaryDirectory() as d:
            root = pathlib.Path(d)
            for rel, text in {**clean, **files}.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text + "\n")
            got = check(root, table)
        if len(got) != 1 or want not in got[0]:
            print(f"self-test: planted '{name}': expected one report containing '{want}', got {got}")
            return 1
    print(f"check_layers self-test: {len(plants)} planted problems each caught alone; the clean tree passes")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[1])
    bad = check(root, ALLOWED)
    for line in bad:
        print(line)
    print(f"check_layers: {len(bad)} problem(s) against the layering ({len(ALLOWED)} folders with rules)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
