#!/usr/bin/env python3
"""Seed corpora for fleetsim's libFuzzer harnesses, and the two ways to run them (tests/fuzz/README.md).

  fuzz.py seeds HARNESS OUT [--shared DIR]   write HARNESS's seed inputs into the folder OUT
  fuzz.py run [HARNESS...] --seconds N       fuzz each harness N seconds (libFuzzer binaries of the fuzz
          [--build DIR] [--corpus DIR]       tree, default build-fuzz/tests/fuzz); one summary line each;
          [--jobs J] [--keep-going]          exit 1 at the first crash (its input and a command to
                                             reproduce it are printed)
  fuzz.py replay HARNESS --binary B          run the kept crash inputs (regressions/HARNESS/) and the
                                             repository's seeds once through B (a fuzz_<h>_replay
                                             binary of the normal build; ctest fuzz_replay_<h>)

Seeds come from the repository (scenarios/, tests/data/, tests/bench/, small inputs written here) and,
when --shared names it (run: ../shared/data by default, if present), from the shared real data: never
copied into the repository, only into a temporary folder at run time. Inputs that take settings and a
file are "<TOML settings>\\n%%\\n<file bytes>"; "@SRC@" in settings is the repository's root.
"""
import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HARNESSES = ["job_trace", "request_trace", "fault_trace", "kineto", "model_config", "scenario", "sweep"]
# Longest input each harness is given (libFuzzer -max_len): files a reader sees are small, so that
# a run is mostly mutations of structure, not of a long tail.
MAX_LEN = {"kineto": 65536, "fault_trace": 32768}
DEFAULT_MAX_LEN = 16384
SEP = "\n%%\n"


def head_lines(path, lines=200, limit=12000):
    """The first `lines` lines of a text file (at most `limit` bytes, cut at a line end)."""
    out = []
    size = 0
    with open(path, "rb") as f:
        for i, line in enumerate(f):
            if i >= lines or size + len(line) > limit:
                break
            out.append(line)
            size += len(line)
    return b"".join(out)


def toml_section(text, name):
    """The body of [name] and its [name.*] sub-tables from scenario text (header of [name] dropped)."""
    out, inside = [], False
    for line in text.splitlines():
        m = re.match(r"\s*\[\[?\s*([A-Za-z0-9_.\-]+)\s*\]\]?", line)
        if m:
            table = m.group(1)
            inside = table == name or table.startswith(name + ".")
            if table == name:
                continue
        if inside:
            out.append(line)
    return "\n".join(out) + "\n"


def src_path(p):
    """A path as a seed writes it: @SRC@/... inside the repository, else absolute."""
    p = Path(p).resolve()
    try:
        return "@SRC@/" + str(p.relative_to(ROOT))
    except ValueError:
        return str(p)


def settings_and_file(section, folder, path_key="path"):
    """Split a [workload]-like section: its path key's file becomes the file part; other path-like
    values that name existing files are rewritten to @SRC@/... (or absolute) paths."""
    file_bytes = b""
    kept = []
    for line in section.splitlines():
        m = re.match(r'\s*([A-Za-z0-9_]+)\s*=\s*"([^"]*)"', line)
        if m and (folder / m.group(2)).exists():
            target = folder / m.group(2)
            if m.group(1) == path_key:
                if target.is_file():
                    file_bytes = head_lines(target)
                continue
            line = '%s = "%s"' % (m.group(1), src_path(target))
        elif m and m.group(1) == path_key:
            continue
        kept.append(line)
    return "\n".join(kept).strip() + "\n", file_bytes


def both(settings, file_bytes=b""):
    return settings.encode() + SEP.encode() + file_bytes


def scenario_files():
    files = sorted((ROOT / "scenarios").glob("*.toml")) + sorted((ROOT / "tests/bench").glob("*.toml"))
    return [f for f in files if not f.name.endswith(".sweep.toml")]


