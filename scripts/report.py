#!/usr/bin/env python3
"""One self-contained HTML report of fleetsim output folders.

Usage: scripts/report.py DIR [DIR ...] --out report.html   (what `fleetsim report` runs)
       scripts/report.py --self-test

Each DIR is a run folder (summary.json + jobs.csv: `fleetsim run`), a compare folder (comparison.csv:
`fleetsim compare`), a sweep folder (aggregate.csv + runs.csv: `fleetsim sweep`) or a diagnosis folder
(summary.json + findings.csv + breakdown.csv: `fleetsim diagnose`; scripts/report_diagnosis.py). The page holds,
per folder: the scenario, headline metrics (with 95% intervals), JCT/wait CDFs, utilization and queue
over time (run, compare), metric-vs-swept-key plots with confidence bands and the paired comparisons
(sweep), and where present serving SLOs, failures and energy/cost. Plots are PNG embedded as base64;
no network access, no external JS or CSS. Uses matplotlib and pandas (Debian).

Exit codes: 0 written; 2 bad input (a missing folder, a folder none of run/compare/sweep, an unreadable
file in it), with no output file written (the page goes through a temporary file renamed into place).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # report_*.py beside this file

from report_input import BadInput  # noqa: E402  (after the path above)


def kind_of(folder):
    if not os.path.isdir(folder):
        raise BadInput(f"{folder}: no such folder")

    def has(*names):
        return all(os.path.isfile(os.path.join(folder, n)) for n in names)

    if has("aggregate.csv", "runs.csv"):
        return "sweep"
    if has("comparison.csv"):
        return "compare"
    if has("summary.json", "findings.csv", "breakdown.csv"):
        return "diagnosis"
    if has("summary.json", "jobs.csv"):
        return "run"
    raise BadInput(f"{folder}: not a fleetsim output folder: a run has summary.json and jobs.csv, a compare "
                   "comparison.csv, a sweep aggregate.csv and runs.csv, a diagnosis findings.csv and breakdown.csv")


def build(folders):
    kinds = [kind_of(f) for f in folders]  # every folder checked before matplotlib is even loaded
    import report_diagnosis
    import report_html as H
    import report_run
    import report_sweep

    parts_of = {"run": report_run.run_part, "compare": report_run.compare_part, "sweep": report_sweep.sweep_part,
                "diagnosis": report_diagnosis.diagnosis_part}
    parts, toc = [], []
    for i, (folder, kind) in enumerate(zip(folders, kinds)):
        prefix = f"f{i}"
        try:
            body = parts_of[kind](folder, prefix)
        except BadInput:
            raise  # names the file, line and column
        except Exception as e:  # no traceback for a folder the checks above let through
            raise BadInput(f"{folder}: cannot read this {kind} folder: {type(e).__name__}: {e}") from e
        title = f"{kind}: {folder}"
        toc.append((prefix, title))
        parts.append(f'<h2 id="{prefix}" data-kind="{kind}">{H.esc(title)}</h2>' + "".join(body))
    return H.page("fleetsim report", parts, toc)


def write(path, text):
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise BadInput(f"{path}: cannot write the report: {e}") from e


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(prog="report.py", description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+", metavar="DIR", help="run, compare or sweep output folder")
    ap.add_argument("--out", required=True, help="the HTML file to write")
    a = ap.parse_args(argv[1:])
    try:
        write(a.out, build([os.path.normpath(d) for d in a.dirs]))
    except BadInput as e:
        print(f"fleetsim report: error: {e}", file=sys.stderr)
        return 2
    print(f"fleetsim report: {a.out} ({os.path.getsize(a.out) // 1024} KiB, {len(a.dirs)} folder(s))")
    return 0


# ---------------------------------------------------------------------------------------------------
# Self-test: synthetic run and sweep folders, the sections and embedded images, no http(s) reference,
# and exit 2 with no output file on bad input.

def fake_run(d, seed=1, services=False, failures=False):
    import random
    rnd = random.Random(seed)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "jobs.csv"), "w") as f:
        f.write("job_id,submit_s,start_s,end_s,wait_s,jct_s,gpus,gpu_type,nodes,restarts,preempted_s\n")
        for i in range(40):
            w, r = rnd.expovariate(1 / 600), rnd.expovariate(1 / 3600)
            f.write(f"job-{i},{i * 60},{i * 60 + w},{i * 60 + w + r},{w},{w + r},1,A100,1,0,0\n")
    with open(os.path.join(d, "timeseries.csv"), "w") as f:
        f.write("time_s,busy_gpus,running_jobs,queued_jobs,completed_jobs\n")
        for t in range(20):
            f.write(f"{t * 600},{rnd.randint(0, 8)},{rnd.randint(0, 4)},{rnd.randint(0, 5)},{t}\n")
    summary = {"scenario": "s.toml", "policy": "fifo", "placement": "consolidate", "seed": seed, "jobs": 40,
               "completed": 40, "mean_jct_s": 4000.0 + seed, "p99_jct_s": 9000.0, "mean_wait_s": 600.0,
               "gpu_utilization": 0.5, "energy_kwh": 12.5, "cost": 1.5, "total_gpus": 8}
    if services:
        summary["services"] = {"chat": {"requests": 3, "completed": 3, "ttft_p99_s": 0.2, "slo_ttft_s": 0.5,
                                        "slo_attainment": 1.0}}
        with open(os.path.join(d, "requests.csv"), "w") as f:
            f.write("service,request_id,arrival_s,first_token_s,end_s,ttft_s,tpot_s,e2e_s\n")
            for i in range(3):
                f.write(f"chat,{i},{i},{i + 0.1},{i + 1},{0.1 + i / 10},0.01,{1 + i}\n")
    if failures:
        summary["failures"] = {"node_failures": 1, "lost_gpu_hours": {"total": 2.0}}
        with open(os.path.join(d, "failures.csv"), "w") as f:
            f.write("time_s,event,node,nodes,component,jobs_hit,gpu_hours_lost,repaired_s\n"
                    "100,failure,3,1,gpu,1,2,900\n900,repair,3,1,,0,0,900\n")
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(summary, f)


def fake_diagnosis(d):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump({"diagnosis": {"jobs": 2}, "rerun": {"jobs_changed": 8, "mean_jct_s": {
            "baseline": 7200.0, "fixed": 6000.0, "change": -1 / 6}}}, f)
    with open(os.path.join(d, "findings.csv"), "w") as f:
        f.write("job,rule,value,threshold,unit,evidence,fix,estimate,simulated,measured_step_s,baseline_step_s,"
                "predicted_step_s,speedup,not_simulated\n"
                "stall,input_stall,0.09,0.05,share of step,DataLoader,prefetch,prediction,true,0.0011,0.0011,0.001,1.1,\n"
                "idle,low_utilization,0.3,0.5,share of step,busy 30%,,,false,0.001,0.001,,,a symptom\n")
    with open(os.path.join(d, "breakdown.csv"), "w") as f:
        f.write("job,rank,step_s,step_compute_s,step_communication_s,step_memory_s,step_idle_s,step_overlap_s\n"
                "stall,0,0.0011,0.0009,0,0,0.0002,0\nidle,0,0.001,0.0003,0,0,0.0007,0\n")
    with open(os.path.join(d, "fixes.csv"), "w") as f:
        f.write("rank,fix,estimate,jobs,gpu_hours,gpu_hours_saved,share_of_fleet_gpu_hours\n"
                "1,input_stall,prediction,8,704,64,0.06\n2,exposed_communication,upper bound,1,8,1,0.001\n")


def fake_sweep(d):
    runs = ["run,combination,scheduler.policy,cluster.pool.0.nodes,seed,status,error,scenario_hash,mean_jct_s"]
    agg = ["combination,scheduler.policy,cluster.pool.0.nodes,metric,n,mean,std,ci95,min,max"]
    paired = ["key,setting,baseline,context,metric,n,mean_diff,ci95_diff,mean_rel_pct,ci95_rel_pct"]
    c = 0
    for pol in ["fifo", "las"]:
        for nodes in [10, 14]:
            for s in (1, 2):
                rid = f"c{c:03d}-s{s}"
                fake_run(os.path.join(d, "runs", rid), seed=s)
                runs.append(f"{rid},c{c:03d},{pol},{nodes},{s},ok,,abc,{4000 + s}")
            for m, mean in [("mean_jct_s", 4000 + 100 * c), ("gpu_utilization", 0.5 + c / 20), ("energy_kwh", 12)]:
                agg.append(f"c{c:03d},{pol},{nodes},{m},2,{mean},10,{mean / 10},{mean - 1},{mean + 1}")
            c += 1
    with open(os.path.join(d, "runs", "c000-s1", "scenario.toml"), "w") as f:
        f.write('seed = 1\n[scheduler]\npolicy = "fifo"\n')
    paired.append("scheduler.policy,las,fifo,cluster.pool.0.nodes=10,mean_jct_s,2,200,50,5,1.2")
    paired.append("scheduler.policy,fifo,fifo,cluster.pool.0.nodes=10,mean_jct_s,2,0,0,0,0")
    for name, lines in [("runs.csv", runs), ("aggregate.csv", agg), ("paired.csv", paired)]:
        with open(os.path.join(d, name), "w") as f:
            f.write("\n".join(lines) + "\n")


def self_test():
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        run, sweep, out = os.path.join(tmp, "run"), os.path.join(tmp, "sweep"), os.path.join(tmp, "r.html")
        fake_run(run, services=True, failures=True)
        fake_sweep(sweep)
        diag = os.path.join(tmp, "diag")
        fake_diagnosis(diag)
        rc = main(["report.py", run, sweep, diag, "--out", out])
        check(rc == 0, f"exit {rc} on good folders")
        text = open(out, encoding="utf-8").read() if os.path.exists(out) else ""
        for sid in ["scenario", "headline", "cdf", "timeseries", "serving", "failures", "energy", "lines",
                    "paired", "runs", "fixes", "breakdown", "findings", "rerun"]:
            check(f'data-section="{sid}"' in text, f"section {sid} missing")
        check(text.count("data:image/png;base64,") >= 8, "fewer than 8 embedded PNG images")
        check("input_stall" in text and "1.100x (prediction)" in text, "diagnosis finding or speedup not shown")
        check("http://" not in text and "https://" not in text, "an http(s):// reference in the page")
        check("<script" not in text and "<link" not in text, "a script or link element in the page")
        check("1.111 ± 0.1111 h" in text, "sweep mean ± CI (4000 ± 400 s) not shown")
        check('class="sig"' in text, "significant paired row not marked")
        bad_out = os.path.join(tmp, "bad.html")
        os.makedirs(os.path.join(tmp, "empty"))
        for bad in [os.path.join(tmp, "nope"), os.path.join(tmp, "empty")]:
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), run, bad, "--out", bad_out],
                                  capture_output=True, text=True)
            check(proc.returncode == 2, f"{bad}: exit {proc.returncode}, expected 2")
            check(bad in proc.stderr, f"{bad}: the error does not name the folder: {proc.stderr!r}")
            check(not os.path.exists(bad_out), f"{bad}: an output file was written")
        # Damaged files in a run folder (issue 40): the error names the file and line, no traceback.
        damages = [("jobs.csv", lambda t: t + t.splitlines()[0] + "\n", "jobs.csv:42: repeats the header"),
                   ("jobs.csv", lambda t: t.replace(",1,A100,", ",gpus,A100,", 1), "jobs.csv:2: column 'gpus'"),
                   ("timeseries.csv", lambda t: t.replace("\n600,", "\nsoon,", 1), "timeseries.csv:3: column 'time_s'"),
                   ("requests.csv", lambda t: t.replace("ttft_s", "ttft", 1), "requests.csv: no column 'ttft_s'"),
                   ("summary.json", lambda t: t[:-5], "summary.json: not readable JSON"),
                   ("jobs.csv", lambda t: t + '"unclosed,1\n', "jobs.csv: not a readable CSV table")]
        for k, (name, damage, expected) in enumerate(damages):
            bad = os.path.join(tmp, f"damaged{k}")
            fake_run(bad, services=True)
            with open(os.path.join(bad, name)) as f:
                text = f.read()
            with open(os.path.join(bad, name), "w") as f:
                f.write(damage(text))
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), bad, "--out", bad_out],
                                  capture_output=True, text=True)
            check(proc.returncode == 2, f"{name} damaged: exit {proc.returncode}, expected 2")
            check(expected in proc.stderr and os.path.join(bad, name) in proc.stderr,
                  f"{name} damaged: expected '{expected}' naming the file, got {proc.stderr!r}")
            check("Traceback" not in proc.stderr, f"{name} damaged: a Python traceback")
            check(not os.path.exists(bad_out), f"{name} damaged: an output file was written")
    for f in failures:
        print(f"report.py self-test: {f}", file=sys.stderr)
    if not failures:
        print("report.py self-test: run + sweep report and bad input (exit 2) ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
