#!/usr/bin/env bash
# One command on a fresh machine: install what is missing, build the fleetsim program (only that
# target, without optimisation: it compiles fastest; no tests, no benchmarks), then compare two schedulers on the quickstart scenario (a
# synthetic workload fleetsim generates itself) and plot the results.
# Usage: scripts/quickstart.sh [OUT_DIR]   (default: results/quickstart)
# About 5 minutes on 2 idle cores the first time (about 2 min of packages, clang-19 included, then
# about 3 min compiling 228 files with clang and precompiled headers); seconds after that.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="${1:-$ROOT/results/quickstart}"
BUILD="$ROOT/build-quick"
START=$SECONDS
stage() { printf '\n== quickstart %s  (%d s so far)\n' "$1" $((SECONDS - START)); }

echo "fleetsim quickstart: setup, build the simulator, compare two schedulers, plot."
echo "The first run takes about 5 minutes on 2 idle cores (packages, then compiling 228 files); later runs take seconds."

FLEETSIM="$BUILD/fleetsim"
if [ -n "${FLEETSIM_QUICKSTART_BIN:-}" ]; then  # scripts/test.sh: an already built program, no setup
  FLEETSIM="$FLEETSIM_QUICKSTART_BIN"
else
  stage "1/4 setup: checking the Debian packages (scripts/setup.sh; installs only what is missing)"
  bash scripts/setup.sh --quick

  stage "2/4 configure and build (scripts/build.sh): the fleetsim program only, [step/total] per step"
  bash scripts/build.sh "$BUILD" quick fleetsim
fi

stage "3/4 run: the same 2000 jobs on the same 144 GPUs under two schedulers (fleetsim compare)"
"$FLEETSIM" compare scenarios/quickstart.toml --policies fifo,las --out "$OUT" --no-plot
cat <<'EOF'

  How to read it: one workload (scenarios/quickstart.toml), one cluster, two schedulers.
    fifo  starts jobs strictly in arrival order: a large job at the head holds up all behind it.
    las   least attained service: runs the jobs that have had the least GPU time so far and
          preempts the others (restarts), so short jobs no longer queue behind long ones. Its
          "wait" is the time to a job's first start; JCT includes the time spent preempted.
    util %       GPU-time allocated / (GPUs x makespan): the whole run, including the tail where
                 the last long jobs finish on an emptying cluster.
    busy util %  the same over the busy window only: from the first arrival until no job arrives
                 or waits any more.
EOF

stage "4/4 plots (matplotlib)"
# each policy's run folder, as comparison.csv's run_dir column names it (runs/<id>/)
run_dir() {
  /usr/bin/python3 -c 'import csv, sys
print(next(r["run_dir"] for r in csv.DictReader(open(sys.argv[1])) if r["policy"] == sys.argv[2]))' \
    "$OUT/comparison.csv" "$1"
}
FIFO="$OUT/$(run_dir fifo)"
LAS="$OUT/$(run_dir las)"
/usr/bin/python3 scripts/plot_compare.py "$OUT" >/dev/null
/usr/bin/python3 scripts/plot.py "$FIFO" "$LAS" >/dev/null
echo "  $OUT/comparison.png      bars of every metric, fifo vs las"
echo "  $OUT/jct_cdf.png         job completion time CDFs"
echo "  $FIFO/utilization.png    busy GPUs over time"
echo "  $FIFO/queue.png          queued and running jobs over time"
echo "  each run's jobs.csv, timeseries.csv, summary.json in $FIFO/ and $LAS/"
printf '\nquickstart: done in %d s. Next: build-quick/fleetsim run scenarios/quickstart.toml --set KEY=VALUE\n' \
  $((SECONDS - START))
echo "(see README.md, \"Use\"). For large runs build the optimised program: scripts/build.sh build Release"
echo "fleetsim (build/fleetsim, about 3x faster); scripts/test.sh builds it and runs every test."