def seeds_job_trace(shared):
    out = {}
    for f in scenario_files():
        sec = toml_section(f.read_text(), "workload")
        if "format" in sec:
            s, b = settings_and_file(sec, f.parent)
            out["scenario-" + f.stem] = both(s, b)
    data = ROOT / "tests/data/workloads"
    out["csv-jobs-small"] = both(
        'format = "csv"\ntime_format = "%Y-%m-%d %H:%M:%S"\n[workload.columns]\nsubmit = "start"\n'
        'duration = "runtime_s"\ngpus = "num_gpus"\nid = "job_id"\nuser = "vc"\ngpu_type = "gpu model"\n'
        'model = "note"\n', (data / "jobs_small.csv").read_bytes())
    out["openb-small"] = both('format = "openb"\n', (data / "openb_small.csv").read_bytes())
    out["openb-notimes"] = both('format = "openb"\n', (data / "openb_notimes.csv").read_bytes())
    out["philly-small"] = both(
        'format = "philly-gavel"\nthroughputs = "%s"\n' % src_path(data / "throughputs_small.json"),
        (data / "philly_small.trace").read_bytes())
    out["pollux-small"] = both('format = "pollux"\n', (ROOT / "tests/data/pollux/workload.csv").read_bytes())
    out["llm-synthetic"] = both('format = "llm-synthetic"\njobs = 20\n')
    if shared:
        traces = shared / "traces"
        for f in sorted((traces / "alibaba-gpu-2023").glob("openb_pod_list_*.csv")):
            out["shared-" + f.stem] = both('format = "openb"\n', head_lines(f))
        gavel = shared / "throughputs/gavel_simulation_throughputs.json"
        for f in sorted((traces / "philly-gavel-vc").glob("*")):
            if f.is_file():
                out["shared-philly-" + f.stem] = both(
                    'format = "philly-gavel"\nthroughputs = "%s"\n' % gavel, head_lines(f))
        for f in sorted((traces / "pollux-workloads").glob("*.csv"))[:4]:
            out["shared-pollux-" + f.stem] = both('format = "pollux"\n', head_lines(f))
    return out


def seeds_request_trace(shared):
    out = {
        "llmservingsim": both('format = "llmservingsim"\n',
                              b'{"input_toks": 12, "output_toks": 5, "arrival_time_ns": 1000}\n'
                              b'{"input_toks": 40, "output_toks": 9, "arrival_time_ns": 250000000,'
                              b' "input_tok_ids": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]}\n'),
        "llmservingsim-run": both('format = "llmservingsim"\n',
                                  b'{"request_id": "a", "input_toks": 12, "output_toks": 5, "queued_ts": 10.5}\n'
                                  b'{"request_id": "b", "input_toks": 30, "output_toks": 2, "queued_ts": 11.25}\n'),
        "azure": both('format = "azure"\n', b"TIMESTAMP,ContextTokens,GeneratedTokens\n"
                      b"2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109\n"),
        "mooncake": both('format = "mooncake"\n',
                         b'{"timestamp": 0, "input_length": 700, "output_length": 12, "hash_ids": [0, 1]}\n'
                         b'{"timestamp": 27, "input_length": 1200, "output_length": 3, "hash_ids": [0, 2, 3]}\n'),
        "generator": both('format = "generator"\nrequests = 20\nrate_per_s = 4\ninput_tokens = 100\n'
                          'input_tokens_sd = 20\noutput_tokens = 30\noutput_tokens_sd = 5\narrival = "gamma"\n'
                          'arrival_cv = 2\n'),
    }
    for f in scenario_files():
        sec = toml_section(f.read_text(), "service.requests")
        if "format" in sec:
            s, b = settings_and_file(sec, f.parent)
            out["scenario-" + f.stem] = both(s, b)
    if shared:
        serving = shared / "serving"
        for f in sorted(serving.rglob("*.jsonl"))[:6]:
            fmt = "mooncake" if "mooncake" in str(f) else "llmservingsim"
            out["shared-" + f.parent.name + "-" + f.stem] = both('format = "%s"\n' % fmt, head_lines(f, 40))
        for f in sorted(serving.rglob("*.csv")):
            if "azure" in str(f):
                out["shared-" + f.stem] = both('format = "azure"\n', head_lines(f, 60))
    return out


def seeds_fault_trace(shared):
    events = [
        {"node_id": "n1", "event_time": 0.5, "event_type": "fault_start",
         "fault_type": {"Level": "L1", "Class": "GPU", "Desc": "XID 79"}},
        {"node_id": "n2", "event_time": 1.0, "event_type": "fault_start",
         "fault_type": {"Level": "L2", "Class": "Parameter Plane Cable", "Desc": "link down"}},
        {"node_id": "n1", "event_time": 1.25, "event_type": "fault_end",
         "fault_type": {"Level": "L1", "Class": "GPU", "Desc": "XID 79"}},
    ]
    out = {
        "stepfun-small": json.dumps(events, indent=1).encode(),
        "csv-small": b"node,start,end,component\nn1,10,20,gpu\nn2,30,45.5,nic\n# comment\nn1,50,60,hbm\n",
    }
    if shared:
        f = shared / "faults/stepfun-infinitehbd/fault_trace.json"
        if f.exists():
            doc = json.loads(f.read_text())
            out["shared-stepfun-first-60"] = json.dumps(doc[:60], indent=1).encode()
    return out


def seeds_kineto(shared):
    out = {"repo-" + f.stem: f.read_bytes() for f in sorted((ROOT / "tests/data/kineto").glob("*.json"))}
    out["repo-two-streams-gz"] = gzip.compress(
        (ROOT / "tests/data/kineto/two_streams_event_wait.json").read_bytes(), mtime=0)
    if shared:
        for f in sorted((shared / "kineto").rglob("*.json.gz")):
            if f.stat().st_size < 200_000:
                out["shared-" + f.name] = f.read_bytes()
                text = gzip.decompress(f.read_bytes())
                if len(text) <= MAX_LEN["kineto"]:
                    out["shared-" + f.stem] = text
    return out


def seeds_model_config(shared):
    files = sorted((ROOT / "tests/data/llm").glob("*.json")) + sorted((ROOT / "tests/data/serving").glob("*.json"))
    files += sorted((ROOT / "scenarios/llm").glob("*.json"))
    if shared:
        files += sorted((shared / "llm/neusight/configs").glob("*.json"))
        files += sorted((shared / "serving").rglob("configs/model/**/*.json"))
    return {("shared-" if shared and shared in f.parents else "repo-") + f.stem: f.read_bytes() for f in files}


def absolute_paths(text, folder):
    """Scenario text with each quoted value that names an existing file or folder (relative to
    `folder`) made absolute: the harness loads scenarios from a scratch folder."""
    def fix(m):
        target = folder / m.group(2)
        return m.group(1) + '"%s"' % target.resolve() if m.group(2) and target.exists() else m.group(0)
    return re.sub(r'(?m)^(\s*[A-Za-z0-9_]+\s*=\s*)"([^"]*)"', fix, text)


def seeds_scenario(shared):
    return {"scenario-" + f.stem: absolute_paths(f.read_text(), f.parent).encode() for f in scenario_files()}


def seeds_sweep(shared):
    out = {}
    for f in sorted((ROOT / "scenarios").glob("*.sweep.toml")):
        text = re.sub(r'(?m)^base\s*=\s*"[^"]*"', 'base = "base.toml"', f.read_text())
        out["sweep-" + f.stem.replace(".sweep", "")] = text.encode()
    out["sweep-tiny"] = (b'base = "base.toml"\nseeds = [1, 2]\nmetrics = ["jct_mean_s"]\n[grid]\n'
                         b'"scheduler.policy" = ["fifo", "sjf"]\n"cluster.pool.0.nodes" = [1, 2]\n')
    return out


def write_seeds(harness, out, shared):
    out.mkdir(parents=True, exist_ok=True)
    seeds = globals()["seeds_" + harness](shared)
    for name, data in seeds.items():
        (out / name).write_bytes(data)
    return len(seeds)


def shared_dir(arg):
    if arg == "none":
        return None
    p = (Path(arg) if arg else ROOT.parent / "shared/data").resolve()
    return p if p.is_dir() else None


def fuzz_env():
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:allocator_may_return_null=1")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    symbolizer = shutil.which("llvm-symbolizer-19") or shutil.which("llvm-symbolizer")
    if symbolizer:
        env.setdefault("ASAN_SYMBOLIZER_PATH", symbolizer)
    return env


def run_one(harness, args, shared):
    binary = Path(args.build) / ("fuzz_" + harness)
    if not binary.exists():
        sys.exit("fuzz.py: %s not found (build it: bash scripts/build.sh build-fuzz fuzz)" % binary)
    with tempfile.TemporaryDirectory(prefix="fleetsim-fuzz-") as tmp:
        seeds = Path(tmp) / "seeds"
        n = write_seeds(harness, seeds, shared)
        corpus = Path(args.corpus) / harness if args.corpus else Path(tmp) / "corpus"
        corpus.mkdir(parents=True, exist_ok=True)
        artifacts = Path(args.artifacts).resolve() / harness
        artifacts.mkdir(parents=True, exist_ok=True)
        cmd = [str(binary), "-max_total_time=%d" % args.seconds,
               "-max_len=%d" % MAX_LEN.get(harness, DEFAULT_MAX_LEN), "-timeout=%d" % args.timeout,
               "-rss_limit_mb=%d" % args.rss_limit_mb, "-print_final_stats=1",
               "-artifact_prefix=%s/" % artifacts, str(corpus), str(seeds)]
        if (ROOT / "tests/fuzz/regressions" / harness).is_dir():
            cmd.append(str(ROOT / "tests/fuzz/regressions" / harness))
        if args.jobs > 1:
            cmd[1:1] = ["-fork=%d" % args.jobs]
        t0 = time.time()
        p = subprocess.run(cmd, env=fuzz_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace")
        wall = time.time() - t0
    log = p.stdout
    execs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", log)
    status = [l for l in log.splitlines() if re.match(r"#\d+\s", l) and " cov: " in l]
    last = status[-1] if status else ""
    cov = re.search(r"cov: (\d+)", last)
    ft = re.search(r"ft: (\d+)", last)
    corp = re.search(r"corp: (\d+)", last)
    runs = int(execs[-1]) if execs else int(re.match(r"#(\d+)", last).group(1)) if last else 0
    summary = "fuzz_%s: %d runs in %.0f s (%.0f/s), cov %s, ft %s, corpus %s (%d seeds)" % (
        harness, runs, wall, runs / max(wall, 1e-9), cov.group(1) if cov else "?", ft.group(1) if ft else "?",
        corp.group(1) if corp else "?", n)
    if p.returncode != 0:
        tail = "\n".join(log.splitlines()[-60:])
        crash = re.findall(r"Test unit written to (\S+)", log)
        print(tail)
        print("%s: CRASH (exit %d)" % (summary, p.returncode))
        for c in crash:
            print("  input: %s\n  reproduce: %s %s" % (c, binary, c))
        return False
    print(summary + ", no crash", flush=True)
    if args.log:
        Path(args.log).parent.mkdir(parents=True, exist_ok=True)
        with open(args.log, "a") as f:
            f.write(summary + "\n")
    return True


def cmd_run(args):
    shared = shared_dir(args.shared)
    ok = True
    for h in args.harness or HARNESSES:
        if h not in HARNESSES:
            sys.exit("fuzz.py: unknown harness '%s'; valid: %s" % (h, ", ".join(HARNESSES)))
        if not run_one(h, args, shared):
            ok = False
            if not args.keep_going:
                break
    return 0 if ok else 1


def cmd_replay(args):
    with tempfile.TemporaryDirectory(prefix="fleetsim-replay-") as tmp:
        seeds = Path(tmp) / "seeds"
        write_seeds(args.harness, seeds, None)
        inputs = [str(seeds)]
        reg = ROOT / "tests/fuzz/regressions" / args.harness
        if reg.is_dir():
            inputs.append(str(reg))
        p = subprocess.run([args.binary] + inputs, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace")
        print(p.stdout[-8000:])
        return p.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("seeds")
    s.add_argument("harness", choices=HARNESSES)
    s.add_argument("out")
    s.add_argument("--shared", default="none", help="shared data folder (default: none)")
    r = sub.add_parser("run")
    r.add_argument("harness", nargs="*")
    r.add_argument("--seconds", type=int, default=5)
    r.add_argument("--build", default=str(ROOT / "build-fuzz/tests/fuzz"))
    r.add_argument("--corpus", default="", help="keep each harness's corpus in CORPUS/<harness> (default: a "
                   "temporary folder)")
    r.add_argument("--artifacts", default=str(ROOT / "build-fuzz/fuzz-artifacts"))
    r.add_argument("--shared", default="", help="shared data folder (default ../shared/data; 'none': no)")
    r.add_argument("--jobs", type=int, default=1, help="libFuzzer -fork=J worker processes")
    r.add_argument("--timeout", type=int, default=20, help="seconds one input may take (a hang is a finding)")
    r.add_argument("--rss-limit-mb", type=int, default=2048)
    r.add_argument("--keep-going", action="store_true", help="go on to the next harness after a crash")
    r.add_argument("--log", default="", help="append the summary lines to this file")
    p = sub.add_parser("replay")
    p.add_argument("harness", choices=HARNESSES)
    p.add_argument("--binary", required=True)
    args = ap.parse_args()
    if args.cmd == "seeds":
        n = write_seeds(args.harness, Path(args.out), shared_dir(args.shared))
        print("%d seeds in %s" % (n, args.out))
        return 0
    if args.cmd == "run":
        return cmd_run(args)
    return cmd_replay(args)


if __name__ == "__main__":
    sys.exit(main())
